# The MetaX MACA backend, included by the top-level CMakeLists.txt when
# CAMP_ENABLE_METAX=ON. Compiles the MetaX units (ops/*/metax/*.maca,
# runtime/metax/*.maca) with mxcc into camp_ops; the CPU backend stays in the
# same library. The .maca units hold launch code only: they #include the NVIDIA
# launch code and kernels, compiled against the MetaX device traits
# (runtime/gpu/device_traits_metax.cuh: 64-lane warps,
# MACA types, no clusters).
#
# mxcc is driven by custom commands (one object per unit) rather than a CMake
# language, so nothing depends on CMake knowing mxcc. Extra flags (an
# offload architecture, -g, ...) go in CAMP_MXCC_FLAGS.
#
# NOTE: written without a MACA toolkit at hand. What was checked and what was
# not is listed in docs/metax.md.
list(APPEND CMAKE_MODULE_PATH "${PROJECT_SOURCE_DIR}/cmake")
find_package(MetaX)
if(NOT MetaX_FOUND)
  message(FATAL_ERROR
    "CAMP_ENABLE_METAX=ON but the MetaX MACA toolkit was not found under MACA_PATH=${MetaX_ROOT}.\n"
    "Looked for:${MetaX_MISSING}\n"
    "Install MACA (or point MACA_PATH at it: bash scripts/build_metax.sh with MACA_PATH=/path/to/maca), "
    "or build the CPU (scripts/build_cpu.sh) or NVIDIA (scripts/build_nvidia.sh) variant. See docs/metax.md.")
endif()
if(MetaX_CU_BRIDGE_DIR)
  set(_camp_cu_bridge "${MetaX_CU_BRIDGE_DIR}")
else()
  set(_camp_cu_bridge "not found (optional: the units use MACA names through the traits)")
endif()
message(STATUS "MetaX: mxcc ${MetaX_MXCC}, runtime ${MetaX_RUNTIME_LIBRARY}, cu-bridge ${_camp_cu_bridge}")

set(CAMP_MXCC_FLAGS "" CACHE STRING "Extra flags for mxcc (e.g. an offload architecture)")

file(GLOB CAMP_METAX_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/ops/*/metax/*.maca
     ${PROJECT_SOURCE_DIR}/runtime/metax/*.maca)

set(_camp_mxcc_includes -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR})
foreach(dir IN LISTS MetaX_INCLUDE_DIRS)
  list(APPEND _camp_mxcc_includes -I${dir})
endforeach()
set(_camp_mxcc_defs
    -DOPRT_WITH_METAX
    "-DOPRT_DEVICE_TRAITS_HEADER=\"runtime/gpu/device_traits_metax.cuh\"")
separate_arguments(_camp_mxcc_extra UNIX_COMMAND "${CAMP_MXCC_FLAGS}")

set(_camp_metax_objects "")
foreach(src IN LISTS CAMP_METAX_SOURCES)
  file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${src}")
  set(obj "${CMAKE_BINARY_DIR}/metax_objects/${rel}.o")
  get_filename_component(obj_dir "${obj}" DIRECTORY)
  add_custom_command(
    OUTPUT "${obj}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${obj_dir}"
    COMMAND "${MetaX_MXCC}" -x maca -std=c++17 -O3 -fPIC -fvisibility=hidden
            ${_camp_mxcc_includes} ${_camp_mxcc_defs} ${_camp_mxcc_extra}
            -MD -MF "${obj}.d" -c "${src}" -o "${obj}"
    DEPFILE "${obj}.d"
    DEPENDS "${src}"
    COMMENT "mxcc ${rel}"
    VERBATIM)
  list(APPEND _camp_metax_objects "${obj}")
endforeach()
set_source_files_properties(${_camp_metax_objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
target_sources(camp_ops PRIVATE ${_camp_metax_objects})

# The frontends name the metax entry points (dispatch.h OPRT_METAX_ENTRY).
target_compile_definitions(camp_ops PRIVATE OPRT_WITH_METAX)
target_include_directories(camp_ops PRIVATE ${MetaX_INCLUDE_DIRS})
target_link_libraries(camp_ops PRIVATE ${MetaX_LIBRARIES})
get_filename_component(_camp_maca_libdir "${MetaX_RUNTIME_LIBRARY}" DIRECTORY)
set_target_properties(camp_ops PROPERTIES BUILD_RPATH "${_camp_maca_libdir}")
