// Shared helpers for the attention tests: fixture loading, comparisons, a reference
// LayerNorm/MLP for reconstructing a block's input, and "rows · V" reassembly.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "core/attention/registry.h"
#include "core/nn/state_loading.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {

inline nn::TensorMap parity_weights(const std::string& name) {
  return nn::read_tensor_map(parity_dir() + "/" + name + ".safetensors");
}
inline nn::TensorMap parity_expected(const std::string& name) {
  return nn::read_tensor_map(parity_dir() + "/" + name + ".expected.safetensors");
}

inline std::shared_ptr<attention::AttentionMechanism> make(
    const std::string& name, int64_t dim, int64_t heads,
    std::map<std::string, double> options = {}) {
  attention::MechanismConfig c;
  c.dim = dim;
  c.heads = heads;
  c.options = std::move(options);
  return attention::make_mechanism(name, c);
}

// Load `prefix`-named weights of a parity fixture into a mechanism (strict).
inline void load_from(attention::AttentionMechanism& m, const nn::TensorMap& w,
                      const std::string& prefix) {
  nn::load_state(m, w, prefix);
}

inline at::Tensor layer_norm(const at::Tensor& x, const nn::TensorMap& w, const std::string& p,
                             double eps) {
  return at::layer_norm(x, {x.size(-1)}, w.at(p + ".weight"), w.at(p + ".bias"), eps);
}

// timm Mlp: fc2(gelu(fc1(x))), exact-erf GELU.
inline at::Tensor timm_mlp(const at::Tensor& x, const nn::TensorMap& w, const std::string& p) {
  at::Tensor h = at::gelu(at::linear(x, w.at(p + ".fc1.weight"), w.at(p + ".fc1.bias")));
  return at::linear(h, w.at(p + ".fc2.weight"), w.at(p + ".fc2.bias"));
}

// For one image b and one head: (all layout tokens' implicit rows) · (that head's V),
// shape (N, d) — the token mixing the mechanism performs, rebuilt from its rows.
inline at::Tensor rows_times_v(const attention::AttentionTrace& t, int64_t b, int64_t head) {
  const auto& g = t.group_of(head);
  return at::matmul(t.matrix(b, head), g.v[b][head - g.first_head]);
}

// The layout the registry-wide tests run every mechanism on (interface, meta device,
// CUDA): a 6×4 grid, plus a cls token where the mechanism accepts prefix tokens.
inline attention::TokenLayout registry_test_layout(const attention::MechanismInfo& info) {
  attention::TokenLayout l = attention::grid_layout(6, 4);
  if (!info.needs_grid) l.prefix = {"cls"};
  return l;
}

// Random tokens (B, N, C) with a fixed seed.
inline at::Tensor random_tokens(int64_t b, int64_t n, int64_t c, uint64_t seed = 7) {
  at::manual_seed(seed);
  return at::randn({b, n, c});
}

}  // namespace attnlab::testing
