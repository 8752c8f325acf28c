// The mechanisms whose forward calls the softmax core (core/attention/fused_attention.h),
// one or more configurations each, with what the mechanism does to each core call's output
// before it leaves the layer: shared by the fused-against-eager numerics
// (fused_mechanism_test.cpp) and the path tests (fused_paths_test.cpp). The list is checked
// against the registry there: a mechanism that calls the core without a case fails.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/fused_attention.h"
#include "core/attention/registry.h"

namespace attnlab::testing {

struct FusedCase {
  std::string label;
  std::string mechanism;
  std::map<std::string, double> options;
  attention::TokenLayout layout;
  // Per core call, in the order the forward makes them: the parameter prefix of the
  // projection (Linear, or 1×1 Conv2d) its output goes through; merging heads, reversing
  // windows, cropping padding and concatenating branches in between only move values.
  std::vector<std::string> projections;
  // softmax_rope: ((core + lepe) ⊙ o) before the projection, lepe and o read from the
  // trace's internals "softmax_rope.lepe" and "softmax_rope.o".
  bool gated = false;
};

constexpr int64_t kFusedCaseDim = 16, kFusedCaseHeads = 2;  // head dim 8

inline std::vector<FusedCase> fused_cases() {
  attention::TokenLayout with_cls = attention::grid_layout(4, 4);
  with_cls.prefix = {"cls"};  // 17 queries: no multiple of any kernel block
  return {
      {"softmax", "softmax", {}, with_cls, {"proj"}},
      {"softmax, MultiheadAttention layout",
       "softmax",
       {{"mha_layout", 1}},
       with_cls,
       {"out_proj"}},
      // Its per-head q, k, v are transposed views of a convolution's output (strided rows).
      {"softmax_rope", "softmax_rope", {}, attention::grid_layout(4, 5), {"proj"}, true},
      // 24 queries against 2×3 reduced keys.
      {"sra, R = 2", "sra", {{"sr_ratio", 2}}, attention::grid_layout(4, 6), {"proj"}},
      // Four 3×3 windows with the relative position bias.
      {"swin, W-MSA", "swin", {{"window", 3}}, attention::grid_layout(6, 6), {"proj"}},
      // 5×7 padded to 6×9, shifted by 1: six windows, the bias and the -100 mask.
      {"swin, SW-MSA padded",
       "swin",
       {{"window", 3}, {"shift", 1}},
       attention::grid_layout(5, 7),
       {"proj"}},
      // One Hi-Fi head in 2×2 windows (called first), one Lo-Fi head on 3×3 pooled keys;
      // 5×5 padded to 6×6.
      {"hilo",
       "hilo",
       {{"window", 2}, {"alpha", 0.5}},
       attention::grid_layout(5, 5),
       {"h_proj", "l_proj"}},
  };
}

// "" where softmax_attention takes the fused path, else why not (not built: LibTorch 1.13;
// or switched off by ATTNLAB_FUSED_ATTENTION=0).
inline std::string fused_path_unavailable() {
  if (attention::fused_attention_enabled()) return "";
  if (!attention::fused_attention_built()) return attention::fused_attention_description();
  return "ATTNLAB_FUSED_ATTENTION switches the fused path off";
}

inline std::shared_ptr<attention::AttentionMechanism> make_fused_case(const FusedCase& c) {
  attention::MechanismConfig config;
  config.dim = kFusedCaseDim;
  config.heads = kFusedCaseHeads;
  config.options = c.options;
  auto m = attention::make_mechanism(c.mechanism, config);
  m->eval();
  return m;
}

// Every floating-point parameter drawn again: a matrix or kernel from N(0, 1/fan_in), so q
// and k have entries of about 1 and the scores are spread (max ~3: neither uniform rows,
// where a wrong scale would not show, nor one-hot ones, where a wrong mask might not); a
// vector (bias, norm) from N(0, 1/4). The mechanisms' own initialisations (std 0.02 for
// Swin's bias table, timm's small weights) make scores nearly zero.
inline void redraw_parameters(attention::AttentionMechanism& m, uint64_t seed) {
  at::manual_seed(seed);
  at::NoGradGuard no_grad;
  for (auto& p : m.named_parameters()) {
    at::Tensor t = p.value();
    if (!t.is_floating_point()) continue;
    const double fan_in = t.dim() >= 2 ? double(t.numel() / t.size(0)) : 4.0;
    t.copy_(at::randn(t.sizes()) / std::sqrt(fan_in));
  }
}

// `to`'s floating-point parameters and buffers become `from`'s, converted to `dtype`: `from`
// and `to` are two instances of one configuration, or one instance converted in place.
inline void copy_floating_state(const attention::AttentionMechanism& from,
                                attention::AttentionMechanism& to, at::ScalarType dtype) {
  at::NoGradGuard no_grad;
  const auto params = from.named_parameters();
  const auto buffers = from.named_buffers();
  auto set = [&](at::Tensor& target, const at::Tensor& source) {
    const at::Tensor converted = source.to(dtype);  // itself when converted already
    if (target.is_floating_point() && !converted.is_same(target)) target.set_data(converted);
  };
  for (auto& p : to.named_parameters()) set(p.value(), params[p.key()]);
  for (auto& b : to.named_buffers()) set(b.value(), buffers[b.key()]);
}

}  // namespace attnlab::testing
