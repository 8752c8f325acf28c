// Helpers shared by the tests of RAVLT's two attention forms (rala, softmax_rope).
#pragma once

#include <string>
#include <vector>

#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {

// The attention input of block 0 of RAVLT stage `stage` from that stage's input image:
// x + pos(x) (depthwise 3×3 CPE), then norm1 over channels; as tokens (B, H·W, C).
inline at::Tensor ravlt_block0_input(const at::Tensor& image, const nn::TensorMap& w, int stage) {
  const std::string p = "layers." + std::to_string(stage) + ".blocks.0.";
  at::Tensor x = image + at::conv2d(image, w.at(p + "pos.weight"), w.at(p + "pos.bias"), {1, 1},
                                    {1, 1}, {1, 1}, image.size(1));
  return layer_norm(x.flatten(2).transpose(1, 2), w, p + "norm1.norm", 1e-6);
}

// proj(((rows·v) + lepe) ⊙ o) for image b, rebuilt head by head from a trace whose
// internals `<prefix>.lepe` and `<prefix>.o` hold the per-head LePE and gate: (N, C).
inline at::Tensor rebuild_ravlt_output(const attention::AttentionTrace& t,
                                       attention::AttentionMechanism& m, int64_t b,
                                       const std::string& prefix) {
  std::vector<at::Tensor> heads;
  for (int64_t h = 0; h < t.heads; ++h)
    heads.push_back((rows_times_v(t, b, h) + t.internal(prefix + ".lepe")[b][h]) *
                    t.internal(prefix + ".o")[b][h]);
  const auto params = m.named_parameters();
  const at::Tensor proj = params["proj.weight"];
  return at::linear(at::cat(heads, -1), proj.reshape({proj.size(0), proj.size(1)}),
                    params["proj.bias"]);
}

}  // namespace attnlab::testing
