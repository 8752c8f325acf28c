// HiLo spectra: per-channel log-amplitude maps of the branches of one layer, and radial
// profiles plus the high-frequency ratio over all layers.
#include "viz/figures/hilo_spectra.h"

#include "core/analysis/result_key.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {
namespace {

const std::vector<std::string>& known_branches() {
  static const std::vector<std::string> b = {"hifi", "lofi", "output"};
  return b;
}

// The key of a layer's spectrum array: spectra__L<ll>__<branch>__<what>.
std::string spectrum_key(int64_t layer, const std::string& branch, const std::string& what) {
  return analysis::format_result_key({"spectra", "", layer, "", branch, what});
}

// Branches with an array "spectra__L<ll>__<branch>__<what>", HiLo's first.
std::vector<const analysis::Array*> branch_arrays(const std::vector<analysis::Array>& arrays,
                                                  int64_t layer, const std::string& what,
                                                  std::vector<std::string>* names) {
  std::vector<const analysis::Array*> out;
  for (const auto& b : known_branches()) {
    if (b == "output" && !out.empty()) break;  // HiLo layers have no "output" spectrum
    if (const auto* a = find_array_or_null(arrays, spectrum_key(layer, b, what))) {
      out.push_back(a);
      names->push_back(b);
    }
  }
  return out;
}

// One colour and dash per branch in every figure: Hi-Fi solid, Lo-Fi dashed, output green.
void style_branch(LineSeries& s, const std::string& branch) {
  const auto& b = known_branches();
  s.color = cycle_color(int(std::find(b.begin(), b.end(), branch) - b.begin()));
  s.dashed = branch == "lofi";
  s.label = branch_label(branch);
}

std::vector<int64_t> pick_channels(const analysis::Array& a, int n, ChannelPick pick) {
  const int64_t c = a.shape[0], hw = a.shape[1] * a.shape[2];
  n = int(std::min<int64_t>(std::max(1, n), c));
  std::vector<int64_t> out;
  if (pick == ChannelPick::EvenlySpaced) {
    for (int i = 0; i < n; ++i) out.push_back(int64_t(i) * c / n);
    return out;
  }
  std::vector<double> energy(size_t(c), 0.0);
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < hw; ++i) {
      const double v = a.data[size_t(k * hw + i)];
      if (std::isfinite(v)) energy[size_t(k)] += std::exp(2.0 * v);
    }
  std::vector<int64_t> order(static_cast<size_t>(c));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return energy[size_t(x)] > energy[size_t(y)]; });
  out.assign(order.begin(), order.begin() + n);
  std::sort(out.begin(), out.end());
  return out;
}

// Layers that have a spectrum array of this part ("radial", ...), from the array keys.
std::vector<int64_t> spectrum_layers(const std::vector<analysis::Array>& arrays,
                                     const std::string& what) {
  std::vector<int64_t> out;
  for (const auto& a : arrays) {
    const auto key = analysis::parse_result_key(a.name);
    if (!key || key->analysis != "spectra" || key->part != what) continue;
    const int64_t l = key->layer;
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string branch_label(const std::string& branch) {
  if (branch == "hifi") return "Hi-Fi";
  if (branch == "lofi") return "Lo-Fi";
  return branch;
}

CaptionedFigure hilo_spectra_grid(const std::vector<analysis::Array>& arrays,
                                  const HiloSpectraOptions& options) {
  const std::string who = "HiLo spectra figure";
  const std::string tag = layer_tag(options.layer);
  std::vector<std::string> branches;
  const auto maps = branch_arrays(arrays, options.layer, "log_amplitude", &branches);
  if (maps.empty())
    throw std::invalid_argument(who + ": no array \"spectra__" + tag +
                                "__hifi__log_amplitude\" (nor lofi, nor output) for layer " +
                                std::to_string(options.layer));
  for (const auto* a : maps) require_axes(*a, {"channel", "fy", "fx"}, who);

  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  std::vector<std::vector<int64_t>> picked;
  int cols = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* a : maps) {
    picked.push_back(pick_channels(*a, options.channels, options.pick));
    cols = std::max(cols, int(picked.back().size()));
    const int64_t hw = a->shape[1] * a->shape[2];
    for (int64_t c : picked.back())
      for (int64_t i = 0; i < hw; ++i) {
        const double v = a->data[size_t(c * hw + i)];
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
      }
  }
  if (!(hi >= lo)) lo = 0, hi = 1;
  f.cols = cols;
  for (size_t b = 0; b < maps.size(); ++b) {
    const analysis::Array& a = *maps[b];
    const int h = int(a.shape[1]), w = int(a.shape[2]);
    for (int i = 0; i < cols; ++i) {
      Panel p;
      p.image = true;
      p.x.show = p.y.show = false;
      p.x.max = w;
      p.y.max = h;
      if (i < int(picked[b].size())) {
        const int64_t c = picked[b][size_t(i)];
        p.title = "ch " + std::to_string(c);
        HeatmapLayer layer{h,
                           w,
                           {a.data.begin() + c * h * w, a.data.begin() + (c + 1) * h * w},
                           options.cmap,
                           lo,
                           hi,
                           Upsample::Nearest,
                           0,
                           0,
                           double(w),
                           double(h)};
        p.items.push_back(layer);
      }
      f.panels.push_back(p);
    }
    f.row_labels.push_back(branch_label(branches[b]));
  }
  f.colorbar = ColorbarSpec{options.cmap, lo, hi, "log amplitude"};
  f.height_in = 1.6 * double(maps.size()) + 0.4;
  f.height_in = fitted_height_in(f);

  std::string rows;
  for (size_t b = 0; b < branches.size(); ++b)
    rows += (b ? " and " : "") + branch_label(branches[b]);
  const std::string caption =
      "Centred log-amplitude spectra log|fftshift(fft2)| (zero frequency at the centre, mean over "
      "images) of the " +
      (branches.size() > 1 ? rows + " branch outputs" : std::string("attention output")) +
      " of layer " + std::to_string(options.layer) + " on the " +
      std::to_string(maps[0]->shape[1]) + "×" + std::to_string(maps[0]->shape[2]) +
      " token grid, for the " + std::to_string(cols) +
      (options.pick == ChannelPick::HighestEnergy
           ? std::string(" channels of highest total energy") +
                 (branches.size() > 1 ? " of each branch" : "")
           : std::string(" evenly spaced channels")) +
      "; one colour scale (" + colormap_name(options.cmap) + ") for all maps.";
  return {f, caption};
}

CaptionedFigure hilo_spectra_profiles(const std::vector<analysis::Array>& arrays,
                                      const std::vector<analysis::Table>& tables,
                                      const HiloProfilesOptions& options) {
  const std::string who = "HiLo spectra profiles figure";
  const std::vector<int64_t> layers = spectrum_layers(arrays, "radial");
  if (layers.empty())
    throw std::invalid_argument(
        who + ": no radial profile array (\"spectra__L<ll>__<branch>__radial\") among the results");
  Figure f;
  f.width_in = options.width_in;
  f.height_in = options.height_in;
  f.font_pt = options.font_pt;
  std::vector<double> all;
  std::vector<std::string> seen;
  double rmax = 0;
  for (int64_t l : layers) {
    std::vector<std::string> branches;
    const auto radial = branch_arrays(arrays, l, "radial", &branches);
    Panel p;
    p.title = "layer " + std::to_string(l);
    p.x.label = "radius (cycles/token)";
    p.y.label = f.panels.empty() ? "mean log amplitude" : "";
    p.grid = true;
    p.legend = f.panels.empty() && branches.size() > 1;
    for (size_t b = 0; b < radial.size(); ++b) {
      const analysis::Array& a = *radial[b];
      require_axes(a, {"channel", "ring"}, who);
      const int64_t c = a.shape[0], rings = a.shape[1];
      // Ring k is at radius k / max(H, W): H, W from the layer's maps, else a square grid
      // whose last ring reaches the corner.
      double side = double(rings - 1) * std::sqrt(2.0);
      const std::string stem = spectrum_key(l, branches[b], "log_amplitude");
      if (const auto* m = find_array_or_null(arrays, stem); m && m->shape.size() == 3)
        side = double(std::max(m->shape[1], m->shape[2]));
      LineSeries s;
      style_branch(s, branches[b]);
      for (int64_t k = 0; k < rings; ++k) {
        double sum = 0;
        int n = 0;
        for (int64_t ch = 0; ch < c; ++ch) {
          const double v = a.data[size_t(ch * rings + k)];
          if (std::isfinite(v)) sum += v, ++n;
        }
        s.x.push_back(double(k) / side);
        s.y.push_back(n ? sum / n : std::nan(""));
        if (n) all.push_back(sum / n);
      }
      rmax = std::max(rmax, s.x.back());
      p.items.push_back(s);
      if (std::find(seen.begin(), seen.end(), branches[b]) == seen.end())
        seen.push_back(branches[b]);
    }
    f.panels.push_back(p);
  }
  Axis shared;
  fit_axis(shared, all, false, 0.08);
  for (auto& p : f.panels) {
    p.y.min = shared.min, p.y.max = shared.max;
    p.x.min = 0, p.x.max = rmax * 1.03;
    LineSeries half;  // half the Nyquist radius: the high-frequency ratio's boundary
    half.x = {0.25, 0.25};
    half.y = {shared.min, shared.max};
    half.color = Color{0.5, 0.5, 0.5, 1};
    half.width_pt = 0.7;
    half.dashed = true;
    p.items.insert(p.items.begin(), half);
  }
  bool ratio_panel = false;
  if (const analysis::Table* t = find_table_or_null(tables, "spectra_layers")) {
    const Columns cols(*t, who);
    for (const char* c :
         {"layer", "branch", "high_frequency_ratio_mean", "high_frequency_ratio_std"})
      cols.index(c);
    std::map<std::string, std::vector<std::array<double, 3>>> by_branch;
    std::vector<double> ys;
    for (const auto& row : t->rows) {
      const double y = cols.number(row, "high_frequency_ratio_mean"),
                   e = cols.number(row, "high_frequency_ratio_std");
      by_branch[cols.text(row, "branch")].push_back({cols.number(row, "layer"), y, e});
      ys.push_back(y + (std::isfinite(e) ? e : 0.0));
    }
    Panel p;
    p.title = "HF energy ratio";
    p.x.label = "layer";
    p.y.label = "share beyond 0.25";
    p.grid = true;
    p.legend = by_branch.size() > 1;
    for (const auto& b : known_branches()) {
      auto it = by_branch.find(b);
      if (it == by_branch.end()) continue;
      LineSeries s;
      style_branch(s, b);
      s.markers = true;
      std::vector<double> err;
      for (const auto& [x, y, e] : it->second) s.x.push_back(x), s.y.push_back(y), err.push_back(e);
      add_error_bars(p, s.x, s.y, err, s.color, 0.08);
      p.items.push_back(s);
    }
    p.x.min = double(layers.front()) - 0.4;
    p.x.max = double(layers.back()) + 0.4;
    for (int64_t l : layers) p.x.ticks.push_back(double(l));
    fit_axis(p.y, ys, true, 0.05);
    p.y.max *= 1.0 + 0.12 * double(by_branch.size());  // legend room
    f.panels.push_back(p);
    ratio_panel = true;
  }
  f.cols = int(std::min<size_t>(f.panels.size(), 5));
  f.height_in = options.height_in * double(f.rows());

  std::string names;
  for (size_t i = 0; i < seen.size(); ++i) names += (i ? " vs " : "") + branch_label(seen[i]);
  std::string caption =
      "Radial profiles of the mean log-amplitude spectrum (mean over channels and images) per "
      "layer, " +
      names + (seen.size() > 1 ? " (dashed: Lo-Fi)" : "") +
      "; the grey dashed line marks half the Nyquist radius (0.25 cycles/token)";
  if (ratio_panel)
    caption +=
        "; last panel: share of spectral energy beyond that radius per layer, mean over channels, "
        "± one std across images";
  caption += ".";
  return {f, caption};
}

}  // namespace attnlab::viz
