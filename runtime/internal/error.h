// Failure reporting: every public entry point returns a status and, on
// failure, leaves a thread-local message naming the operator, the argument
// and the value.
#pragma once

#include <cstring>

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

// The value of a C enum argument as an int. A C caller may pass any int in an
// enum parameter or field; reading it as the C++ enum would be undefined for
// values outside the enumerators, so its bytes are copied. Taken by reference:
// a copy of the parameter would itself be such a read.
template <typename Enum>
int enum_value(const Enum &e) {
    int v;
    static_assert(sizeof v == sizeof e, "C enums are int-sized");
    std::memcpy(&v, &e, sizeof v);
    return v;
}

}  // namespace oprt
