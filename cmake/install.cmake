# Version header, install rules and the exported CMake package, included by the
# top-level CMakeLists.txt once camp_ops exists.
#
# The one version number is project(VERSION) in CMakeLists.txt. From it come
# operator_runtime/version.h (configured here; runtime/version.cc returns it as
# oprt_version()), the version of the CMake package below, and the version of
# the Python distribution (pyproject.toml reads it with scikit-build-core's
# regex metadata provider).
#
# Two install layouts:
# - `cmake --install <build> --prefix <p>` (a plain CMake build): headers in
#   <p>/include/operator_runtime, libcamp_ops.so in <p>/lib, and the package
#   in <p>/lib/cmake/operator_runtime, so that find_package(operator_runtime)
#   gives the imported target operator_runtime::camp_ops.
# - a wheel (scikit-build-core sets SKBUILD): only libcamp_ops.so, into the
#   Python package operator_runtime/, where the ctypes loader finds it, and the
#   TileLang kernel files (ops/*/tilelang/*_tl.py) into operator_runtime/tilelang_ops/, and
#   the operator manifest (ops/manifest.json) into operator_runtime/.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in
               ${PROJECT_BINARY_DIR}/include/operator_runtime/version.h @ONLY)
target_include_directories(camp_ops PUBLIC
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# The name consumers use, also when they add this tree with add_subdirectory.
add_library(operator_runtime::camp_ops ALIAS camp_ops)

if(SKBUILD)
  install(TARGETS camp_ops
          LIBRARY DESTINATION operator_runtime
          RUNTIME DESTINATION operator_runtime)
  # The TileLang kernels of backend="tilelang" (Python, compiled at run time): where
  # operator_runtime/_tilelang.py looks for them in an installed package.
  file(GLOB_RECURSE _camp_tl_kernels CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/ops/*_tl.py)
  install(FILES ${_camp_tl_kernels} DESTINATION operator_runtime/tilelang_ops)
  # The operator manifest, which the Python package reads at run time (_manifest.py).
  install(FILES ${CAMP_MANIFEST} DESTINATION operator_runtime)
  return()
endif()

set(CAMP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/operator_runtime)

install(TARGETS camp_ops EXPORT operator_runtimeTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# include/ holds the public C API only; the internals live under runtime/.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/operator_runtime
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
# version.h and the umbrella header are configured into the build tree (this file and
# cmake/manifest.cmake).
install(FILES ${PROJECT_BINARY_DIR}/include/operator_runtime/version.h
              ${PROJECT_BINARY_DIR}/include/operator_runtime/operator_runtime.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/operator_runtime)

# The threads library and the CUDA runtime (static) are private dependencies of the shared
# library: nothing of them reaches a consumer's link line, so the package
# config needs no find_dependency().
install(EXPORT operator_runtimeTargets
        NAMESPACE operator_runtime::
        FILE operator_runtimeTargets.cmake
        DESTINATION ${CAMP_INSTALL_CMAKEDIR})

foreach(backend NVIDIA METAX)
  if(CAMP_ENABLE_${backend})
    set(CAMP_PACKAGE_WITH_${backend} ON)
  else()
    set(CAMP_PACKAGE_WITH_${backend} OFF)
  endif()
endforeach()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/operator_runtimeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/operator_runtimeConfig.cmake
  INSTALL_DESTINATION ${CAMP_INSTALL_CMAKEDIR})
# 0.x: a minor release may change the API, so only the same MAJOR.MINOR matches.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/operator_runtimeConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/operator_runtimeConfig.cmake
              ${PROJECT_BINARY_DIR}/operator_runtimeConfigVersion.cmake
        DESTINATION ${CAMP_INSTALL_CMAKEDIR})
