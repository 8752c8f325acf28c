# LibTorch from plain paths, for ATTNLAB_GPU_CHECK_ONLY (bench/gpu_check/build.sh): a pip
# torch ships its C++ headers and libraries, but find_package(Torch) on it often fails on
# details of the CUDA toolkit it finds (or does not find) beside it. The GPU check needs
# no more than the headers, the libraries and the ABI flag, so it takes them as given:
#   ATTNLAB_TORCH_INCLUDE_DIRS  LibTorch's include folders, ;-separated (with a CUDA torch,
#                               also the CUDA runtime's headers: c10/cuda includes them)
#   ATTNLAB_TORCH_LIBRARY_DIR   the folder holding libtorch.so, libtorch_cpu.so, libc10.so
#   ATTNLAB_TORCH_CUDA          ON for a CUDA LibTorch: also libtorch_cuda.so, libc10_cuda.so,
#                               and runtime/cuda_memory.cpp's CUDA branch (core/CMakeLists.txt)
#   ATTNLAB_TORCH_CXX11_ABI     torch._C._GLIBCXX_USE_CXX11_ABI (0 or 1); empty: the compiler's
# It sets what find_package(Torch) would for core/CMakeLists.txt: TORCH_LIBRARIES (the
# interface target attnlab_torch), TORCH_INCLUDE_DIRS, and TORCH_CUDA_LIBRARIES with CUDA.
set(ATTNLAB_TORCH_INCLUDE_DIRS "" CACHE STRING "LibTorch's include folders (;-separated), for ATTNLAB_GPU_CHECK_ONLY")
set(ATTNLAB_TORCH_LIBRARY_DIR "" CACHE PATH "The folder holding libtorch.so, for ATTNLAB_GPU_CHECK_ONLY")
option(ATTNLAB_TORCH_CUDA "The LibTorch in ATTNLAB_TORCH_LIBRARY_DIR has CUDA (libtorch_cuda.so)" OFF)
set(ATTNLAB_TORCH_CXX11_ABI "" CACHE STRING "torch._C._GLIBCXX_USE_CXX11_ABI: 0, 1, or empty for the compiler's default")

if(NOT ATTNLAB_TORCH_INCLUDE_DIRS OR NOT ATTNLAB_TORCH_LIBRARY_DIR)
  message(FATAL_ERROR "ATTNLAB_GPU_CHECK_ONLY needs ATTNLAB_TORCH_INCLUDE_DIRS and "
          "ATTNLAB_TORCH_LIBRARY_DIR (bench/gpu_check/build.sh computes them from python3's torch)")
endif()

set(_attnlab_torch_libs torch torch_cpu c10)
if(ATTNLAB_TORCH_CUDA)
  list(APPEND _attnlab_torch_libs torch_cuda c10_cuda)
endif()
set(TORCH_LIBRARIES attnlab_torch)
set(TORCH_INCLUDE_DIRS ${ATTNLAB_TORCH_INCLUDE_DIRS})
set(TORCH_CUDA_LIBRARIES "")
add_library(attnlab_torch INTERFACE)
foreach(_lib IN LISTS _attnlab_torch_libs)
  # Only that folder: a system LibTorch elsewhere must not stand in for the one named.
  find_library(ATTNLAB_TORCH_LIB_${_lib} NAMES ${_lib} PATHS ${ATTNLAB_TORCH_LIBRARY_DIR}
               NO_DEFAULT_PATH REQUIRED)
  if(_lib MATCHES "cuda")
    list(APPEND TORCH_CUDA_LIBRARIES ${ATTNLAB_TORCH_LIB_${_lib}})
  else()
    target_link_libraries(attnlab_torch INTERFACE ${ATTNLAB_TORCH_LIB_${_lib}})
  endif()
endforeach()
if(TORCH_CUDA_LIBRARIES)
  # Nothing of ours calls into libtorch_cuda.so directly, but loading it is what registers
  # CUDA with LibTorch: keep it linked where the linker drops unused libraries
  # (TorchConfig.cmake does the same).
  target_link_libraries(attnlab_torch INTERFACE "-Wl,--push-state,--no-as-needed"
                        ${TORCH_CUDA_LIBRARIES} "-Wl,--pop-state")
endif()
target_include_directories(attnlab_torch SYSTEM INTERFACE ${ATTNLAB_TORCH_INCLUDE_DIRS})
if(NOT ATTNLAB_TORCH_CXX11_ABI STREQUAL "")
  # Every target, not only those with LibTorch: attnlab_io hands std::string to the rest.
  add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${ATTNLAB_TORCH_CXX11_ABI})
endif()
message(STATUS "attnlab: GPU check only, LibTorch from ${ATTNLAB_TORCH_LIBRARY_DIR}"
               " (CUDA ${ATTNLAB_TORCH_CUDA}, C++ ABI '${ATTNLAB_TORCH_CXX11_ABI}')")
