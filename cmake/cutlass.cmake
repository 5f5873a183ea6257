# CuTe kernels in the NVIDIA build (included by cmake/nvidia.cmake).
#
# CAMP_ENABLE_CUTE: OFF never looks for CUTLASS; AUTO builds the CuTe kernels when the
# headers are found or can be fetched; ON does the same but stops with an error when they
# cannot be had. The headers come from the first of:
#   1. CAMP_CUTLASS_ROOT: a CUTLASS tree (ROOT/include/cute) or an include dir (ROOT/cute);
#   2. third_party/cutlass (git-ignored), e.g. left there by an earlier configure;
#   3. a fetch into third_party/cutlass from PyPI (the nvidia-cutlass wheel, headers only,
#      by scripts/gpu/fetch_cutlass_headers.py): no git at build time. A machine without a
#      package index gets the folder copied from one that has it (about 28 MB).
# With CuTe, camp_ops and the tests get OPRT_WITH_CUTE and the ops/*/nvidia/cute/*.cu files.
string(TOUPPER "${CAMP_ENABLE_CUTE}" _cute_mode)
if(NOT _cute_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "CAMP_ENABLE_CUTE=${CAMP_ENABLE_CUTE}: use AUTO, ON or OFF")
endif()
set(CAMP_WITH_CUTE OFF)
if(_cute_mode STREQUAL "OFF")
  message(STATUS "CuTe: off (CAMP_ENABLE_CUTE=OFF)")
  return()
endif()

function(_camp_cutlass_include root out)
  set(${out} "" PARENT_SCOPE)
  if(EXISTS "${root}/include/cute/tensor.hpp" AND EXISTS "${root}/include/cutlass/cutlass.h")
    set(${out} "${root}/include" PARENT_SCOPE)
  elseif(EXISTS "${root}/cute/tensor.hpp" AND EXISTS "${root}/cutlass/cutlass.h")
    set(${out} "${root}" PARENT_SCOPE)
  endif()
endfunction()

set(_cute_include "")
set(_cute_from "")
set(_cute_third_party ${PROJECT_SOURCE_DIR}/third_party/cutlass)
if(CAMP_CUTLASS_ROOT)
  _camp_cutlass_include("${CAMP_CUTLASS_ROOT}" _cute_include)
  set(_cute_from "CAMP_CUTLASS_ROOT=${CAMP_CUTLASS_ROOT}")
  if(NOT _cute_include)
    set(_cute_why "CAMP_CUTLASS_ROOT=${CAMP_CUTLASS_ROOT} has neither include/cute/tensor.hpp nor cute/tensor.hpp")
  endif()
else()
  _camp_cutlass_include("${_cute_third_party}" _cute_include)
  set(_cute_from "${_cute_third_party}")
  if(NOT _cute_include)
    find_package(Python3 COMPONENTS Interpreter)
    if(Python3_Interpreter_FOUND)
      message(STATUS "CuTe: no CUTLASS headers yet; fetching nvidia-cutlass from PyPI into ${_cute_third_party}")
      execute_process(
        COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/gpu/fetch_cutlass_headers.py
                ${_cute_third_party}
        RESULT_VARIABLE _cute_rc OUTPUT_VARIABLE _cute_out ERROR_VARIABLE _cute_err)
      _camp_cutlass_include("${_cute_third_party}" _cute_include)
      set(_cute_from "${_cute_third_party} (fetched from PyPI)")
      if(NOT _cute_include)
        string(STRIP "${_cute_err}" _cute_err)
        set(_cute_why "no CAMP_CUTLASS_ROOT, no ${_cute_third_party}, and the fetch from PyPI failed (${_cute_rc}): ${_cute_err}")
      endif()
    else()
      set(_cute_why "no CAMP_CUTLASS_ROOT, no ${_cute_third_party}, and no python3 to fetch them")
    endif()
  endif()
endif()

if(NOT _cute_include)
  if(_cute_mode STREQUAL "ON")
    message(FATAL_ERROR "CAMP_ENABLE_CUTE=ON but no CUTLASS headers: ${_cute_why}. Set "
            "CAMP_CUTLASS_ROOT to a CUTLASS tree, run scripts/gpu/fetch_cutlass_headers.py "
            "third_party/cutlass where PyPI is reachable, or use CAMP_ENABLE_CUTE=AUTO/OFF.")
  endif()
  message(STATUS "CuTe: off (CAMP_ENABLE_CUTE=AUTO: ${_cute_why})")
  return()
endif()

set(CAMP_WITH_CUTE ON)
set(CAMP_CUTLASS_INCLUDE_DIRS ${_cute_include})
if(EXISTS "${_cute_include}/../tools/util/include")
  get_filename_component(_cute_util "${_cute_include}/../tools/util/include" ABSOLUTE)
  list(APPEND CAMP_CUTLASS_INCLUDE_DIRS ${_cute_util})
endif()
message(STATUS "CuTe: on (CAMP_ENABLE_CUTE=${_cute_mode}), CUTLASS headers from ${_cute_from}")

file(GLOB CAMP_CUTE_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/ops/*/nvidia/cute/*.cu)
target_sources(camp_ops PRIVATE ${CAMP_CUTE_SOURCES})
# SYSTEM: CUTLASS's own warnings are not ours (-Wall -Wextra stay on for our files).
target_include_directories(camp_ops SYSTEM PRIVATE ${CAMP_CUTLASS_INCLUDE_DIRS})
target_compile_definitions(camp_ops PRIVATE OPRT_WITH_CUTE)
