// The problem a matmul kernel solves: C[i][j] = sum_p A[i][p] * B[p][j] (f32 accumulation).
// Strides are in elements; any of them may be 1 (which operand is contiguous along what
// decides which kernels apply). Plain data, shared by host and device code.
#pragma once

#include <cstdint>

namespace oprt::matmul {
struct GemmArgs {
    int64_t m = 0, n = 0, k = 0;
    const void *a = nullptr;
    int64_t a_row = 0, a_col = 0;  // A[i][p] at a + i * a_row + p * a_col
    const void *b = nullptr;
    int64_t b_row = 0, b_col = 0;  // B[p][j] at b + p * b_row + j * b_col
    void *c = nullptr;
    int64_t c_row = 0, c_col = 0;  // C[i][j] at c + i * c_row + j * c_col
};
}  // namespace oprt::matmul
