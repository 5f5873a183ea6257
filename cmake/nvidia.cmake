# The NVIDIA CUDA backend, included by the top-level CMakeLists.txt when
# CAMP_ENABLE_NVIDIA=ON. Adds the CUDA kernels and the CUDA runtime glue to
# camp_ops; the CPU backend stays in the same library.
#
# CMAKE_CUDA_ARCHITECTURES: scripts/build_nvidia.sh passes "native" when a GPU
# is visible and 90 (H100/H200) otherwise. Without it we default to 90 so a
# GPU-less machine still compiles the Hopper code paths.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()

enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

# The defaults for CUDA targets created from here on (the GPU tests); camp_ops
# exists already and gets the same settings as properties below.
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)

file(GLOB CAMP_NVIDIA_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/ops/*/nvidia/*.cu
     ${PROJECT_SOURCE_DIR}/runtime/nvidia/*.cu
     ${CAMP_STUDENT_DIR}/nvidia/*_student.cu)  # exercises (scripts/camp.py exercise)
# matmul's Hopper kernel (TMA + wgmma) needs the arch-specific target sm_90a, which
# the library's CMAKE_CUDA_ARCHITECTURES (90 or native) does not give: it is built
# below as its own object library and left out of the glob.
list(FILTER CAMP_NVIDIA_SOURCES EXCLUDE REGEX "/ops/matmul/nvidia/wgmma\\.cu$")
target_sources(camp_ops PRIVATE ${CAMP_NVIDIA_SOURCES})
target_compile_definitions(camp_ops PRIVATE OPRT_WITH_NVIDIA)

# Static cudart: libcamp_ops.so does not depend on finding a libcudart.so of
# the toolkit's version at run time (Python processes often carry their own).
set_target_properties(camp_ops PROPERTIES
  CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"  # camp_ops predates the default above
  CUDA_STANDARD 17
  CUDA_STANDARD_REQUIRED ON
  CUDA_EXTENSIONS OFF
  CUDA_RUNTIME_LIBRARY Static
  CUDA_VISIBILITY_PRESET hidden)
target_link_libraries(camp_ops PRIVATE CUDA::cudart_static)

# -lineinfo keeps source lines for profilers and compute-sanitizer at no
# speed cost; relaxed constexpr lets device code call constexpr host helpers.
target_compile_options(camp_ops PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-O3 -lineinfo --expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra>)

include(${PROJECT_SOURCE_DIR}/cmake/cutlass.cmake)

# ---- matmul tensor-core kernels (CAMP_MATMUL_TC_SOURCES) ----
# ops/matmul/nvidia/mma_sync.cuh is a header (compiled where it is included, for the
# library's architectures). wgmma.cu is compiled for sm_90a only, whatever
# CMAKE_CUDA_ARCHITECTURES says: its device code exists under __CUDA_ARCH_FEAT_SM90_ALL,
# and wgmma_supports() is false on any device that is not compute capability 9.0.
# camp_matmul_tc is linked into camp_ops and into the standalone matmul benchmark
# (tests/cpp/nvidia/bench/matmul_kernels.cu).
set(CAMP_MATMUL_TC_SOURCES ${PROJECT_SOURCE_DIR}/ops/matmul/nvidia/wgmma.cu)
add_library(camp_matmul_tc OBJECT ${CAMP_MATMUL_TC_SOURCES})
target_include_directories(camp_matmul_tc PRIVATE
  ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
set_target_properties(camp_matmul_tc PROPERTIES
  CUDA_ARCHITECTURES OFF          # the architecture flag is the one below
  CUDA_STANDARD 17
  CUDA_STANDARD_REQUIRED ON
  CUDA_EXTENSIONS OFF
  POSITION_INDEPENDENT_CODE ON    # part of the shared libcamp_ops
  CUDA_VISIBILITY_PRESET hidden)
target_compile_options(camp_matmul_tc PRIVATE
  --generate-code=arch=compute_90a,code=sm_90a
  -O3 -lineinfo -Xcompiler=-Wall,-Wextra)
target_sources(camp_ops PRIVATE $<TARGET_OBJECTS:camp_matmul_tc>)
