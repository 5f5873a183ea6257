// Timing shared by the hand-run GPU benchmarks of this folder: a CUDA error
// check that exits, and the time of one launch measured the way the project's
// harness measures (docs/performance.md): many launches captured in one
// CUDA graph, the graph replayed several times between CUDA events, the median.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                      \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            std::exit(1);                                                          \
        }                                                                          \
    } while (0)

// Seconds per call of launch() (which enqueues one operation on `s`): one call
// first (module loading, attributes), then `launches` calls captured in a
// graph, replayed `replays` times; the median replay over `launches`.
template <typename F>
double graph_seconds_per_launch(F launch, cudaStream_t s, int launches = 20, int replays = 7) {
    launch();
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < launches; ++i) launch();
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, s));  // one replay to warm up
    CK(cudaStreamSynchronize(s));
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    std::vector<float> ms;
    for (int r = 0; r < replays; ++r) {
        CK(cudaEventRecord(t0, s));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaEventRecord(t1, s));
        CK(cudaEventSynchronize(t1));
        float m = 0;
        CK(cudaEventElapsedTime(&m, t0, t1));
        ms.push_back(m / float(launches));
    }
    CK(cudaEventDestroy(t0));
    CK(cudaEventDestroy(t1));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e-3;
}
