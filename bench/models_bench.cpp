// Backbone forward latency and peak CPU memory at 224×224, batch 1 and 32, random
// weights, eval, no autograd — without trace capture (the baseline) and with every
// attention layer traced (ForwardOptions::trace_attention), for the presets
// deit_tiny_patch16_224, deit_small_patch16_224, litv2_s, ravlt_t and castling_deit_tiny.
// The ratio traced / plain is the cost of capture (target: < 1.2). ATTNLAB_BENCH_DEVICE=cuda
// runs on the GPU (latency only). bench/models_table.py makes the table (medians).
// precision/<fp32|bf16>/<preset>/<batch>: the traced forward with weights and activations at
// that precision (Backbone::set_precision, --dtype), fp32 the baseline in the same run;
// counter weights_MiB is the weights' size (docs/BENCHMARKS.md, "Precision").
// tome/r<R>/deit_small_patch16_224/<batch>: token merging (ToMe, tome_r = R in every block)
// untraced (images/s = batch / real time); r0 is the plain model, the baseline in the same run
// (docs/BENCHMARKS.md, "Token merging").
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <memory>

#include "core/runtime/device.h"
#include "core/runtime/memory_probe.h"
#include "core/runtime/threads.h"
#include "models/model_registry.h"
#include "models/presets.h"

namespace {

using namespace attnlab;

c10::Device bench_device() {
  const char* env = std::getenv("ATTNLAB_BENCH_DEVICE");
  return runtime::select_device(env && *env ? env : "cpu");
}

void forward(benchmark::State& state, const std::string& preset, int64_t batch, bool traced,
             c10::ScalarType dtype, int64_t merge) {
  at::NoGradGuard no_grad;
  const c10::Device device = bench_device();
  at::manual_seed(0);
  models::Json config = models::find_preset(preset).config;
  if (merge > 0) config["tome_r"] = merge;
  auto model = models::make_backbone(config);
  model->eval();
  model->to(device);
  model->set_precision(dtype);
  double weight_bytes = 0;
  for (const auto& p : model->parameters()) weight_bytes += double(p.numel() * p.element_size());
  const at::Tensor x = at::randn({batch, 3, 224, 224}).to(device);
  models::ForwardOptions options;
  options.trace_attention = traced;
  auto once = [&] {
    models::ForwardResult r = model->run(x, options);
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
    return r;
  };
  once();  // warm-up: oneDNN primitives, allocator pools
  std::unique_ptr<runtime::CpuMemoryProbe> probe;
  if (!device.is_cuda()) probe = std::make_unique<runtime::CpuMemoryProbe>();
  int64_t peak = 0;
  for (auto _ : state) {
    if (probe) probe->reset_peak();
    const int64_t before = probe ? probe->live_bytes() : 0;
    {
      models::ForwardResult r = once();
      benchmark::DoNotOptimize(r.logits.data_ptr());
      if (probe) peak = std::max(peak, probe->peak_bytes() - before);
    }
  }
  if (probe) state.counters["peak_MiB"] = double(peak) / (1024.0 * 1024.0);
  state.counters["weights_MiB"] = weight_bytes / (1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  runtime::configure_threads(0);
  for (const char* preset : {"deit_tiny_patch16_224", "deit_small_patch16_224", "litv2_s",
                             "ravlt_t", "castling_deit_tiny"})
    for (int64_t batch : {1, 32})
      for (bool traced : {false, true}) {
        const std::string name =
            std::string(traced ? "traced/" : "plain/") + preset + "/" + std::to_string(batch);
        benchmark::RegisterBenchmark(name.c_str(), forward, std::string(preset), batch, traced,
                                     c10::kFloat, int64_t{0})
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->MinTime(batch == 1 ? 1.0 : 0.1);
      }
  for (const char* preset : {"deit_small_patch16_224", "litv2_s", "ravlt_t"})
    for (int64_t batch : {1, 8})
      for (const auto& [dtype, label] :
           {std::pair{c10::kFloat, "fp32"}, std::pair{c10::kBFloat16, "bf16"}}) {
        const std::string name =
            std::string("precision/") + label + "/" + preset + "/" + std::to_string(batch);
        benchmark::RegisterBenchmark(name.c_str(), forward, std::string(preset), batch, true, dtype,
                                     int64_t{0})
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->MinTime(batch == 1 ? 1.0 : 0.1);
      }
  // ToMe's throughput against r (DeiT-S at 224: 197 tokens; r = 16 leaves 11 after 12 blocks,
  // the last merging only (T − 1)//2 = 10; 13 is the paper's usual DeiT-S setting).
  for (int64_t r : {0, 4, 8, 13, 16})
    for (int64_t batch : {1, 8}) {
      const std::string name =
          "tome/r" + std::to_string(r) + "/deit_small_patch16_224/" + std::to_string(batch);
      benchmark::RegisterBenchmark(name.c_str(), forward, std::string("deit_small_patch16_224"),
                                   batch, false, c10::kFloat, r)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(batch == 1 ? 1.0 : 0.3);
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
