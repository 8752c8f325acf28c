// The rank figure: numerical rank (float32 rule), rank above float32 precision and
// effective rank per layer and matrix kind from the rank_layers table, and singular-value
// spectra per layer from the rank_sigma arrays with both rules' tolerances drawn on them.
#include "viz/figures/rank.h"

#include "core/analysis/result_key.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figure_style.h"

namespace attnlab::viz {
namespace {

const char* kWho = "rank figure";

// Fixed colour per matrix kind, so the same kind has the same colour in every model's figure.
int matrix_color(const std::string& m) {
  static const std::vector<std::string> order = {"kv", "kv_plain", "output", "output_gated"};
  const auto it = std::find(order.begin(), order.end(), m);
  return it == order.end() ? 4 + int(std::hash<std::string>{}(m) % 6) : int(it - order.begin());
}

struct MatrixSeries {
  std::vector<double> layer, rank, rank_std, precision, precision_std, eff, eff_std;
  std::vector<double> tol_rel, precision_tol_rel;  // tolerance / σ_max per layer
};

// The numerical-rank panel's y range: room above full rank for the legend box (whose
// height the renderer derives from the font size and the number of entries), so that it
// covers no data. Then the full-rank text sits just above the dashed line.
void fit_legend_headroom(Figure& f, double full, double entries) {
  Panel& p = f.panels[0];
  const double top = std::max(1.0, full);
  p.y.max = top * 1.1;
  const FigureLayout L = layout_figure(f);
  const style::Metrics m(f.font_pt);
  const double legend_h = m.tick_pt * 0.95 * 1.3 * entries + m.pad * 2.2 + m.line_h * 0.9;
  const double frac = std::min(0.6, legend_h / std::max(1.0, L.panels[0].plot.h));
  p.y.max = top / (1.0 - frac);
  for (auto& item : p.items)
    if (auto* t = std::get_if<TextLabel>(&item)) t->y = top + (p.y.max - p.y.min) * 0.045;
}

std::vector<double> to_double(const std::vector<int64_t>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

std::string rank_matrix_label(const std::string& matrix) {
  if (matrix == "kv") return "KV buffer";
  if (matrix == "kv_plain") return "KV buffer (α = 1)";
  if (matrix == "output") return "output";
  if (matrix == "output_gated") return "gated output";
  return matrix;
}

CaptionedFigure rank_figure(const std::vector<analysis::Table>& tables,
                            const std::vector<analysis::Array>& arrays,
                            const RankFigureOptions& options) {
  const analysis::Table& table = find_table(tables, "rank_layers", kWho);
  const Columns cols(table, kWho);
  for (const char* c : {"layer", "matrix", "full_mean", "rank_mean", "rank_std",
                        "effective_rank_mean", "effective_rank_std"})
    cols.index(c);
  const auto has = [&](const char* c) {
    return std::find(table.columns.begin(), table.columns.end(), c) != table.columns.end();
  };
  // Tables written before the precision rule existed lack these: their panels are left out.
  const bool has_precision = has("precision_rank_mean") && has("precision_rank_std");
  const bool has_tolerances = has("tolerance_rel_mean") && has("precision_tolerance_rel_mean");
  const bool has_ambiguity = has("rank_ambiguous_mean") && has("precision_ambiguous_mean");
  double ambiguous = 0, precision_ambiguous = 0;
  if (table.rows.empty())
    throw std::invalid_argument(std::string(kWho) + ": table \"" + table.name + "\" has no rows");

  std::vector<std::string> matrices;  // first-seen order
  std::map<std::string, MatrixSeries> series;
  double full = 0;
  int images = 0;
  const bool has_images = has("images");
  for (const auto& row : table.rows) {
    const std::string m = cols.text(row, "matrix");
    if (!series.count(m)) matrices.push_back(m);
    MatrixSeries& s = series[m];
    s.layer.push_back(cols.number(row, "layer"));
    s.rank.push_back(cols.number(row, "rank_mean"));
    s.rank_std.push_back(cols.number(row, "rank_std"));
    s.eff.push_back(cols.number(row, "effective_rank_mean"));
    s.eff_std.push_back(cols.number(row, "effective_rank_std"));
    if (has_precision) {
      s.precision.push_back(cols.number(row, "precision_rank_mean"));
      s.precision_std.push_back(cols.number(row, "precision_rank_std"));
    }
    if (has_tolerances) {
      s.tol_rel.push_back(cols.number(row, "tolerance_rel_mean"));
      s.precision_tol_rel.push_back(cols.number(row, "precision_tolerance_rel_mean"));
    }
    if (has_ambiguity) {
      ambiguous += cols.number(row, "rank_ambiguous_mean") / double(table.rows.size());
      precision_ambiguous +=
          cols.number(row, "precision_ambiguous_mean") / double(table.rows.size());
    }
    const double f = cols.number(row, "full_mean");
    if (std::isfinite(f)) full = std::max(full, f);
    if (has_images) images = std::max(images, int(cols.number(row, "images")));
  }
  const std::vector<int64_t> layers = distinct_layers(cols);
  const double xlo = double(layers.front()) - 0.35, xhi = double(layers.back()) + 0.35;

  Panel rank;
  rank.title = "numerical rank (float32 rule)";
  rank.x.label = "layer";
  rank.y.label = "rank (mean over heads)";
  rank.x.ticks = to_double(layers);
  rank.x.min = xlo, rank.x.max = xhi;
  rank.grid = true;
  rank.legend = true;
  Panel precision = rank;
  precision.title = "rank above float32 precision";
  precision.legend = false;
  Panel eff = rank;
  eff.title = "effective rank";
  eff.y.label = "effective rank (log)";
  eff.y.log = true;
  eff.legend = false;

  std::vector<double> eff_values;
  for (const auto& m : matrices) {
    const MatrixSeries& s = series[m];
    LineSeries l;
    l.x = s.layer;
    l.y = s.rank;
    l.markers = true;
    l.color = cycle_color(matrix_color(m));
    l.label = rank_matrix_label(m);
    add_error_bars(rank, s.layer, s.rank, s.rank_std, l.color, 0.06);
    rank.items.push_back(l);
    if (has_precision) {
      LineSeries pl = l;
      pl.y = s.precision;
      add_error_bars(precision, s.layer, s.precision, s.precision_std, l.color, 0.06);
      precision.items.push_back(pl);
    }
    l.y = s.eff;
    std::vector<double> lo(s.eff.size()), hi(s.eff.size());
    for (size_t i = 0; i < s.eff.size(); ++i) {
      // A log axis cannot show mean − std below zero: clip the bar at a tenth of the mean.
      lo[i] = std::max(s.eff[i] - s.eff_std[i], s.eff[i] * 0.1);
      hi[i] = s.eff[i] + s.eff_std[i];
      eff_values.push_back(lo[i]);
      eff_values.push_back(hi[i]);
      if (std::isfinite(s.eff_std[i]) && s.eff_std[i] > 0) {
        LineSeries bar;
        bar.x = {s.layer[i], s.layer[i]};
        bar.y = {lo[i], hi[i]};
        bar.color = l.color;
        bar.width_pt = 0.8;
        eff.items.push_back(bar);
      }
    }
    eff.items.push_back(l);
  }
  if (full > 0) {
    LineSeries ref;
    ref.x = {xlo, xhi};
    ref.y = {full, full};
    ref.dashed = true;
    ref.color = Color{0.35, 0.35, 0.35, 1};
    ref.width_pt = 0.9;
    rank.items.insert(rank.items.begin(), ref);
    precision.items.insert(precision.items.begin(), ref);
    eff.items.insert(eff.items.begin(), ref);
    TextLabel t;
    t.x = xhi - 0.04 * (xhi - xlo);
    t.text = "full rank d = " + format_number(full);
    t.anchor = TextLabel::Anchor::Right;
    t.color = ref.color;
    t.size_pt = options.font_pt * 0.9;
    rank.items.push_back(t);  // y set below, once the axis range is known
    eff_values.push_back(full);
  }
  rank.y.min = 0;
  rank.y.ticks.clear();
  for (double v = 0; v <= full + 1e-9 && full > 0; v += full / 4) rank.y.ticks.push_back(v);
  precision.y = rank.y;
  fit_axis(eff.y, eff_values, false, 0.08);
  log_ticks_125(eff.y);

  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  f.panels = {rank};
  if (has_precision) f.panels.push_back(precision);
  f.panels.push_back(eff);
  const size_t rank_panels = f.panels.size();

  std::vector<std::string> sigma_shown;
  for (const auto& m : options.sigma_matrices) {
    if (!series.count(m)) continue;
    Panel p;
    p.title = "singular values, " + rank_matrix_label(m);
    p.x.label = "index i (descending σ)";
    p.y.label = "σᵢ / σ₁ (mean over heads)";
    p.y.log = true;
    p.grid = true;
    p.legend = true;
    std::vector<double> all;
    double kmax = 1;
    for (size_t li = 0; li < layers.size(); ++li) {
      const analysis::Array& a = find_array(
          arrays, analysis::format_result_key({"rank_sigma", "", layers[li], "", "", m}), kWho);
      require_axes(a, {"head", "index"}, kWho);
      const int64_t heads = a.shape[0], k = a.shape[1];
      LineSeries l;
      l.color = cycle_color(int(li));
      l.label = "layer " + std::to_string(layers[li]);
      l.width_pt = 1.0;
      for (int64_t i = 0; i < k; ++i) {
        double sum = 0;
        int n = 0;
        for (int64_t h = 0; h < heads; ++h) {
          const double s1 = a.data[size_t(h * k)], si = a.data[size_t(h * k + i)];
          if (s1 > 0 && std::isfinite(si)) sum += si / s1, ++n;
        }
        l.x.push_back(double(i + 1));
        l.y.push_back(n ? sum / n : std::nan(""));
        if (n && sum > 0) all.push_back(sum / n);
      }
      kmax = std::max(kmax, double(k));
      p.items.push_back(l);
    }
    p.x.min = 0;
    p.x.max = kmax + 1;
    if (has_tolerances) {
      // Both rules' tolerances relative to σ₁ (mean over this kind's layers: equal when
      // the layers' shapes are), so the reader sees where each cuts the spectra.
      const MatrixSeries& s = series.at(m);
      const auto mean = [](const std::vector<double>& v) {
        double t = 0;
        for (double x : v) t += x;
        return v.empty() ? 0.0 : t / double(v.size());
      };
      const std::pair<double, const char*> cuts[] = {
          {mean(s.tol_rel), "float32 rule"}, {mean(s.precision_tol_rel), "float32 precision"}};
      for (size_t c = 0; c < 2; ++c) {
        const double y = cuts[c].first;
        if (!(y > 0)) continue;
        LineSeries cut;
        cut.x = {0, kmax + 1};
        cut.y = {y, y};
        cut.dashed = true;
        cut.color = c == 0 ? Color{0.2, 0.2, 0.2, 1} : Color{0.55, 0.55, 0.55, 1};
        cut.width_pt = 0.8;
        p.items.insert(p.items.begin(), cut);
        TextLabel t;
        t.x = kmax + 1 - 0.03 * (kmax + 1);
        // Above the rule's line, below the precision line: the two are 4-7x apart.
        t.y = c == 0 ? y * 1.6 : y / 1.6;
        t.text = cuts[c].second;
        t.anchor = TextLabel::Anchor::Right;
        t.color = cut.color;
        t.size_pt = options.font_pt * 0.85;
        p.items.push_back(t);
        all.push_back(y / 3);
      }
    }
    fit_axis(p.y, all, false, 0.05);
    p.y.max = std::max(p.y.max, 1.5);
    // Values at float round-off (≈1e-7 and below) are numerically zero: keep the axis readable.
    p.y.min = std::max(p.y.min, 1e-8);
    f.panels.push_back(p);
    sigma_shown.push_back(rank_matrix_label(m));
  }
  // The rank panels side by side in the first row, the spectra below.
  f.cols = f.panels.size() <= 3 ? int(f.panels.size()) : int(rank_panels);
  if (f.panels.size() > 3) f.height_in = options.height_in * 2 - 0.2;
  fit_legend_headroom(f, full, double(matrices.size()));
  if (has_precision) f.panels[1].y = f.panels[0].y;

  std::string caption = "Rank of each layer's attention matrices";
  if (!options.model.empty()) caption += " in " + options.model;
  // The tolerance the run used, as the table's caption states it: its last "tolerance X",
  // up to ";" (the session's caption names the rule last).
  std::string tolerance = "tolerance of torch.linalg.matrix_rank";
  if (const size_t at = table.caption.rfind("tolerance "); at != std::string::npos)
    tolerance = table.caption.substr(at, table.caption.find(';', at) - at);
  caption +=
      ": numerical rank, float32 rule as torch.linalg.matrix_rank (" + tolerance + ")" +
      (has_precision ? ", rank above float32 precision (float64 σ > 2·√max(m, n)·ε₃₂·σ₁)" : "") +
      " and effective rank exp(H(σ/Σσ)), mean over heads" +
      (images > 0 ? " and " + std::to_string(images) + " images" : std::string()) +
      ", error bars ± one std across images, dashed: full rank d = " + format_number(full);
  if (has_ambiguity) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  // 4 = analysis::kRankAmbiguityFactor (viz has no LibTorch to include it).
                  "; ambiguous (a singular value within 4x of the tolerance): %.0f%% of head "
                  "matrices under the float32 rule, %.0f%% above float32 precision",
                  100 * ambiguous, 100 * precision_ambiguous);
    caption += buf;
  }
  if (!sigma_shown.empty()) {
    caption += "; singular values σ_i/σ_1 per layer (mean over heads, float64) of the ";
    for (size_t i = 0; i < sigma_shown.size(); ++i)
      caption += (i ? (i + 1 == sigma_shown.size() ? " and " : ", ") : "") + sigma_shown[i];
    if (has_tolerances) caption += ", dashed: the two rules' tolerances";
  }
  caption += ".";
  return {f, caption};
}

}  // namespace attnlab::viz
