// The linear-CKA figure: one heatmap per model on a shared 0..1 scale.
#include "viz/figures/cka.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {

std::vector<float> cka_of_hsic(const analysis::Array& hsic) {
  if (hsic.shape.size() != 2 || hsic.shape[0] != hsic.shape[1] || hsic.shape[0] < 1)
    throw std::invalid_argument("cka figure: \"" + hsic.name + "\" is not an L×L matrix");
  const size_t n = size_t(hsic.shape[0]);
  std::vector<float> out(n * n, NAN);
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b) {
      const double aa = hsic.data[a * n + a], bb = hsic.data[b * n + b];
      if (aa > 0 && bb > 0) out[a * n + b] = float(hsic.data[a * n + b] / std::sqrt(aa * bb));
    }
  return out;
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
    Panel p;
    p.title = m.name;
    p.image = true;
    p.x.label = p.y.label = "layer";
    p.x.min = p.y.min = -0.5;
    p.x.max = p.y.max = double(n) - 0.5;
    const int step = std::max(1, n / 8);  // at most about 8 labelled ticks
    for (int i = 0; i < n; i += step) {
      p.x.ticks.push_back(i);
      p.x.tick_labels.push_back(std::to_string(int(std::lround(m.layers.data[size_t(i)]))));
    }
    p.y.ticks = p.x.ticks;
    p.y.tick_labels = p.x.tick_labels;
    HeatmapLayer h;
    h.rows = h.cols = n;
    h.values = cka;
    h.cmap = options.cmap;
    h.vmin = 0;
    h.vmax = 1;
    h.x0 = h.y0 = -0.5;
    h.x1 = h.y1 = double(n) - 0.5;
    p.items.emplace_back(std::move(h));
    f.panels.push_back(std::move(p));
    names.push_back(m.name);
  }
  f.colorbar = ColorbarSpec{options.cmap, 0, 1, "linear CKA"};
  f.height_in = 2.4 * double(f.rows()) + 0.3;
  f.height_in = fitted_height_in(f);
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i ? (i + 1 == names.size() ? " and " : ", ") : "") + names[i];
  const std::string caption =
      "Linear CKA between every pair of layers of " + list +
      " (row and column: the traced layer, its block's output), from the unbiased HSIC_1 of the "
      "layers' token Grams averaged over the images, each image a minibatch of its grid tokens "
      "(Nguyen et al. 2021's estimator; hierarchical stages pooled onto the coarsest grid). 1: "
      "the same representation up to rotation and scale.";
  return {f, caption};
}

}  // namespace attnlab::viz
