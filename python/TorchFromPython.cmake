# `pip install .` (pyproject.toml sets ATTNLAB_TORCH_FROM_PYTHON): LibTorch is the one inside
# the torch package of the Python running the build, so the module links the very libtorch
# `import torch` loads. Included by the top-level CMakeLists.txt before find_package(Torch).
option(ATTNLAB_TORCH_FROM_PYTHON "Find LibTorch in the torch package of Python_EXECUTABLE (pip install .)" OFF)
if(NOT ATTNLAB_TORCH_FROM_PYTHON)
  return()
endif()
if(NOT Python_EXECUTABLE)
  message(FATAL_ERROR "ATTNLAB_TORCH_FROM_PYTHON: no Python_EXECUTABLE (pip sets it; or pass -DPython_EXECUTABLE=...)")
endif()
execute_process(
  COMMAND "${Python_EXECUTABLE}" -c
          "import os, torch.utils; print(os.path.dirname(torch.__file__)); print(torch.utils.cmake_prefix_path)"
  OUTPUT_VARIABLE _attnlab_torch_paths ERROR_VARIABLE _attnlab_torch_error
  RESULT_VARIABLE _attnlab_torch_status OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _attnlab_torch_status EQUAL 0)
  message(FATAL_ERROR "ATTNLAB_TORCH_FROM_PYTHON: ${Python_EXECUTABLE} cannot import torch:\n"
          "${_attnlab_torch_error}\nInstall torch into that environment and build with "
          "`pip install . --no-build-isolation` (an isolated build environment has no torch).")
endif()
string(REPLACE "\n" ";" _attnlab_torch_paths "${_attnlab_torch_paths}")
list(GET _attnlab_torch_paths 0 _attnlab_torch_root)
list(GET _attnlab_torch_paths 1 _attnlab_torch_cmake)
# The torch folder itself first: LibTorch's CMake files look for libtorch.so in the prefix
# paths before their own folder, and the system's paths come before that folder too, where
# Debian's LibTorch 1.13 may be (/usr/lib/x86_64-linux-gnu/libtorch.so). With torch/ as a
# prefix, torch/lib is searched first (the top-level check after find_package refuses a mix).
list(PREPEND CMAKE_PREFIX_PATH "${_attnlab_torch_root}" "${_attnlab_torch_cmake}")
message(STATUS "attnlab: LibTorch from ${Python_EXECUTABLE}'s torch (${_attnlab_torch_root})")
