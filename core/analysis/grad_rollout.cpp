// See grad_rollout.h.
#include "core/analysis/grad_rollout.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace attnlab::analysis {

using attention::AttentionTrace;
using attention::TokenLayout;

namespace {

void check_layer(const GradientLayer& layer, size_t index, int64_t b) {
  const std::string where = "gradient rollout: layer " + std::to_string(index);
  if (!layer.trace) throw std::invalid_argument(where + " has no trace");
  const AttentionTrace& t = *layer.trace;
  if (static_cast<int64_t>(t.explicit_rows.size()) != t.heads)
    throw std::invalid_argument(where + " (" + t.mechanism +
                                ") was not run through its explicit form "
                                "(TraceOptions::explicit_attention)");
  if (layer.gradients.size() != t.explicit_rows.size())
    throw std::invalid_argument(where + " has " + std::to_string(layer.gradients.size()) +
                                " gradients for " + std::to_string(t.heads) + " heads");
  for (size_t h = 0; h < layer.gradients.size(); ++h)
    if (!layer.gradients[h].sizes().equals(t.explicit_rows[h].sizes()))
      throw std::invalid_argument(where + ", head " + std::to_string(h) +
                                  ": the gradient's shape differs from the attention's");
  if (b < 0 || b >= t.batch)
    throw std::invalid_argument(where + ": image " + std::to_string(b) + " is out of range");
}

// The rows of R the classifier reads, as weights over the last layer's tokens (their mean),
// and their description.
std::pair<at::Tensor, std::string> readout(const TokenLayout& last) {
  const int64_t p = last.num_prefix(), n = last.tokens();
  if (p == 0)
    return {at::full({n}, 1.0 / double(n), at::kDouble),
            "mean of all rows (the classifier pools every token)"};
  std::string names;
  for (const auto& name : last.prefix) names += (names.empty() ? "" : " and ") + name;
  at::Tensor u = at::zeros({n}, at::kDouble);
  u.slice(0, 0, p).fill_(1.0 / double(p));
  return {u, (p == 1 ? "the " + names + " row" : "mean of the " + names + " rows")};
}

}  // namespace

at::Tensor gradient_weighted_map(const GradientLayer& layer, int64_t b, HeadFusion fusion) {
  check_layer(layer, 0, b);
  const AttentionTrace& t = *layer.trace;
  std::vector<at::Tensor> heads;
  for (int64_t h = 0; h < t.heads; ++h) {
    const auto hs = static_cast<size_t>(h);
    const at::Tensor weighted =
        (t.explicit_rows[hs][b].detach() * layer.gradients[hs][b].detach()).clamp_min(0.0);
    heads.push_back(attention::rows_on_tokens(weighted, t.group_of(h).keys, t.layout)
                        .to(at::kCPU, at::kDouble));
  }
  return fuse_heads(at::stack(heads), fusion);
}

GradRolloutResult gradient_rollout(const std::vector<GradientLayer>& layers, int64_t b,
                                   const RolloutOptions& options) {
  if (layers.empty()) throw std::invalid_argument("gradient rollout needs at least one layer");
  std::vector<FusedLayer> fused;
  for (size_t l = 0; l < layers.size(); ++l) {
    check_layer(layers[l], l, b);
    fused.push_back({layers[l].trace->layout, gradient_weighted_map(layers[l], b, options.fusion)});
  }
  auto [rows, description] = readout(fused.back().layout);
  const at::Tensor weights = rollout_readout(fused, rows, options);  // (N_first,)
  GradRolloutResult out;
  out.options = options;
  out.layout = fused.front().layout;
  out.readout = description;
  out.map = weights.slice(0, out.layout.num_prefix())
                .reshape({out.layout.height, out.layout.width})
                .contiguous();
  return out;
}

}  // namespace attnlab::analysis
