// The CUDA tests (issue 28; label `cuda`: `ctest -L cuda` in a build made by
// scripts/build_cuda.sh). They skip where LibTorch sees no CUDA device, which is every
// machine of this project: what they check has only been run on meta (meta_device_test,
// meta_presets_test, meta_analyses_test) and on the CPU. With a GPU:
// * every reference fixture (../shared/fixtures/parity) run on CUDA gives every tensor the
//   CPU run gives, to 1e-4 (TF32 off: with it, cuDNN convolutions and cuBLAS GEMMs round
//   inputs to 10-bit mantissas and differ by ~1e-3);
// * every mechanism's forward, trace rows, whole matrix, products and head outputs on
//   CUDA equal the CPU's to 1e-4, and stay on the device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/attention/registry.h"
#include "core/nn/state_loading.h"
#include "core/runtime/device.h"
#include "models/attention_module.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "tests/attention/attention_test_util.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

constexpr double kTolerance = 1e-4;

bool skip_without_cuda() {
  if (runtime::cuda_available()) {
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
    return false;
  }
  return true;
}

double host_max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kCPU, at::kDouble) - b.to(at::kCPU, at::kDouble)).abs().max().item<double>();
}

// The fixture's outputs on `device`: a whole model's recorded outputs and logits, or a
// single attention module's outputs (as `attnlab infer` writes them).
std::map<std::string, at::Tensor> run_fixture(const std::string& name, const c10::Device& device) {
  const std::string dir = parity_dir() + "/" + name;
  const models::Json config = models::config_from_file(dir + ".config.json");
  const at::Tensor input =
      nn::read_tensor_map(dir + ".expected.safetensors").at("input").to(at::kFloat);
  const std::string arch = models::get_string(config, "arch", "model", "");
  if (models::is_attention_module_arch(arch))
    return models::run_attention_module(config, nn::read_tensor_map(dir + ".safetensors"),
                                        input.to(device));
  auto model = models::load_model(config, dir + ".safetensors").model;
  model->to(device);
  const at::NoGradGuard no_grad;
  models::ForwardOptions o;
  o.record_outputs = true;
  models::ForwardResult r = model->run(input.to(device), o);
  r.outputs["logits"] = r.logits;
  return r.outputs;
}

TEST(CudaParity, EveryFixtureOnCudaGivesWhatTheCpuGives) {
  if (skip_without_cuda()) GTEST_SKIP() << "no CUDA device in this build / machine";
  int compared = 0;
  for (const auto& e : std::filesystem::directory_iterator(parity_dir())) {
    const std::string file = e.path().filename().string();
    const std::string suffix = ".config.json";
    if (file.size() <= suffix.size() ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string name = file.substr(0, file.size() - suffix.size());
    std::map<std::string, at::Tensor> cpu;
    try {
      cpu = run_fixture(name, c10::Device(c10::kCPU));
    } catch (const models::ModelError&) {
      continue;  // a fixture of a block, not a model or module (swin_block)
    }
    const auto gpu = run_fixture(name, c10::Device(c10::kCUDA, 0));
    ASSERT_EQ(gpu.size(), cpu.size()) << name;
    for (const auto& [key, t] : cpu) {
      ASSERT_TRUE(gpu.at(key).is_cuda()) << name << " " << key;
      EXPECT_LE(host_max_abs_diff(gpu.at(key), t), kTolerance) << name << " " << key;
    }
    ++compared;
  }
  EXPECT_GE(compared, 15);
}

class EveryMechanismOnCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryMechanismOnCuda, RowsMatricesAndProductsEqualTheCpusOnTheDevice) {
  if (skip_without_cuda()) GTEST_SKIP() << "no CUDA device in this build / machine";
  const auto& info = attention::mechanism_info(GetParam());
  attention::MechanismConfig c;
  c.dim = 32;
  c.heads = 2;
  at::manual_seed(5);
  auto m = attention::make_mechanism(GetParam(), c);
  m->eval();
  const attention::TokenLayout layout = registry_test_layout(info);
  const int64_t n = layout.tokens();
  const at::Tensor x = at::randn({2, n, 32}), y = at::randn({n, 3});
  const auto outputs = [&](const c10::Device& d) {
    m->to(d);
    const at::NoGradGuard no_grad;
    auto [out, t] = m->forward_traced(x.to(d), layout);
    const int64_t h = t->heads - 1;
    std::vector<at::Tensor> r{out,
                              t->row(1, n - 1, h).weights,
                              t->matrix(0, h),
                              t->apply(0, 0, y.to(d)),
                              t->apply_transposed(1, h, y.to(d)),
                              t->head_output(1, h)};
    for (const auto& k : t->rank_matrices(1)) r.push_back(k.matrices);
    return r;
  };
  const auto cpu = outputs(c10::Device(c10::kCPU));
  const auto gpu = outputs(c10::Device(c10::kCUDA, 0));
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_TRUE(gpu[i].is_cuda()) << GetParam() << " output " << i;
    EXPECT_LE(host_max_abs_diff(gpu[i], cpu[i]), kTolerance) << GetParam() << " output " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryMechanismOnCuda,
                         ::testing::ValuesIn(attention::mechanism_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace attnlab::testing
