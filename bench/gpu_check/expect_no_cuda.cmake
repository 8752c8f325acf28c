# The GPU check programs' ctest (bench/gpu_check/CMakeLists.txt): runs PROGRAM where no CUDA
# device is visible and passes when it says so and exits 77, the skip code. Anything else,
# a crash at start included, fails: this is what proves, on a CPU-only build, that the
# programs link and start.
#   cmake -DPROGRAM=path/to/attnlab_gpucheck -P expect_no_cuda.cmake
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "77")
  message(FATAL_ERROR "${PROGRAM} exited '${rc}', not 77 (no CUDA device: skipped)")
endif()
if(NOT out MATCHES "no CUDA device")
  message(FATAL_ERROR "${PROGRAM} exited 77 but did not say 'no CUDA device'")
endif()
