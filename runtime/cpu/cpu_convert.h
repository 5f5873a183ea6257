// Arrays of 16-bit floats to and from f32 on the CPU, for loops that widen a
// block of values, do their math in f32 and round once on the way out.
// f16 uses the F16C instructions (8 values an instruction) where the CPU has
// them, else dtype.h's branch-free scalar forms; bf16 is a shift each way (and
// the rounding), vectorized for AVX-512, AVX2 and baseline x86-64 (clones).
// Every path gives dtype.h's bits, except that a NaN may keep more of its
// payload (it stays NaN).
#pragma once

#include <cstdint>

#include "runtime/internal/dtype.h"

namespace oprt::cpu {

void widen(const f16_t *in, float *out, int64_t n);
void narrow(const float *in, f16_t *out, int64_t n);
void widen(const bf16_t *in, float *out, int64_t n);
void narrow(const float *in, bf16_t *out, int64_t n);

// acc[i] += in[i] in f32: a row added into running sums without a buffer.
void add_widened(const f16_t *in, float *acc, int64_t n);

// The two f16 paths by name, for the tests (f16c ones only where has_f16c()).
bool has_f16c();
void widen_f16_portable(const f16_t *in, float *out, int64_t n);
void narrow_f16_portable(const float *in, f16_t *out, int64_t n);
void widen_f16_f16c(const f16_t *in, float *out, int64_t n);
void narrow_f16_f16c(const float *in, f16_t *out, int64_t n);
void add_widened_f16_portable(const f16_t *in, float *acc, int64_t n);
void add_widened_f16_f16c(const f16_t *in, float *acc, int64_t n);

}  // namespace oprt::cpu
