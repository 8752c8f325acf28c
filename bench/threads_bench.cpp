// Why attnlab sets LibTorch's thread count at start-up: a ViT-sized matmul (197 tokens
// x 768 -> 2304, the qkv projection of DeiT-Base) and a softmax-attention block at 1
// thread (LibTorch's default here) against all cores. The 1-thread run is the baseline.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <thread>

#include "core/runtime/threads.h"

namespace {

void qkv_matmul(benchmark::State& state) {
  attnlab::runtime::configure_threads(int(state.range(0)));
  at::Tensor x = at::randn({8, 197, 768});
  at::Tensor w = at::randn({2304, 768});
  for (auto _ : state) benchmark::DoNotOptimize(at::matmul(x, w.t()));
  state.counters["threads"] = double(attnlab::runtime::current_threads());
}

void softmax_attention(benchmark::State& state) {
  attnlab::runtime::configure_threads(int(state.range(0)));
  at::Tensor q = at::randn({8, 12, 197, 64}), k = at::randn({8, 12, 197, 64}),
             v = at::randn({8, 12, 197, 64});
  for (auto _ : state)
    benchmark::DoNotOptimize(
        at::matmul(at::softmax(at::matmul(q, k.transpose(-2, -1)) * 0.125, -1), v));
  state.counters["threads"] = double(attnlab::runtime::current_threads());
}

int all_cores() {
  return std::max(1, int(std::thread::hardware_concurrency()));
}

}  // namespace

BENCHMARK(qkv_matmul)->Arg(1)->Arg(all_cores())->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(softmax_attention)
    ->Arg(1)
    ->Arg(all_cores())
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
