// Host helpers shared by the shape-sweep benchmarks (softmax_rows.cu,
// softmax_cluster.cu, reduce_sum_shapes.cu): the three element types'
// conversions from and to float, their names and oprt dtypes, the filter of
// their comma-separated options, and a parallel loop for their references.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "operator_runtime/api.h"

template <typename T>
T from_float(float f);
template <>
inline float from_float<float>(float f) { return f; }
template <>
inline __half from_float<__half>(float f) { return __float2half_rn(f); }
template <>
inline __nv_bfloat16 from_float<__nv_bfloat16>(float f) { return __float2bfloat16_rn(f); }
inline float to_float(float f) { return f; }
inline float to_float(__half h) { return __half2float(h); }
inline float to_float(__nv_bfloat16 b) { return __bfloat162float(b); }

template <typename T>
const char *dtype_name() {
    return sizeof(T) == 4 ? "f32" : std::is_same<T, __half>::value ? "f16" : "bf16";
}
template <typename T>
oprt_dtype_t dtype_enum() {
    return sizeof(T) == 4 ? OPRT_DTYPE_F32 : std::is_same<T, __half>::value ? OPRT_DTYPE_F16 : OPRT_DTYPE_BF16;
}

// Whether `item` is one of the comma-separated items of csv (an empty csv lists everything).
inline bool listed(const std::string &csv, const std::string &item) {
    if (csv.empty()) return true;
    size_t start = 0;
    while (start <= csv.size()) {
        const size_t end = csv.find(',', start);
        if (csv.substr(start, end == std::string::npos ? std::string::npos : end - start) == item) return true;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return false;
}

// f(begin, end, part) over [0, n) split across the host's cores, in parts of
// at least `grain` items.
template <typename F>
void parallel_for(int64_t n, F f, int64_t grain = 4096) {
    const int64_t parts =
        std::max<int64_t>(1, std::min<int64_t>(std::thread::hardware_concurrency(), n / grain + 1));
    std::vector<std::thread> threads;
    for (int64_t k = 0; k < parts; ++k) threads.emplace_back(f, n * k / parts, n * (k + 1) / parts, k);
    for (auto &t : threads) t.join();
}
