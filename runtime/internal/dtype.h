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

// Without branches, so loops over f16 arrays vectorize (selects become
// blends): the CPU's first-axis sum of (65536, 1024) f16 went from 2.7 to 4.7
// GB/s, a one-file f16 add loop from 1.5 to 2.5 GB/s (baseline x86-64; 3.9
// with AVX2). Both directions give the bits the branchy forms did for every
// input (checked over all 2^16 and 2^32 of them; tests/cpp/cpu_ops_test.cc
// checks against an independent decoder).
inline float f16_to_f32(f16_t h) {
    const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
    const uint32_t magnitude = h.bits & 0x7fffu;                 // exponent and mantissa
    const uint32_t normal = (magnitude << 13) + (112u << 23);    // exponent bias 15 -> 127
    const uint32_t inf_nan = normal + (112u << 23);              // exponent 31 -> 255, payload kept
    const uint32_t subnormal = f32_to_bits(float(int32_t(magnitude)) * 5.9604644775390625e-8f);  // mant * 2^-24, exact
    const uint32_t bits = magnitude >= 0x7c00u ? inf_nan : magnitude >= 0x0400u ? normal : subnormal;
    return bits_to_f32(sign | bits);
}

// Also without branches: every case is worked out and one is selected.
inline f16_t f32_to_f16(float f) {
    const uint32_t u = f32_to_bits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t abs = u & 0x7fffffffu;
    // Normal half: rebias the exponent, round the 13 dropped mantissa bits to
    // nearest even (meaningless, and not selected, below the normal range).
    uint32_t v = abs - 0x38000000u;  // exponent bias 127 -> 15
    v += 0xfffu + ((v >> 13) & 1u);
    const uint32_t normal = v >> 13;
    // Subnormal half (or zero): scale so the half ulp (2^-24) becomes 1.0 and
    // let the f32 adder round to nearest even; the integer is the low bits of
    // 2^23 + scaled (larger inputs are replaced by 0 first: no overflow).
    const bool small = abs < 0x38800000u;
    const float scaled = bits_to_f32(small ? abs : 0u) * 16777216.0f;  // * 2^24
    const uint32_t subnormal = f32_to_bits(scaled + 8388608.0f) - 0x4b000000u;
    const uint32_t bits = abs > 0x7f800000u   ? 0x7e00u  // NaN
                          : abs >= 0x477ff000u ? 0x7c00u  // rounds to inf
                          : small              ? subnormal
                                               : normal;
    return f16_t{uint16_t(sign | bits)};
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
