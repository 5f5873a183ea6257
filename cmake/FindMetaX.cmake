# FindMetaX: the MetaX MACA toolkit.
#
# Looks under MACA_PATH (CMake variable or environment; default /opt/maca) for
#   MetaX_MXCC             mxcc, the MACA compiler (mxgpu_llvm/bin or bin)
#   MetaX_INCLUDE_DIR      mc_runtime.h (include, include/mcr)
#   MetaX_FP16_INCLUDE_DIR maca_fp16.h and maca_bfloat16.h (include, include/common)
#   MetaX_RUNTIME_LIBRARY  libmcruntime (lib, lib64)
#   MetaX_CU_BRIDGE_DIR    cu-bridge (tools/cu-bridge), the CUDA-name layer; optional,
#                          its include folder is added when present
# Sets MetaX_FOUND, MetaX_ROOT, MetaX_INCLUDE_DIRS, MetaX_LIBRARIES and
# MetaX_MISSING (what was looked for and not found, one line each).
if(NOT DEFINED MACA_PATH OR MACA_PATH STREQUAL "")
  if(DEFINED ENV{MACA_PATH} AND NOT "$ENV{MACA_PATH}" STREQUAL "")
    set(MACA_PATH "$ENV{MACA_PATH}")
  else()
    set(MACA_PATH "/opt/maca")
  endif()
endif()
set(MetaX_ROOT "${MACA_PATH}")

find_program(MetaX_MXCC NAMES mxcc
  PATHS "${MetaX_ROOT}/mxgpu_llvm/bin" "${MetaX_ROOT}/bin" NO_DEFAULT_PATH)
find_path(MetaX_INCLUDE_DIR NAMES mc_runtime.h
  PATHS "${MetaX_ROOT}/include" PATH_SUFFIXES mcr NO_DEFAULT_PATH)
find_path(MetaX_FP16_INCLUDE_DIR NAMES maca_fp16.h
  PATHS "${MetaX_ROOT}/include" PATH_SUFFIXES common mcr NO_DEFAULT_PATH)
find_path(MetaX_BF16_INCLUDE_DIR NAMES maca_bfloat16.h
  PATHS "${MetaX_ROOT}/include" PATH_SUFFIXES common mcr NO_DEFAULT_PATH)
find_library(MetaX_RUNTIME_LIBRARY NAMES mcruntime
  PATHS "${MetaX_ROOT}/lib" "${MetaX_ROOT}/lib64" NO_DEFAULT_PATH)
find_path(MetaX_CU_BRIDGE_DIR NAMES include bin
  PATHS "${MetaX_ROOT}/tools/cu-bridge" NO_DEFAULT_PATH)

set(MetaX_MISSING "")
foreach(pair
    "MetaX_MXCC|mxcc in ${MetaX_ROOT}/mxgpu_llvm/bin or ${MetaX_ROOT}/bin"
    "MetaX_INCLUDE_DIR|mc_runtime.h in ${MetaX_ROOT}/include (or include/mcr)"
    "MetaX_FP16_INCLUDE_DIR|maca_fp16.h in ${MetaX_ROOT}/include (or include/common, include/mcr)"
    "MetaX_BF16_INCLUDE_DIR|maca_bfloat16.h in ${MetaX_ROOT}/include (or include/common, include/mcr)"
    "MetaX_RUNTIME_LIBRARY|libmcruntime in ${MetaX_ROOT}/lib or ${MetaX_ROOT}/lib64")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 var)
  list(GET pair 1 what)
  if(NOT ${var})
    string(APPEND MetaX_MISSING "\n  - ${what}")
  endif()
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MetaX
  REQUIRED_VARS MetaX_MXCC MetaX_INCLUDE_DIR MetaX_FP16_INCLUDE_DIR MetaX_BF16_INCLUDE_DIR
                MetaX_RUNTIME_LIBRARY)

if(MetaX_FOUND)
  set(MetaX_INCLUDE_DIRS ${MetaX_INCLUDE_DIR} ${MetaX_FP16_INCLUDE_DIR} ${MetaX_BF16_INCLUDE_DIR})
  if(MetaX_CU_BRIDGE_DIR AND EXISTS "${MetaX_CU_BRIDGE_DIR}/include")
    list(APPEND MetaX_INCLUDE_DIRS "${MetaX_CU_BRIDGE_DIR}/include")
  endif()
  list(REMOVE_DUPLICATES MetaX_INCLUDE_DIRS)
  set(MetaX_LIBRARIES ${MetaX_RUNTIME_LIBRARY})
endif()
mark_as_advanced(MetaX_MXCC MetaX_INCLUDE_DIR MetaX_FP16_INCLUDE_DIR MetaX_BF16_INCLUDE_DIR
                 MetaX_RUNTIME_LIBRARY MetaX_CU_BRIDGE_DIR)
