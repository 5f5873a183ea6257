// Math for CPU kernels written so the compiler can vectorize it: no libm
// calls and no branches in the element loops.
#pragma once

#include <cstdint>
#include <cstring>

namespace oprt::cpu {

// exp(x) for f32 within ~2 ulp: x = n*ln2 + r with |r| <= ln2/2, exp(r) by a
// degree-7 Taylor polynomial, 2^n assembled in the exponent bits. Exact
// limits: exp(-inf) = 0, exp(+inf) = inf, NaN stays NaN.
inline float exp_f32(float x) {
    const float kLog2e = 1.44269504088896341f;
    const float kLn2Hi = 0.693145751953125f, kLn2Lo = 1.428606765330187045e-06f;
    const float xc = x > -87.0f ? (x < 88.0f ? x : 88.0f) : -87.0f;  // NaN -> -87: n stays in range
    const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer, branch-free
    const float n = (xc * kLog2e + kRound) - kRound;
    const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = (int32_t(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    float y = p * scale;
    y = x < -87.0f ? 0.0f : y;                      // underflow (and -inf) to 0
    y = x > 88.0f ? __builtin_inff() : y;            // overflow (and +inf) to inf
    return x != x ? x : y;                           // NaN in, NaN out
}

}  // namespace oprt::cpu
