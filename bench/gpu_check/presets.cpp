// The GPU check's second program (attnlab_gpucheck_presets, built beside attnlab_gpucheck by
// bench/gpu_check/CMakeLists.txt): every preset backbone, random weights, one 224×224 image,
// its traced forward on CUDA against the CPU at fp32 (TF32 off) and at bf16, and the latency
// and peak device memory of its forward at batch 1 and 32. Without a CUDA device it says so
// and exits 77 (skipped).
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/runtime/cuda_memory.h"
#include "models/model_registry.h"
#include "models/presets.h"

using namespace attnlab;

namespace {

// Median ms of `repeats` forwards after one warm-up, and the allocator's peak above before.
std::pair<double, double> time_forward(models::Backbone& m, const at::Tensor& x, int repeats) {
  m.run(x);
  torch::cuda::synchronize(0);
  runtime::reset_cuda_peak(0);
  const int64_t before = runtime::cuda_allocated_bytes(0);
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    m.run(x);
    torch::cuda::synchronize(0);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], double(runtime::cuda_peak_allocated_bytes(0) - before) / (1 << 20)};
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("gpucheck_presets: no CUDA device (a CPU-only LibTorch, no GPU, or "
                "CUDA_VISIBLE_DEVICES hides it): nothing checked, exit 77 (skipped)\n");
    return 77;
  }
  const c10::Device cuda(c10::kCUDA, 0);
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setAllowTF32CuDNN(false);
  const at::NoGradGuard no_grad;
  int failed = 0;
  for (const auto& p : models::presets()) {
    try {
      at::manual_seed(0);
      auto model = models::make_backbone(p.config);
      model->eval();
      at::manual_seed(1);
      const at::Tensor x = at::randn({1, 3, 224, 224});
      models::ForwardOptions o;
      o.trace_attention = true;
      const models::ForwardResult cpu = model->run(x, o);
      model->to(cuda);
      const models::ForwardResult gpu = model->run(x.to(cuda), o);
      const at::Tensor a = cpu.logits.to(at::kDouble), g = gpu.logits.to(at::kCPU, at::kDouble);
      const double scale = a.abs().max().item<double>();
      const double d32 = (g - a).abs().max().item<double>() / scale;
      bool traces_on_cuda = gpu.traces.size() == cpu.traces.size();
      for (const auto& t : gpu.traces)
        for (const auto& grp : t.trace->groups) traces_on_cuda &= grp.q.is_cuda();
      const auto [ms32, mib32] = time_forward(*model, x.to(cuda), 20);
      const auto [ms32b, mib32b] = time_forward(*model, at::randn({32, 3, 224, 224}).to(cuda), 10);
      model->set_precision(at::kBFloat16);
      const at::Tensor b = model->run(x.to(cuda), o).logits.to(at::kCPU, at::kDouble);
      const double d16 = (b - a).abs().max().item<double>() / scale;
      const auto [ms16, mib16] = time_forward(*model, x.to(cuda), 20);
      const auto [ms16b, mib16b] = time_forward(*model, at::randn({32, 3, 224, 224}).to(cuda), 10);
      const bool ok = d32 <= 1e-4 && traces_on_cuda && d16 <= 0.05;
      failed += ok ? 0 : 1;
      std::printf(
          "%-40s fp32 rel %.1e, bf16 rel %.4f, traces on cuda %d %s | b1 fp32 %.2f ms %.0f MiB, "
          "bf16 %.2f ms %.0f MiB | b32 fp32 %.2f ms %.0f MiB, bf16 %.2f ms %.0f MiB\n",
          p.name.c_str(), d32, d16, int(traces_on_cuda), ok ? "OK" : "FAIL", ms32, mib32, ms16,
          mib16, ms32b, mib32b, ms16b, mib16b);
    } catch (const std::exception& e) {
      ++failed;
      std::printf("%-40s ERROR %s\n", p.name.c_str(), std::string(e.what()).substr(0, 400).c_str());
    }
    std::fflush(stdout);
  }
  std::printf("presets failing: %d\n", failed);
  return failed == 0 ? 0 : 1;
}
