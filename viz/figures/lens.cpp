// Logit-lens and linear-probe figures against depth (see lens.h).
#include "viz/figures/lens.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "viz/figures/head_dots.h"

namespace attnlab::viz {
namespace {

// Integer block ticks over [lo, hi] (at most about 12 of them: every k-th block).
void block_axis(Axis& axis, double lo, double hi) {
  axis.label = "block";
  axis.min = lo - 0.5;
  axis.max = hi + 0.5;
  const double step = std::max(1.0, std::ceil((hi - lo + 1) / 12));
  for (double l = lo; l <= hi; l += step) axis.ticks.push_back(l);
}

// A share in [0, 1] with a little room above 1 for the markers.
void share_axis(Axis& axis, const std::string& label) {
  axis.label = label;
  axis.min = 0;
  axis.max = 1.05;
  axis.ticks = {0, 0.25, 0.5, 0.75, 1};
}

void check_models(const std::vector<std::pair<std::string, analysis::Table>>& models,
                  const std::string& who, const std::vector<std::string>& columns) {
  if (models.empty()) throw std::invalid_argument(who + ": no model given");
  for (const auto& [name, table] : models) {
    const Columns cols(table, who + " (" + name + ")");
    for (const auto& c : columns) cols.index(c);
    if (table.rows.empty())
      throw std::invalid_argument(who + ": table \"" + table.name + "\" of " + name +
                                  " has no rows");
  }
}

// The blocks the tables span.
std::pair<double, double> block_range(
    const std::vector<std::pair<std::string, analysis::Table>>& models, const std::string& who) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& [name, table] : models) {
    const Columns cols(table, who);
    for (const auto& row : table.rows) {
      const double l = cols.number(row, "layer");
      if (std::isfinite(l)) lo = std::min(lo, l), hi = std::max(hi, l);
    }
  }
  if (!(lo <= hi)) throw std::invalid_argument(who + ": no finite layer in the tables");
  return {lo, hi};
}

}  // namespace

CaptionedFigure lens_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                            const LensFigureOptions& options) {
  const std::string who = "logit lens figure";
  check_models(models, who, {"layer", "kl_mean", "agrees_mean"});
  const auto [lo, hi] = block_range(models, who);
  Panel kl, agree;
  block_axis(kl.x, lo, hi);
  block_axis(agree.x, lo, hi);
  kl.y.label = "KL(final ‖ block), nats";
  kl.title = "distance to the model's output";
  share_axis(agree.y, "top-1 share");
  kl.grid = agree.grid = true;
  std::vector<double> kls;
  std::vector<std::string> names;
  bool any_label = false;
  for (size_t m = 0; m < models.size(); ++m) {
    const auto& [name, table] = models[m];
    const Columns cols(table, who + " (" + name + ")");
    names.push_back(name);
    const Color color = cycle_color(int(m));
    LineSeries k = layer_series(cols, "kl_mean", color);
    k.label = name;
    kls.insert(kls.end(), k.y.begin(), k.y.end());
    kl.items.push_back(k);
    LineSeries a = layer_series(cols, "agrees_mean", color);
    a.label = name;
    agree.items.push_back(a);
    const bool has_label = std::find(table.columns.begin(), table.columns.end(),
                                     "label_top1_mean") != table.columns.end();
    if (has_label) {
      LineSeries acc = layer_series(cols, "label_top1_mean", color);
      acc.dashed = true;
      if (!acc.y.empty()) agree.items.push_back(acc), any_label = true;
    }
  }
  if (kls.empty()) throw std::invalid_argument(who + ": no finite kl_mean in the tables");
  agree.title =
      any_label ? "top-1 = the model's (solid), = the label (dashed)" : "top-1 = the model's top-1";
  fit_axis(kl.y, kls, /*include_zero=*/true, 0.08);
  kl.legend = models.size() > 1;
  kl.legend_outside = models.size() > kMaxInsideLegend;

  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.cols = 2;
  f.panels = {kl, agree};
  std::string caption =
      "Logit lens for " + name_list(names) +
      ": each block's output read out through the model's own final norm and head (the "
      "class token; both heads averaged for a distilled model; the mean of the grid tokens "
      "for a pooled one; a hierarchical model's last stage only). Left: KL divergence of the "
      "model's output distribution from the block's, in nats (0 at the last block). Right: "
      "the share of images whose block top-1 is the model's final top-1";
  if (any_label) caption += " (solid) and is the given label (dashed)";
  caption += "; means over the images.";
  return {f, caption};
}

CaptionedFigure probe_figure(const std::vector<std::pair<std::string, analysis::Table>>& models,
                             const LensFigureOptions& options) {
  const std::string who = "linear probe figure";
  check_models(models, who, {"layer", "test_accuracy", "train_accuracy", "lens_test_accuracy"});
  const auto [lo, hi] = block_range(models, who);
  Panel p;
  block_axis(p.x, lo, hi);
  share_axis(p.y, "top-1 accuracy");
  p.grid = true;
  p.legend = true;
  std::vector<std::string> names;
  bool any_lens = false;
  for (size_t m = 0; m < models.size(); ++m) {
    const auto& [name, table] = models[m];
    const Columns cols(table, who + " (" + name + ")");
    names.push_back(name);
    // One model: the probe and the lens in two colours; several: a colour per model, the
    // lens dashed.
    const bool one = models.size() == 1;
    const Color color = cycle_color(int(m));
    const std::string prefix = one ? "" : name + ": ";
    LineSeries test = layer_series(cols, "test_accuracy", color);
    test.label = prefix + "probe (test)";
    LineSeries train = layer_series(cols, "train_accuracy", color);
    train.label = prefix + "probe (train)";
    train.dashed = true;
    train.width_pt = 0.7;
    train.markers = false;
    train.color.a = 0.55;
    LineSeries lens = layer_series(cols, "lens_test_accuracy", one ? cycle_color(1) : color);
    lens.label = prefix + "logit lens (test)";
    lens.dashed = true;
    lens.marker_pt = 3.2;
    if (test.y.empty()) throw std::invalid_argument(who + ": no finite test_accuracy for " + name);
    p.items.push_back(test);
    p.items.push_back(train);
    if (!lens.y.empty()) p.items.push_back(lens), any_lens = true;
  }
  p.legend_outside = p.items.size() > 3;

  Figure f;
  f.width_in = options.width_in * 0.6;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.panels = {p};
  std::string caption =
      "Linear probes on each block's readout features for " + name_list(names) +
      " (multinomial logistic regression on the class token, or the mean of the grid tokens, "
      "before the final norm): top-1 accuracy on the held-out images (solid) and on the "
      "training images (thin dashed)";
  caption += any_lens ? "; beside them the logit lens's top-1 accuracy on the same held-out "
                        "images (dashed), where the model's head can read the block."
                      : "; the model has no classifier head to read its blocks with, so there "
                        "is no logit-lens curve.";
  return {f, caption};
}

}  // namespace attnlab::viz
