// Measured GEMM FLOP rate and copy bandwidth of a device (device_peaks.h).
#include "core/runtime/device_peaks.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace attnlab::runtime {
namespace {

double median_seconds(const c10::Device& device, int repeats, const std::function<void()>& run) {
  const auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  run();  // warm-up: kernel selection, first-touch of the output
  sync();
  std::vector<double> s;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    sync();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

DevicePeaks measure_device_peaks(const c10::Device& device, c10::ScalarType dtype, int repeats) {
  const at::NoGradGuard no_grad;
  const auto o = at::TensorOptions().device(device).dtype(dtype);
  DevicePeaks p;
  p.gemm_n = device.is_cuda() ? 8192 : 1024;
  {
    const at::Tensor a = at::randn({p.gemm_n, p.gemm_n}, o), b = at::randn({p.gemm_n, p.gemm_n}, o);
    at::Tensor c = at::empty({p.gemm_n, p.gemm_n}, o);
    const double s = median_seconds(device, repeats, [&] { at::mm_out(c, a, b); });
    p.gflops = 2.0 * double(p.gemm_n) * double(p.gemm_n) * double(p.gemm_n) / s / 1e9;
  }
  {
    p.copy_bytes = device.is_cuda() ? (int64_t(1) << 30) : (int64_t(64) << 20);
    const int64_t n = p.copy_bytes / int64_t(c10::elementSize(dtype));
    const at::Tensor from = at::ones({n}, o);
    at::Tensor to = at::empty({n}, o);
    const double s = median_seconds(device, repeats, [&] { to.copy_(from); });
    p.gbytes_per_s = 2.0 * double(p.copy_bytes) / s / 1e9;
  }
  return p;
}

}  // namespace attnlab::runtime
