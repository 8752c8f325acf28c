// See cka_series.h.
#include "app/session/cka_series.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/cka.h"

namespace attnlab::session {

int64_t JointLayerHsic::row(size_t m, size_t l) const {
  int64_t r = 0;
  for (size_t i = 0; i < m; ++i) r += int64_t(layers[i].size());
  return r + int64_t(l);
}

JointLayerHsic joint_layer_hsic(const std::vector<const models::ForwardResult*>& forwards) {
  JointLayerHsic out;
  std::vector<at::Tensor> tokens;
  std::vector<attention::TokenLayout> layouts;
  for (const models::ForwardResult* r : forwards) {
    out.layers.emplace_back();
    for (size_t l = 0; l < r->traces.size(); ++l) {
      const auto& t = r->traces[l];
      tokens.push_back(block_output_tokens(*r, t.path, t.trace->layout, 0));
      layouts.push_back(t.trace->layout);
      out.layers.back().push_back(int64_t(l));
    }
  }
  if (tokens.empty()) throw std::runtime_error("cka: no traced layer");
  const auto features = analysis::common_grid_features(tokens, layouts);
  if (features.front().size(0) < 4)
    throw std::runtime_error("cka: the coarsest grid has fewer than 4 cells");
  out.hsic = analysis::hsic_matrix(features);
  return out;
}

std::vector<analysis::Table> cka_final_tables(const JointLayerHsic& sum, int64_t images) {
  const at::Tensor cka = analysis::cka_from_hsic(sum.hsic);
  const size_t last = sum.layers.size() - 1;
  std::vector<analysis::Table> out;
  for (size_t m = 0; m < sum.layers.size(); ++m) {
    analysis::Table t = make_table(
        "cka_final",
        "linear CKA of each layer's block output with the same layer of the final checkpoint, "
        "on the same images (unbiased HSIC_1 summed over " + std::to_string(images) +
            " image(s), a minibatch per image, layers pooled onto the coarsest grid)",
        {"layer", "cka"}, 1);
    const size_t layers = std::min(sum.layers[m].size(), sum.layers[last].size());
    for (size_t l = 0; l < layers; ++l)
      t.add_row({sum.layers[m][l], cka[sum.row(m, l)][sum.row(last, l)].item<double>()});
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace attnlab::session
