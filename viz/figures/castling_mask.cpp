// The Castling mask-sparsity figure: non-zero fraction of the auxiliary mask per layer
// along the checkpoints of a training run.
#include "viz/figures/castling_mask.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace attnlab::viz {

CaptionedFigure castling_mask_figure(const std::vector<analysis::Table>& tables,
                                     const CastlingMaskFigureOptions& options) {
  const std::string who = "castling mask figure";
  const analysis::Table& t = find_table(tables, "mask_heads_series", who);
  const Columns cols(t, who);
  for (const char* c : {"step", "layer", "head", "fraction_mean", "fraction_std"}) cols.index(c);
  const bool has_thr =
      std::find(t.columns.begin(), t.columns.end(), "threshold_mean") != t.columns.end();
  const double scale = options.percent ? 100.0 : 1.0;

  struct Line {
    std::vector<double> step, y, err;
  };
  std::map<int64_t, Line> lines;  // by layer
  std::vector<double> ys, steps, thresholds;
  for (const auto& row : t.rows) {
    if (cols.text(row, "head") != "all") continue;
    const double layer = cols.number(row, "layer"), step = cols.number(row, "step");
    const double y = cols.number(row, "fraction_mean") * scale,
                 e = cols.number(row, "fraction_std") * scale;
    if (!std::isfinite(layer) || !std::isfinite(step)) continue;
    Line& l = lines[int64_t(std::llround(layer))];
    l.step.push_back(step);
    l.y.push_back(y);
    l.err.push_back(e);
    ys.push_back(y + (std::isfinite(e) ? e : 0.0));
    steps.push_back(step);
    if (has_thr) {
      const double thr = cols.number(row, "threshold_mean");
      if (std::find(thresholds.begin(), thresholds.end(), thr) == thresholds.end())
        thresholds.push_back(thr);
    }
  }
  if (lines.empty())
    throw std::invalid_argument(who + ": table \"" + t.name + "\" has no rows with head \"all\"");

  Panel p;
  p.x.label = "training step";
  p.y.label = options.percent ? "mask non-zero entries (%)" : "mask non-zero fraction";
  p.grid = true;
  p.legend = true;
  int i = 0;
  const double xspan =
      *std::max_element(steps.begin(), steps.end()) - *std::min_element(steps.begin(), steps.end());
  for (auto& [layer, l] : lines) {
    // Rows come in checkpoint order; plot them in step order.
    std::vector<size_t> order(l.step.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    // A reference, not the binding: C++17 lambdas cannot capture structured bindings (clang).
    const auto& steps_of_line = l.step;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return steps_of_line[a] < steps_of_line[b]; });
    LineSeries s;
    s.color = cycle_color(i++);
    s.markers = true;
    s.marker_pt = 3;
    s.label = "layer " + std::to_string(layer);
    std::vector<double> err;
    for (size_t k : order) {
      s.x.push_back(l.step[k]);
      s.y.push_back(l.y[k]);
      err.push_back(l.err[k]);
    }
    if (options.error_bars) add_error_bars(p, s.x, s.y, err, s.color, xspan * 0.006);
    p.items.push_back(s);
  }
  fit_axis(p.x, steps, false, 0.03);
  fit_axis(p.y, ys, true, 0.05);
  p.y.max *= 1.0 + 0.1 * double(lines.size());  // room for the legend
  p.y.min = 0;

  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.panels = {p};
  std::string thr;
  for (size_t k = 0; k < thresholds.size(); ++k)
    thr += (k ? ", " : "") + format_number(thresholds[k]);
  const std::string caption =
      "Share of Castling's auxiliary-mask entries softmax(q·kᵀ/√d) above the threshold" +
      (thr.empty() ? std::string() : " (" + thr + ")") + " in " +
      (options.percent ? "percent" : "fraction") +
      ", all heads of each layer together, against the training step of " +
      std::to_string(std::set<double>(steps.begin(), steps.end()).size()) +
      " checkpoints; mean over images" + (options.error_bars ? ", error bars ± one std." : ".");
  return {f, caption};
}

}  // namespace attnlab::viz
