// Every registered attention mechanism at ViT-Small width (C = 384, h = 6) on square token
// grids of N = 196, 784, 3136, 12544 (14² … 112²), batch 1, eval, no autograd:
//   forward/<mech>/<N>  latency of one forward, and the peak CPU memory it allocated
//                       (counter peak_MiB, from runtime::CpuMemoryProbe)
//   row/<mech>/<N>      latency of one implicit-attention row query (centre token, head 0)
//                       on a trace taken beforehand
// Run with --benchmark_repetitions=3 --benchmark_report_aggregates_only=true (medians are
// tabulated). softmax is the baseline; bench/attention_table.py turns the JSON output into the
// ratio table of docs/BENCHMARKS.md. ATTNLAB_BENCH_DEVICE=cuda runs on the GPU (peak
// memory is then not measured here).
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "core/attention/registry.h"
#include "core/runtime/device.h"
#include "core/runtime/memory_probe.h"
#include "core/runtime/threads.h"

namespace {

using namespace attnlab;

constexpr int64_t kDim = 384;
constexpr int64_t kHeads = 6;

c10::Device bench_device() {
  const char* env = std::getenv("ATTNLAB_BENCH_DEVICE");
  return runtime::select_device(env && *env ? env : "cpu");
}

void sync(const c10::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize(d.index());
}

struct Setup {
  std::shared_ptr<attention::AttentionMechanism> mech;
  attention::TokenLayout layout;
  at::Tensor x;
};

Setup make_setup(const std::string& name, int64_t side, const c10::Device& device) {
  attention::MechanismConfig config;
  config.dim = kDim;
  config.heads = kHeads;
  Setup s{attention::make_mechanism(name, config), attention::grid_layout(side, side), {}};
  s.mech->eval();
  s.mech->to(device);
  at::manual_seed(0);
  s.x = at::randn({1, side * side, kDim}).to(device);
  return s;
}

void forward(benchmark::State& state, const std::string& name, int64_t side) {
  at::NoGradGuard no_grad;
  const c10::Device device = bench_device();
  Setup s = make_setup(name, side, device);
  std::unique_ptr<runtime::CpuMemoryProbe> probe;
  if (!device.is_cuda()) probe = std::make_unique<runtime::CpuMemoryProbe>();
  // One untimed forward first: one-time costs (oneDNN primitive creation, first-touch
  // page faults of the allocator's pools) are not what this measures.
  benchmark::DoNotOptimize(s.mech->forward(s.x, s.layout).data_ptr());
  sync(device);
  int64_t peak = 0;
  for (auto _ : state) {
    if (probe) probe->reset_peak();
    const int64_t before = probe ? probe->live_bytes() : 0;
    at::Tensor out = s.mech->forward(s.x, s.layout);
    sync(device);
    if (probe) peak = std::max(peak, probe->peak_bytes() - before);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.counters["N"] = double(side * side);
  if (probe) state.counters["peak_MiB"] = double(peak) / (1024.0 * 1024.0);
}

void row_query(benchmark::State& state, const std::string& name, int64_t side) {
  at::NoGradGuard no_grad;
  const c10::Device device = bench_device();
  Setup s = make_setup(name, side, device);
  auto traced = s.mech->forward_traced(s.x, s.layout);
  const int64_t centre = s.layout.token_at(side / 2, side / 2);
  for (auto _ : state) {
    auto row = traced.trace->row(0, centre, 0);
    sync(device);
    benchmark::DoNotOptimize(row.weights.data_ptr());
  }
  state.counters["N"] = double(side * side);
}

}  // namespace

int main(int argc, char** argv) {
  runtime::configure_threads(0);
  for (const auto& name : attention::mechanism_names()) {
    for (int64_t side : {14, 28, 56, 112}) {
      const std::string n = std::to_string(side * side);
      benchmark::RegisterBenchmark(("forward/" + name + "/" + n).c_str(), forward, name, side)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(1.0);
      benchmark::RegisterBenchmark(("row/" + name + "/" + n).c_str(), row_query, name, side)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
