// What a device achieves at its best, measured in the same run as the work it is compared
// with: the FLOP rate of a large square matrix product (GEMM, the op every attention
// mechanism is built on) and the bandwidth of a large tensor copy, at a given precision.
// bench-attention reports each layer's achieved FLOP rate and bandwidth as fractions of
// these. Measured, not looked up: no table of datasheet peaks to keep current, and the
// numbers are what this LibTorch's kernels reach on this machine (on a GPU, typically
// 60-90 % of the datasheet's; on a CPU, what OpenBLAS / oneDNN reach with its threads).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

namespace attnlab::runtime {

struct DevicePeaks {
  double gflops = 0;        // 2·n³ / the median GEMM time, in 10⁹ FLOP/s
  double gbytes_per_s = 0;  // (read + write) bytes of the copy / its median time, 10⁹ B/s
  int64_t gemm_n = 0;       // the GEMM's side
  int64_t copy_bytes = 0;   // bytes copied (each way)
};

// Median of `repeats` timed runs after one warm-up each. Sizes are chosen for the device:
// on the CPU a 1024² GEMM and a 64 MiB copy (tenths of a second), on CUDA 8192² and 1 GiB.
DevicePeaks measure_device_peaks(const c10::Device& device, c10::ScalarType dtype, int repeats = 5);

}  // namespace attnlab::runtime
