// oprt_version(): the project(VERSION) of CMakeLists.txt, through the header
// that cmake/install.cmake configures (operator_runtime/version.h).
#include "operator_runtime/api.h"
#include "operator_runtime/version.h"

extern "C" const char *oprt_version(void) { return OPRT_VERSION_STRING; }
