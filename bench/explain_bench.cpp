// Class-specific explanations on CPU against the plain forward pass in the same run, for
// one isotropic and two hierarchical presets at 224 (random weights, eval, batch 1):
// Grad-CAM (a traced forward with the target tapped, one backward pass) and gradient
// rollout (every layer through its explicit attention form, one backward pass, the
// rollout), and the effective receptive field (a traced forward with the input requiring
// grad, one backward pass to the pixels). Results and ratios: docs/BENCHMARKS.md.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include "bench/preset_model.h"
#include "models/grad_rollout_run.h"
#include "models/erf_run.h"
#include "models/gradcam_run.h"

namespace {

using namespace attnlab;

void BM_Forward(benchmark::State& state, const std::string& preset) {
  at::NoGradGuard no_grad;
  auto model = bench::preset_model(preset);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  model->run(x);
  for (auto _ : state) benchmark::DoNotOptimize(model->run(x).logits);
}

void BM_GradCam(benchmark::State& state, const std::string& preset) {
  auto model = bench::preset_model(preset);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  models::run_grad_cam(*model, x);
  for (auto _ : state) benchmark::DoNotOptimize(models::run_grad_cam(*model, x).map);
}

void BM_GradRollout(benchmark::State& state, const std::string& preset) {
  auto model = bench::preset_model(preset);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  models::run_grad_rollout(*model, x);
  for (auto _ : state) benchmark::DoNotOptimize(models::run_grad_rollout(*model, x).map);
}

void BM_Erf(benchmark::State& state, const std::string& preset) {
  auto model = bench::preset_model(preset);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  models::run_erf(*model, x);
  for (auto _ : state) benchmark::DoNotOptimize(models::run_erf(*model, x).map);
}

#define ATTNLAB_EXPLAIN_BENCH(fn)                                          \
  BENCHMARK_CAPTURE(fn, deit_small, std::string("deit_small_patch16_224")) \
      ->Unit(benchmark::kMillisecond)                                      \
      ->UseRealTime();                                                     \
  BENCHMARK_CAPTURE(fn, litv2_s, std::string("litv2_s"))                   \
      ->Unit(benchmark::kMillisecond)                                      \
      ->UseRealTime();                                                     \
  BENCHMARK_CAPTURE(fn, ravlt_s, std::string("ravlt_s"))                   \
      ->Unit(benchmark::kMillisecond)                                      \
      ->UseRealTime();

ATTNLAB_EXPLAIN_BENCH(BM_Forward)
ATTNLAB_EXPLAIN_BENCH(BM_GradCam)
ATTNLAB_EXPLAIN_BENCH(BM_GradRollout)
ATTNLAB_EXPLAIN_BENCH(BM_Erf)

}  // namespace

BENCHMARK_MAIN();
