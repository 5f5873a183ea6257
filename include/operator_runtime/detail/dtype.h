// Element types on the host: sizes, names and the f16/bf16 <-> f32
// conversions the CPU backend uses (round to nearest even, NaN kept NaN).
// Device code uses its toolchain's own half/bf16 types instead.
#pragma once

#include <cstdint>
#include <cstring>

#include "operator_runtime/api.h"

namespace oprt {

inline bool dtype_is_valid(int dtype) {
    return dtype == OPRT_DTYPE_F16 || dtype == OPRT_DTYPE_F32 || dtype == OPRT_DTYPE_BF16;
}

inline int64_t dtype_size(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 2; }

// Storage types: 16-bit floats are kept as their raw bits on the host.
struct f16_t { uint16_t bits; };
struct bf16_t { uint16_t bits; };

inline float bits_to_f32(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
inline uint32_t f32_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float bf16_to_f32(bf16_t h) { return bits_to_f32(uint32_t(h.bits) << 16); }

inline bf16_t f32_to_bf16(float f) {
    uint32_t u = f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bf16_t{uint16_t((u >> 16) | 0x40)};  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
    return bf16_t{uint16_t(u >> 16)};
}

inline float f16_to_f32(f16_t h) {
    const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
    const uint32_t exp = (h.bits >> 10) & 0x1fu;
    const uint32_t mant = h.bits & 0x3ffu;
    if (exp == 0x1f) return bits_to_f32(sign | 0x7f800000u | (mant << 13));  // inf / NaN
    if (exp != 0) return bits_to_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    // Zero or subnormal: mant * 2^-24, exact in f32.
    const float magnitude = float(mant) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
}

inline f16_t f32_to_f16(float f) {
    const uint32_t u = f32_to_bits(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    const uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return f16_t{uint16_t(sign | 0x7e00u)};  // NaN
    if (abs >= 0x477ff000u) return f16_t{uint16_t(sign | 0x7c00u)};  // rounds to inf
    if (abs < 0x38800000u) {
        // Subnormal half (or zero): scale so the half ulp (2^-24) becomes 1.0
        // and let the f32 adder round to nearest even.
        const float scaled = bits_to_f32(abs) * 16777216.0f;  // * 2^24
        const float rounded = (scaled + 8388608.0f) - 8388608.0f;  // rint for [0, 2^23)
        return f16_t{uint16_t(sign | uint16_t(rounded))};
    }
    // Normal half: rebias the exponent, round the 13 dropped mantissa bits.
    uint32_t v = abs - 0x38000000u;  // exponent bias 127 -> 15
    v += 0xfffu + ((v >> 13) & 1u);
    return f16_t{uint16_t(sign | uint16_t(v >> 13))};
}

// Load/store in f32 whatever the storage type: the CPU kernels are written
// once against these overloads.
inline float to_f32(float v) { return v; }
inline float to_f32(f16_t v) { return f16_to_f32(v); }
inline float to_f32(bf16_t v) { return bf16_to_f32(v); }

template <typename T> inline T from_f32(float v);
template <> inline float from_f32<float>(float v) { return v; }
template <> inline f16_t from_f32<f16_t>(float v) { return f32_to_f16(v); }
template <> inline bf16_t from_f32<bf16_t>(float v) { return f32_to_bf16(v); }

}  // namespace oprt
