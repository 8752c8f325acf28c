# Compile-time settings: a fresh clone's build is most of a newcomer's first wait.
#
# ATTNLAB_DEBUG_INFO  how much debug information RelWithDebInfo emits:
#   lines (default)   -g1: file:line for backtraces, gdb `bt` and sanitizer reports; no
#                     variable locations. LibTorch's templates make full -g objects ~5x
#                     larger, and writing and linking them was much of the build.
#   full              -g (CMake's default), for stepping through in gdb.
#   none              -g0.
# ATTNLAB_LINKER      lld (default where ld.lld exists) links the large test binaries
#                     several times faster than GNU ld; "default" keeps the toolchain's.
# attnlab_torch_pch(target): one precompiled LibTorch header (<ATen/ATen.h> and
#   <torch/nn/module.h>), built once by attnlab_core and reused by every target that
#   includes LibTorch, instead of one PCH per target.
set(ATTNLAB_DEBUG_INFO "lines" CACHE STRING "Debug info in RelWithDebInfo: lines (-g1), full (-g), none")
set_property(CACHE ATTNLAB_DEBUG_INFO PROPERTY STRINGS lines full none)
if(ATTNLAB_DEBUG_INFO STREQUAL "lines")
  add_compile_options($<$<CONFIG:RelWithDebInfo>:-g1>)
elseif(ATTNLAB_DEBUG_INFO STREQUAL "none")
  add_compile_options($<$<CONFIG:RelWithDebInfo>:-g0>)
elseif(NOT ATTNLAB_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "ATTNLAB_DEBUG_INFO must be lines, full or none, not '${ATTNLAB_DEBUG_INFO}'")
endif()

find_program(ATTNLAB_LLD ld.lld)
if(ATTNLAB_LLD)
  set(_attnlab_default_linker lld)
else()
  set(_attnlab_default_linker default)
endif()
set(ATTNLAB_LINKER ${_attnlab_default_linker} CACHE STRING "Linker: lld or default")
if(ATTNLAB_LINKER STREQUAL "lld")
  add_link_options(-fuse-ld=lld)
endif()

# The target that builds the shared precompiled header (set by core/CMakeLists.txt).
set(ATTNLAB_PCH_OWNER attnlab_core)
function(attnlab_torch_pch target)
  if(target STREQUAL ATTNLAB_PCH_OWNER)
    target_precompile_headers(${target} PRIVATE <ATen/ATen.h> <torch/nn/module.h>)
  else()
    target_precompile_headers(${target} REUSE_FROM ${ATTNLAB_PCH_OWNER})
  endif()
endfunction()

# ATTNLAB_UNITY (default ON): the libraries and test binaries that use LibTorch compile
# their files in batches of ATTNLAB_UNITY_BATCH (CMake's unity build). Each of their units
# spent ~3 s loading the 390 MB precompiled LibTorch header and instantiated the same
# LibTorch, nlohmann/json and GoogleTest templates again; a batch does both once. Files
# of one target therefore give their anonymous-namespace helpers names of their own
# (tests/support/unity_names.py checks it, as the ctest unity_names). OFF compiles each
# file alone (quicker to rebuild after editing one file).
# attnlab_unity(target [file ...]): the files named stay out of the batches (they define
# macros for themselves or register kernels with LibTorch while the program starts).
option(ATTNLAB_UNITY "Compile the LibTorch libraries and test binaries in unity batches" ON)
set(ATTNLAB_UNITY_BATCH 6 CACHE STRING "Files per unity batch")
function(attnlab_unity target)
  if(ATTNLAB_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                               UNITY_BUILD_BATCH_SIZE ${ATTNLAB_UNITY_BATCH})
    if(ARGN)
      set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target}
                                  PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endif()
endfunction()
