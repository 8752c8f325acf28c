// Every preset backbone on CUDA (label cuda; skips without a CUDA device): random weights,
// one 224×224 image, the traced forward on the device against the CPU at fp32 (TF32 off:
// ≤ 1e-4 of the largest logit) with every trace's tensors on the device, and at bf16
// (Backbone::set_precision: ≤ 5 % of the largest logit, as on the CPU in
// tests/models/precision_test.cpp). Measured on an H200 through bench/gpu_check: 2.8e-6 and
// 1.7 % at most (docs/benchmarks/h200_gpu_check_presets.log).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/runtime/device.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/preset_names.h"

namespace attnlab::testing {
namespace {

double relative_to_largest(const at::Tensor& reference, const at::Tensor& other) {
  const at::Tensor a = reference.to(at::kCPU, at::kDouble), b = other.to(at::kCPU, at::kDouble);
  return (a - b).abs().max().item<double>() / a.abs().max().item<double>();
}

class EveryPresetOnCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPresetOnCuda, Fp32MatchesTheCpuAndBf16StaysClose) {
  if (!runtime::cuda_available()) GTEST_SKIP() << "no CUDA device in this build / machine";
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setAllowTF32CuDNN(false);
  const c10::Device cuda(c10::kCUDA, 0);
  at::manual_seed(0);
  auto model = models::make_backbone(models::find_preset(GetParam()).config);
  model->eval();
  at::manual_seed(1);
  const at::Tensor image = at::randn({1, 3, 224, 224});
  models::ForwardOptions o;
  o.trace_attention = true;
  const at::NoGradGuard no_grad;
  const models::ForwardResult cpu = model->run(image, o);
  model->to(cuda);
  const models::ForwardResult gpu = model->run(image.to(cuda), o);
  EXPECT_LE(relative_to_largest(cpu.logits, gpu.logits), 1e-4) << GetParam();
  ASSERT_EQ(gpu.traces.size(), cpu.traces.size());
  for (const auto& t : gpu.traces)
    for (const auto& g : t.trace->groups) EXPECT_TRUE(g.q.is_cuda() && g.k.is_cuda()) << t.path;
  model->set_precision(at::kBFloat16);
  const models::ForwardResult bf16 = model->run(image.to(cuda), o);
  EXPECT_EQ(bf16.logits.scalar_type(), at::kBFloat16);
  EXPECT_LE(relative_to_largest(cpu.logits, bf16.logits), 0.05) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Presets, EveryPresetOnCuda, ::testing::ValuesIn(preset_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace attnlab::testing
