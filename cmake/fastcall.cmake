# operator_runtime._fastcall (python/native/fastcall.c): the plan cache's hit path in C, a
# CPython extension module that makes a repeated one-shot call (relu(x) on a layout seen
# before) one C call. Built when Python's development headers are found (Debian:
# python3-dev); without them the package runs the same calls through ctypes, a few
# microseconds slower, and operator_runtime.fast_call_info() says why.
#
# It does not link libcamp_ops.so (Python hands it the C entry points' addresses) nor
# numpy or torch (buffer protocol and attribute reads). In a wheel built by a Python >= 3.12
# it uses the stable ABI (one _fastcall.abi3.so for every later Python: pyproject.toml's
# wheel.py-api = "cp312"); elsewhere it is built for the running Python
# (_fastcall.cpython-311-x86_64-linux-gnu.so, ...). Outside a wheel it stays in the build
# folder, next to libcamp_ops.so, where a source checkout finds both (_native.py).
# Not built for a project that adds this tree with add_subdirectory (unless asked for).
option(CAMP_BUILD_FASTCALL "Build the Python extension module _fastcall when Python headers are found"
       ${PROJECT_IS_TOP_LEVEL})
if(NOT CAMP_BUILD_FASTCALL)
  return()
endif()

find_package(Python3 COMPONENTS Interpreter Development.Module)
if(NOT Python3_Development.Module_FOUND)
  message(STATUS "operator_runtime: Python development headers not found (Debian: apt-get install "
                 "python3-dev): the _fastcall module is not built; one-shot calls go through ctypes")
  return()
endif()

Python3_add_library(camp_fastcall MODULE ${PROJECT_SOURCE_DIR}/python/native/fastcall.c)
set_target_properties(camp_fastcall PROPERTIES
  OUTPUT_NAME _fastcall
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  C_STANDARD 11
  C_VISIBILITY_PRESET hidden)
target_compile_options(camp_fastcall PRIVATE -Wall -Wextra -Wno-unused-parameter -Wno-cast-function-type)
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  # The execute entry points are called through one generic pointer type per input count
  # (their pointer arguments as void *, as ctypes calls them): not a type UBSan's
  # function check (Clang, CAMP_SANITIZE=undefined) should compare.
  target_compile_options(camp_fastcall PRIVATE -fno-sanitize=function)
endif()
if(SKBUILD_SABI_VERSION)  # set by scikit-build-core when the wheel is abi3 (py-api cp312)
  target_compile_definitions(camp_fastcall PRIVATE Py_LIMITED_API=0x030C0000)
  set_target_properties(camp_fastcall PROPERTIES SUFFIX ".abi3.so")
else()
  set_target_properties(camp_fastcall PROPERTIES SUFFIX ".${Python3_SOABI}.so")
endif()
message(STATUS "operator_runtime: _fastcall module for Python ${Python3_VERSION} (${Python3_EXECUTABLE})")

if(SKBUILD)
  install(TARGETS camp_fastcall LIBRARY DESTINATION operator_runtime)
endif()
