// Failure reporting: every public entry point returns a status and, on
// failure, leaves a thread-local message naming the operator, the argument
// and the value.
#pragma once

#include "operator_runtime/api.h"

namespace oprt {

// Records the message (printf-style) for oprt_last_error_message and returns
// `status`, so call sites read `return fail(OPRT_ERR_INVALID_ARG, "...", ...)`.
oprt_status_t fail(oprt_status_t status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// Clears the message at the start of a successful call sequence.
void clear_error();

}  // namespace oprt
