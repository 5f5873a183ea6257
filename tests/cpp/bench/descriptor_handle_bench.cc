// What a checked descriptor handle costs per call: the table lookup alone
// (runtime/handles.cc compiled in), and a whole execute of a one-element copy
// on the CPU for scale. Not a test: build target camp_handle_bench, run it and
// read the ns per call (docs/reliability.md quotes it).
#include <chrono>
#include <cstdio>
#include <vector>

#include "operator_runtime/operator_runtime.h"
#include "runtime/internal/handles.h"

// handles.cc reports a failed lookup through the library's fail(); the bench
// never fails a lookup, and keeps the library's own copy of api.cc its only one.
namespace oprt {
oprt_status_t fail(oprt_status_t status, const char *, ...) { return status; }
}  // namespace oprt

namespace {

template <typename F>
double ns_per_call(F f, int calls) {
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) f(i);
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
    }
    return best;
}

}  // namespace

int main() {
    static const char kind = 0;
    int object = 0;
    std::vector<uint64_t> handles;
    for (int i = 0; i < 64; ++i) handles.push_back(oprt::handle_insert(&kind, "bench", &object));
    volatile uintptr_t sink = 0;
    const double lookup = ns_per_call(
        [&](int i) {
            oprt::HandleMiss miss;
            sink = sink + reinterpret_cast<uintptr_t>(oprt::handle_lookup(handles[size_t(i & 63)], &kind, &miss));
        },
        20000000);

    oprt_set_backend(OPRT_BACKEND_CPU);
    float src = 1.0f, dst = 0.0f;
    oprt_tensor_view_t v = {};
    v.dtype = OPRT_DTYPE_F32;
    v.ndim = 1;
    v.shape[0] = 1;
    v.strides[0] = 1;
    oprt_copy_descriptor_t desc = nullptr;
    if (oprt_create_copy_descriptor(&desc, &v, &v) != OPRT_SUCCESS) return 1;
    const double execute = ns_per_call(
        [&](int) { oprt_execute_copy(desc, nullptr, 0, &dst, &src, nullptr); }, 5000000);
    oprt_destroy_copy_descriptor(desc);
    std::printf("handle lookup: %.2f ns per call\nexecute of a 1-element copy (lookup included): %.1f ns per call\n",
                lookup, execute);
    return 0;
}
