// The linear-CKA figure: one heatmap per model on a shared 0..1 scale.
#include "viz/figures/cka.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figures/head_dots.h"  // name_list

namespace attnlab::viz {

std::vector<float> cka_of_hsic(const analysis::Array& hsic) {
  if (hsic.shape.size() != 2 || hsic.shape[0] != hsic.shape[1] || hsic.shape[0] < 1)
    throw std::invalid_argument("cka figure: \"" + hsic.name + "\" is not an L×L matrix");
  const size_t n = size_t(hsic.shape[0]);
  std::vector<float> out(n * n, NAN);
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b) {
      const double aa = hsic.data[a * n + a], bb = hsic.data[b * n + b];
      if (aa > 0 && bb > 0)
        out[a * n + b] = float(double(hsic.data[a * n + b]) / std::sqrt(aa * bb));
    }
  return out;
}

namespace {

// A heatmap panel of rows × cols values with layer tick labels on both axes.
Panel cka_panel(const std::string& title, const std::vector<int64_t>& row_layers,
                const std::vector<int64_t>& col_layers, std::vector<float> values,
                const std::string& row_label, const std::string& col_label,
                const CkaFigureOptions& options) {
  const int rows = int(row_layers.size()), cols = int(col_layers.size());
  Panel p;
  p.title = title;
  p.image = true;
  p.y.label = row_label;
  p.x.label = col_label;
  p.x.min = p.y.min = -0.5;
  p.x.max = double(cols) - 0.5;
  p.y.max = double(rows) - 0.5;
  const auto ticks = [](Axis& axis, const std::vector<int64_t>& layers) {
    const int step = std::max(1, int(layers.size()) / 8);  // at most about 8 labels
    for (size_t i = 0; i < layers.size(); i += size_t(step)) {
      axis.ticks.push_back(double(i));
      axis.tick_labels.push_back(std::to_string(layers[i]));
    }
  };
  ticks(p.x, col_layers);
  ticks(p.y, row_layers);
  HeatmapLayer h;
  h.rows = rows;
  h.cols = cols;
  h.values = std::move(values);
  h.cmap = options.cmap;
  h.vmin = 0;
  h.vmax = 1;
  h.x0 = h.y0 = -0.5;
  h.x1 = double(cols) - 0.5;
  h.y1 = double(rows) - 0.5;
  p.items.emplace_back(std::move(h));
  return p;
}

}  // namespace

CaptionedFigure cka_pairs_figure(const std::vector<CkaPair>& pairs,
                                 const CkaFigureOptions& options) {
  if (pairs.empty()) throw std::invalid_argument("cka pairs figure: no pair of models given");
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = std::min<int>(options.max_cols, int(pairs.size()));
  for (const auto& pr : pairs) {
    if (pr.cka.size() != pr.layers_a.size() * pr.layers_b.size() || pr.cka.empty())
      throw std::invalid_argument("cka pairs figure: " + pr.model_a + " vs " + pr.model_b +
                                  " holds " + std::to_string(pr.cka.size()) + " values for " +
                                  std::to_string(pr.layers_a.size()) + "×" +
                                  std::to_string(pr.layers_b.size()) + " layers");
    f.panels.push_back(cka_panel(pr.model_a + " vs " + pr.model_b, pr.layers_a, pr.layers_b,
                                 pr.cka, pr.model_a + " layer", pr.model_b + " layer", options));
  }
  f.colorbar = ColorbarSpec{options.cmap, 0, 1, "linear CKA"};
  f.height_in = 2.4 * double(f.rows()) + 0.3;
  f.height_in = fitted_height_in(f);
  const std::string caption =
      "Linear CKA between the layers of two models on the same images (rows: the first model's "
      "layers, columns: the second's; each its block's output), from the unbiased HSIC_1 of the "
      "layers' token Grams summed over the images, all layers pooled by area onto the coarsest "
      "grid among them (Nguyen et al. 2021's estimator, a minibatch per image). Each model sees "
      "the image through its own preprocessing, so tokens correspond as far as the crops agree.";
  return {f, caption};
}

CaptionedFigure cka_figure(const std::vector<CkaModel>& models, const CkaFigureOptions& options) {
  if (models.empty()) throw std::invalid_argument("cka figure: no model given");
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = std::min<int>(options.max_cols, int(models.size()));
  std::vector<std::string> names;
  for (const auto& m : models) {
    const std::vector<float> cka = cka_of_hsic(m.hsic);
    const int n = int(m.hsic.shape[0]);
    if (int64_t(m.layers.data.size()) != n)
      throw std::invalid_argument("cka figure: " + m.name + "'s layer list does not match its " +
                                  std::to_string(n) + "×" + std::to_string(n) + " matrix");
    std::vector<int64_t> layer_ids;
    for (float v : m.layers.data) layer_ids.push_back(int64_t(std::lround(v)));
    f.panels.push_back(cka_panel(m.name, layer_ids, layer_ids, cka, "layer", "layer", options));
    names.push_back(m.name);
  }
  f.colorbar = ColorbarSpec{options.cmap, 0, 1, "linear CKA"};
  f.height_in = 2.4 * double(f.rows()) + 0.3;
  f.height_in = fitted_height_in(f);
  const std::string caption =
      "Linear CKA between every pair of layers of " + name_list(names) +
      " (row and column: the traced layer, its block's output), from the unbiased HSIC_1 of the "
      "layers' token Grams averaged over the images, each image a minibatch of its grid tokens "
      "(Nguyen et al. 2021's estimator; hierarchical stages pooled onto the coarsest grid). 1: "
      "the same representation up to rotation and scale.";
  return {f, caption};
}

}  // namespace attnlab::viz
