# Finds every dependency. Debian 12 packages are installed by scripts/setup.sh.
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest REQUIRED)
find_package(Threads REQUIRED)

# SimGrid: Debian ships no CMake config, so pkg-config (docs/notes/simgrid.md section 1).
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)

# Open MPI (execution backend, distributed plan search).
find_package(MPI REQUIRED COMPONENTS CXX)

# CPU BLAS for the CPU execution backend.
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread REQUIRED)

# CUDA + cuBLAS + NCCL behind WITH_CUDA=AUTO|ON|OFF. NCCL has no CMake config: find_path/library.
set(TUTTI_HAVE_CUDA OFF)
if(NOT WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cublas AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(TUTTI_HAVE_CUDA ON)
    add_library(tutti_nccl INTERFACE)
    target_include_directories(tutti_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(tutti_nccl INTERFACE ${NCCL_LIBRARY})
    message(STATUS "tutti: CUDA backend ON (CUDA ${CUDAToolkit_VERSION}, NCCL ${NCCL_LIBRARY})")
  elseif(WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WITH_CUDA=ON but CUDA toolkit, cuBLAS or NCCL was not found")
  else()
    message(STATUS "tutti: CUDA backend OFF (toolkit, cuBLAS or NCCL not found)")
  endif()
endif()
