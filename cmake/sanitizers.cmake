# Sanitizer and fuzzing builds, included by the top-level CMakeLists.txt before
# any target is defined, so every C++ target of the build (libcamp_ops.so, the
# C++ tests, the fuzz targets) is instrumented the same way.
#
#   -DCAMP_SANITIZE=address,undefined   ASan + UBSan (GCC or Clang); any list the
#                                        compiler takes for -fsanitize= works.
#                                        Every report is fatal (-fno-sanitize-recover).
#   -DCAMP_BUILD_FUZZERS=ON             the libFuzzer targets of tests/fuzz (Clang only);
#                                        libcamp_ops.so gets coverage instrumentation.
#
# scripts/ci/sanitizers.sh and scripts/ci/fuzz.sh drive these builds, each in its
# own build folder. Python loads an instrumented libcamp_ops.so only with the
# ASan runtime preloaded (LD_PRELOAD), which scripts/ci/sanitizers.sh does.
#
# For the CPU variant: GPU code is checked with compute-sanitizer instead
# (scripts/gpu/validate.sh), and host ASan under the CUDA runtime would need
# ASAN_OPTIONS=protect_shadow_gap=0 and sanitizer flags on nvcc's link line.
set(CAMP_SANITIZE "" CACHE STRING
    "Sanitizers for every C++ target, e.g. address,undefined (empty: none)")
option(CAMP_BUILD_FUZZERS "Build the libFuzzer targets in tests/fuzz (Clang)" OFF)

if((CAMP_SANITIZE OR CAMP_BUILD_FUZZERS) AND (CAMP_ENABLE_NVIDIA OR CAMP_ENABLE_METAX))
  message(FATAL_ERROR "CAMP_SANITIZE and CAMP_BUILD_FUZZERS build the CPU variant: configure "
                      "with CAMP_ENABLE_NVIDIA=OFF and CAMP_ENABLE_METAX=OFF in a folder of their own")
endif()

if(CAMP_SANITIZE)
  string(REPLACE ";" "," _camp_sanitize "${CAMP_SANITIZE}")
  set(_camp_sanitize_flags
      -fsanitize=${_camp_sanitize} -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_camp_sanitize_flags}>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=${_camp_sanitize}>")
  message(STATUS "operator_runtime: sanitizers ${_camp_sanitize}")
endif()

if(CAMP_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CAMP_BUILD_FUZZERS=ON needs Clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (scripts/ci/fuzz.sh does)")
  endif()
  # Coverage feedback from the library itself, not only from the fuzz targets.
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
  # The targets link camp_ops, defined later by the top-level file: CMake
  # resolves target names when it generates the build.
  add_subdirectory(${PROJECT_SOURCE_DIR}/tests/fuzz ${CMAKE_BINARY_DIR}/tests/fuzz)
endif()
