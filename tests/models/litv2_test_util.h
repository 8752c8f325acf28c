// Shared helpers of the LITv2 tests: the litv2_mini fixture files, comparisons, and a
// module's state dict as the reference would save it.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <string>

#include "core/io/tensor_file.h"
#include "core/nn/state_loading.h"
#include "models/model_config.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing::litv2_test {

using models::Json;

inline const std::string kName = "litv2_mini";

inline std::string fixture(const std::string& suffix) {
  return parity_dir() + "/" + kName + suffix;
}

inline double relative(const at::Tensor& a, const at::Tensor& ref) {
  return (a.to(at::kDouble) - ref.to(at::kDouble)).norm().item<double>() /
         ref.to(at::kDouble).norm().item<double>();
}

// The state dict as the reference would save it (parameters and buffers).
inline nn::TensorMap state_of(const torch::nn::Module& m) {
  nn::TensorMap out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value().detach().clone();
  for (const auto& b : m.named_buffers()) out[b.key()] = b.value().detach().clone();
  return out;
}

inline Json mini_config() {
  return models::config_from_file(fixture(".config.json"));
}

inline Json metadata_config() {
  return models::config_from_metadata(io::read_tensor_file(fixture(".safetensors")).metadata);
}

}  // namespace attnlab::testing::litv2_test
