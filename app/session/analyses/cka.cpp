// cka: linear CKA between every pair of layers of a model (core/analysis/cka.h): per image
// the unbiased HSIC_1 of each pair of layers' block outputs, the image's grid tokens as
// examples (pooled onto the coarsest grid for hierarchical models), averaged over the
// images; CKA = mean HSIC_lm / √(mean HSIC_ll · mean HSIC_mm) (Nguyen et al. 2021's
// minibatch estimator, a minibatch per image) in the derived table cka_layers. Figure: the
// layers × layers heatmap per model; the GUI's CKA tab for the current model and image.
// Its figures (report, series, GUI tab): cka_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/cka.h"

namespace attnlab::session {
namespace {

const analysis::ResultKey kHsicKey{"cka", "", -1, "", "", "hsic"};
const analysis::ResultKey kLayersKey{"cka", "", -1, "", "", "layers"};

void add_cka(ImageStep& s) {
  std::vector<at::Tensor> tokens;
  std::vector<attention::TokenLayout> layouts;
  std::vector<double> indices;
  for (const auto& l : s.layers) {
    tokens.push_back(block_output_tokens(s.result, l.path, l.trace->layout, s.b));
    layouts.push_back(l.trace->layout);
    indices.push_back(double(l.index));
  }
  const std::vector<at::Tensor> features = analysis::common_grid_features(tokens, layouts);
  if (features.front().size(0) < 4)
    throw attention::TraceQueryError("cka: the coarsest grid has fewer than 4 cells");
  s.session.add_sum(analysis::format_result_key(kHsicKey),
                    "unbiased HSIC_1 (Song et al. 2012) of the linear-kernel Grams of every pair "
                    "of analysed layers' block outputs, the image's grid tokens as examples",
                    {"layer_a", "layer_b"}, analysis::hsic_matrix(features));
  s.session.add_sum(analysis::format_result_key(kLayersKey),
                    "the traced-layer index of each row and column of cka__hsic", {"layer"},
                    at::tensor(indices, at::kDouble));
}

std::vector<analysis::Table> cka_tables(const std::vector<analysis::Array>& means) {
  const analysis::Array *hsic = nullptr, *layers = nullptr;
  for (const auto& a : means) {
    if (a.name == analysis::format_result_key(kHsicKey)) hsic = &a;
    if (a.name == analysis::format_result_key(kLayersKey)) layers = &a;
  }
  if (!hsic || !layers) return {};
  const int64_t n = hsic->shape[0];
  const at::Tensor h =
      at::tensor(std::vector<double>(hsic->data.begin(), hsic->data.end())).reshape({n, n});
  const at::Tensor cka = analysis::cka_from_hsic(h);
  analysis::Table t = make_table(
      "cka_layers",
      "linear CKA between layers: mean over the images of the unbiased HSIC_1 of the two "
      "layers' token Grams, divided by the square root of the same for each layer with itself "
      "(Nguyen et al. 2021's minibatch estimator, one image a minibatch; its grid tokens the "
      "examples, pooled onto the coarsest grid)",
      {"layer_a", "layer_b", "hsic", "cka"}, 2);
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b)
      t.add_row({int64_t(layers->data[size_t(a)]), int64_t(layers->data[size_t(b)]),
                 h[a][b].item<double>(), cka[a][b].item<double>()});
  return {t};
}

}  // namespace

AnalysisInfo cka_analysis() {
  AnalysisInfo info;
  info.name = "cka";
  info.summary = "linear CKA between every pair of layers (unbiased minibatch HSIC)";
  info.tables = {"cka_layers", "cka_final"};  // cka_final: over a series only
  info.arrays = {"cka__hsic", "cka__layers"};
  info.key_shape = analysis::ResultKeyShape{false, false, false, false, true};
  info.needs_outputs = true;
  info.in_image_analysis = true;
  // Over a series: each layer's CKA with the same layer of the final checkpoint
  // (analyse_series' own pass: every checkpoint on the same images).
  info.series = true;
  info.add = add_cka;
  info.derived_tables = cka_tables;
  return info;
}

}  // namespace attnlab::session
