/* Operator runtime: the backend-agnostic contract shared by every operator.
 *
 * Every public function returns an oprt_status_t. On failure it also sets a
 * thread-local message (oprt_last_error_message) naming the operator, the
 * argument and the offending value. */
#ifndef OPERATOR_RUNTIME_API_H_
#define OPERATOR_RUNTIME_API_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define OPRT_API __declspec(dllexport)
#else
#define OPRT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    OPRT_SUCCESS = 0,
    OPRT_ERR_INVALID_ARG = 1,
    OPRT_ERR_UNSUPPORTED_DTYPE = 2,
    OPRT_ERR_RUNTIME = 3,
    OPRT_ERR_INSUFFICIENT_WORKSPACE = 4,
    OPRT_ERR_NOT_SUPPORTED = 5,
    OPRT_ERR_BACKEND_UNAVAILABLE = 6
} oprt_status_t;

typedef enum {
    OPRT_DTYPE_F16 = 0,
    OPRT_DTYPE_F32 = 1,
    OPRT_DTYPE_BF16 = 2
} oprt_dtype_t;

typedef enum {
    OPRT_BACKEND_AUTO = 0,   /* where the data lives: a GPU backend for device memory, else CPU */
    OPRT_BACKEND_NVIDIA = 1,
    OPRT_BACKEND_METAX = 2,
    OPRT_BACKEND_CPU = 3
} oprt_backend_t;

#define OPRT_MAX_DIMS 8

/* A strided view of memory owned by the caller. Strides count elements, not
 * bytes, and must be >= 0; a stride of 0 on an input broadcasts that dim.
 * ndim == 0 is a scalar (one element). */
typedef struct {
    void *data;
    oprt_dtype_t dtype;
    int32_t ndim;
    int64_t shape[OPRT_MAX_DIMS];
    int64_t strides[OPRT_MAX_DIMS];
} oprt_tensor_view_t;

/* A backend stream (cudaStream_t on NVIDIA, mcStream_t on MetaX); NULL is the
 * default stream. The CPU backend ignores it and runs synchronously. */
typedef void *oprt_stream_t;

/* The library's version, "MAJOR.MINOR.PATCH": the project(VERSION) of the
 * top-level CMakeLists.txt, which is also operator_runtime.__version__ in
 * Python and the version of the CMake package operator_runtime. */
OPRT_API const char *oprt_version(void);

OPRT_API const char *oprt_status_string(oprt_status_t status);
OPRT_API const char *oprt_backend_string(oprt_backend_t backend);
OPRT_API const char *oprt_dtype_string(oprt_dtype_t dtype);

/* The current backend is per thread (default OPRT_BACKEND_AUTO): setting it on
 * one thread changes nothing on another. A descriptor records the backend
 * current when it is created and always runs there, whichever thread executes it.
 *
 * Threads: a descriptor is read-only after creation. Any number of threads may
 * execute one descriptor (and query its workspace size) at the same time, on
 * the GPU on as many streams, provided each call has its own output and its own
 * workspace; the results are bit for bit those of one thread. The CPU backend
 * runs in the calling thread, helped by the library's thread pool (see
 * oprt_set_num_threads) while no other call uses it. Creating and destroying
 * different descriptors from different threads is safe; destroying one must not
 * race with another call on it (kernels already launched do not need it). The
 * error message (oprt_last_error_message) is per thread as well.
 *
 * Descriptors are checked handles: a destroyed descriptor (destroying it again
 * included), a descriptor of another operator, or a value no create returned
 * is OPRT_ERR_INVALID_ARG in every call that takes one.
 *
 * fork(): a child process runs every operator on the CPU backend; it gets a
 * new thread pool of its own (the parent's workers do not survive a fork), so
 * CPU kernels run on as many threads there as in the parent. The GPU backends
 * do not support a CUDA context across fork. */
OPRT_API oprt_status_t oprt_set_backend(oprt_backend_t backend);
OPRT_API oprt_status_t oprt_get_backend(oprt_backend_t *backend);

/* *available = 1 when the backend is compiled into this library and a device
 * for it is present (CPU: always; AUTO: always, it falls back to CPU). */
OPRT_API oprt_status_t oprt_backend_is_available(oprt_backend_t backend, int *available);

/* The CPU backend's threads, process-wide: a call large enough (tens of thousands
 * of elements) is split over up to n threads, the calling one included; their
 * sleeping workers never spin, and a call never waits for one that has not started,
 * so busy cores slow it down to one thread's speed at worst. n = 0 restores the
 * default, the number of CPUs this process may run on; n = 1 runs every call in the
 * calling thread alone. OPRT_ERR_INVALID_ARG for n < 0 or n > OPRT_MAX_THREADS.
 * The results do not depend on n beyond rounding (reduce_sum joins partial sums
 * per thread count). oprt_get_num_threads gives the count calls use now. */
#define OPRT_MAX_THREADS 1024
OPRT_API oprt_status_t oprt_set_num_threads(int n);
OPRT_API oprt_status_t oprt_get_num_threads(int *n);

/* The message of the last failure on this thread ("" when none yet). */
OPRT_API const char *oprt_last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* OPERATOR_RUNTIME_API_H_ */
