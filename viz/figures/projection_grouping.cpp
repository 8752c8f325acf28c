// The projection figure's colourings; see projection_grouping.h.
#include "viz/figures/projection_grouping.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {
namespace projection_detail {

// matplotlib's tab10 and tab20 (matplotlib/_cm.py, _tab10_data and _tab20_data).
constexpr unsigned kTab10[10] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
constexpr unsigned kTab20[20] = {0x1f77b4, 0xaec7e8, 0xff7f0e, 0xffbb78, 0x2ca02c,
                                 0x98df8a, 0xd62728, 0xff9896, 0x9467bd, 0xc5b0d5,
                                 0x8c564b, 0xc49c94, 0xe377c2, 0xf7b6d2, 0x7f7f7f,
                                 0xc7c7c7, 0xbcbd22, 0xdbdb8d, 0x17becf, 0x9edae5};

// Points without the colouring's value: light grey, behind the rest.
const Color kNoneColor = color_hex(0xc8c8c8);
// Classes beyond the palette: dark grey.
const Color kOtherColor = color_hex(0x404040);
const Color kCorrectColor = color_hex(0x1f77b4);  // tab:blue
const Color kWrongColor = color_hex(0xd62728);    // tab:red
constexpr double kLegendMarkerPt = 4.5;

std::string count_text(size_t n) {
  return " (" + std::to_string(n) + ")";
}

ClassPalette class_palette(const ProjectionPoints& pts) {
  std::map<int, size_t> freq;
  for (int v : pts.labels)
    if (v >= 0) ++freq[v];
  for (int v : pts.predictions)
    if (v >= 0) ++freq[v];
  ClassPalette pal;
  std::vector<int> chosen;
  if (int(freq.size()) <= kProjectionMaxClasses) {
    for (const auto& [c, n] : freq) chosen.push_back(c);
  } else {
    std::vector<std::pair<int, size_t>> byfreq(freq.begin(), freq.end());
    std::stable_sort(byfreq.begin(), byfreq.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (int i = 0; i < kProjectionMaxClasses - 1; ++i) chosen.push_back(byfreq[size_t(i)].first);
    std::sort(chosen.begin(), chosen.end());
    pal.other = true;
  }
  for (size_t i = 0; i < chosen.size(); ++i) pal.slot[chosen[i]] = int(i);
  pal.slots = int(chosen.size());
  return pal;
}

std::string class_name(const ProjectionPoints& pts, int c) {
  if (size_t(c) < pts.class_names.size() && !pts.class_names[size_t(c)].empty())
    return pts.class_names[size_t(c)];
  return "class " + std::to_string(c);
}

// Label or prediction panel: a group per palette slot, then "other", then none (grey).
Grouping class_grouping(const ProjectionPoints& pts, const std::vector<int>& values,
                        const ClassPalette& pal, const std::string& none_name, bool counts) {
  Grouping g;
  const int other = pal.slots, none = pal.slots + 1;
  g.groups.resize(size_t(pal.slots) + 2);
  std::vector<size_t> n(g.groups.size(), 0);
  g.of_point.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const int v = values[i];
    const auto it = v >= 0 ? pal.slot.find(v) : pal.slot.end();
    g.of_point[i] = v < 0 ? none : it == pal.slot.end() ? other : it->second;
    ++n[size_t(g.of_point[i])];
  }
  for (const auto& [c, s] : pal.slot)
    g.groups[size_t(s)] = {pal.color(s),
                           class_name(pts, c) + (counts ? count_text(n[size_t(s)]) : "")};
  g.groups[size_t(other)] = {kOtherColor,
                             "other classes" + (counts ? count_text(n[size_t(other)]) : "")};
  g.groups[size_t(none)] = {kNoneColor, none_name + (counts ? count_text(n[size_t(none)]) : "")};
  g.draw_order.push_back(none);
  g.draw_order.push_back(other);
  for (int s = 0; s < pal.slots; ++s) g.draw_order.push_back(s), g.legend_order.push_back(s);
  g.legend_order.push_back(other);
  g.legend_order.push_back(none);
  // Groups without points have no legend entry.
  std::vector<int> kept;
  for (int s : g.legend_order)
    if (n[size_t(s)] > 0) kept.push_back(s);
  g.legend_order = kept;
  return g;
}

Correctness count_correct(const ProjectionPoints& pts) {
  Correctness c;
  for (size_t i = 0; i < pts.labels.size(); ++i) {
    if (pts.labels[i] < 0)
      ++c.no_label;
    else if (pts.predictions[i] < 0)
      ++c.no_prediction;
    else if (pts.predictions[i] == pts.labels[i])
      ++c.correct;
    else
      ++c.wrong;
  }
  return c;
}

// Correct, wrong (on top), and the points that cannot be compared (grey, behind).
Grouping correctness_grouping(const ProjectionPoints& pts, const Correctness& c) {
  Grouping g;
  enum { kCorrect, kWrong, kNoLabel, kNoPrediction };
  g.groups = {{kCorrectColor, "correct" + count_text(c.correct)},
              {kWrongColor, "wrong" + count_text(c.wrong)},
              {kNoneColor, "no label" + count_text(c.no_label)},
              {kNoneColor, "no prediction" + count_text(c.no_prediction)}};
  g.of_point.resize(pts.labels.size());
  for (size_t i = 0; i < pts.labels.size(); ++i)
    g.of_point[i] = pts.labels[i] < 0                     ? kNoLabel
                    : pts.predictions[i] < 0              ? kNoPrediction
                    : pts.predictions[i] == pts.labels[i] ? kCorrect
                                                          : kWrong;
  g.draw_order = {kNoLabel, kNoPrediction, kCorrect, kWrong};
  g.legend_order = {kCorrect, kWrong};
  g.interleave = false;
  if (c.no_label > 0) g.legend_order.push_back(kNoLabel);
  if (c.no_prediction > 0) g.legend_order.push_back(kNoPrediction);
  return g;
}

ScalarRange scalar_range(const ProjectionPoints& pts, const ProjectionFigureOptions& o) {
  ScalarRange r;
  double lo = INFINITY, hi = -INFINITY;
  for (float v : pts.scalar) {
    if (!std::isfinite(v)) {
      ++r.missing;
      continue;
    }
    lo = std::min(lo, double(v));
    hi = std::max(hi, double(v));
  }
  if (!(lo <= hi))
    throw std::invalid_argument(kWho + ": the scalar \"" + pts.scalar_name +
                                "\" has no finite value");
  r.lo = o.scalar_min.value_or(lo);
  r.hi = o.scalar_max.value_or(hi);
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || r.hi < r.lo)
    throw std::invalid_argument(kWho + ": the scalar range [" + format_number(r.lo) + ", " +
                                format_number(r.hi) + "] is not a finite interval");
  return r;
}

// A group per viridis entry (the colour bar's 256 steps), low values first; NaN grey.
Grouping scalar_grouping(const ProjectionPoints& pts, const ScalarRange& r) {
  Grouping g;
  g.groups.resize(kColormapSize + 1);
  const int none = kColormapSize;
  for (int k = 0; k < kColormapSize; ++k) {
    const Rgba8 c = colormap_entry(Colormap::Viridis, k);
    g.groups[size_t(k)] = {Color{c.r / 255.0, c.g / 255.0, c.b / 255.0, 1}, ""};
  }
  g.groups[size_t(none)] = {kNoneColor, ""};
  g.of_point.resize(pts.scalar.size());
  for (size_t i = 0; i < pts.scalar.size(); ++i) {
    const double v = pts.scalar[i];
    if (!std::isfinite(v)) {
      g.of_point[i] = none;
      continue;
    }
    // As colormap_at picks an entry: int(t * 256), clamped to the ends.
    const double t = r.hi > r.lo ? (v - r.lo) / (r.hi - r.lo) : 0.5;
    g.of_point[i] = std::clamp(int(std::floor(t * kColormapSize)), 0, kColormapSize - 1);
  }
  g.draw_order.push_back(none);
  for (int k = 0; k < kColormapSize; ++k) g.draw_order.push_back(k);
  return g;
}

// The panel's items: per round the groups in drawing order (one filled path each), then
// one empty series per legend entry (its marker a readable size whatever the points').
void add_points(Panel& p, const ProjectionPoints& pts, const Grouping& g, double marker_pt,
                double alpha) {
  const size_t n = pts.xy.size() / 2;
  const size_t groups = g.groups.size();
  const int rounds = g.interleave ? kProjectionRounds : 1;
  for (int round = 0; round < rounds; ++round) {
    std::vector<LineSeries> series(groups);
    for (size_t i = size_t(round); i < n; i += size_t(rounds)) {
      const int k = g.of_point[i];
      if (k < 0) continue;
      series[size_t(k)].x.push_back(pts.xy[2 * i]);
      series[size_t(k)].y.push_back(pts.xy[2 * i + 1]);
    }
    for (int k : g.draw_order) {
      LineSeries& s = series[size_t(k)];
      if (s.x.empty()) continue;
      s.width_pt = 0;
      s.marker_pt = marker_pt;
      s.color = g.groups[size_t(k)].color;
      s.color.a = alpha;
      p.items.emplace_back(std::move(s));
    }
  }
  for (int k : g.legend_order) {
    LineSeries entry;
    entry.width_pt = 0;
    entry.marker_pt = kLegendMarkerPt;
    entry.color = g.groups[size_t(k)].color;
    entry.label = g.groups[size_t(k)].legend;
    p.items.emplace_back(std::move(entry));
  }
  p.legend = !g.legend_order.empty();
}

}  // namespace projection_detail

Color tab10_color(int k) {
  return color_hex(projection_detail::kTab10[((k % 10) + 10) % 10]);
}
Color tab20_color(int k) {
  return color_hex(projection_detail::kTab20[((k % 20) + 20) % 20]);
}

}  // namespace attnlab::viz
