// The projection scatter figure (see projection.h).
#include "viz/figures/projection.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {
namespace projection_detail {

const std::string kWho = "projection figure";

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

// One colour of a panel: its points and its legend entry (empty: none).
struct Group {
  Color color;
  std::string legend;
};

// A panel's colouring: per point its group (-1: not drawn), the groups in drawing order
// (first drawn first, i.e. behind), and their legend order.
struct Grouping {
  std::vector<int> of_point;
  std::vector<Group> groups;
  std::vector<int> draw_order, legend_order;
  bool interleave = true;  // false: each group's points all at once, in draw_order
};

std::string count_text(size_t n) {
  return " (" + std::to_string(n) + ")";
}

// The classes that get a colour: the distinct indices of labels and predictions, all of
// them up to kProjectionMaxClasses, else the most frequent ones (one slot left for "other").
struct ClassPalette {
  std::map<int, int> slot;  // class index -> palette slot
  bool other = false;       // some classes have no slot
  int slots = 0;
  Color color(int slot_index) const {
    return slots <= 10 ? tab10_color(slot_index) : tab20_color(slot_index);
  }
};

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

struct Correctness {
  size_t correct = 0, wrong = 0, no_label = 0, no_prediction = 0;
  size_t compared() const { return correct + wrong; }
};

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

struct ScalarRange {
  double lo = 0, hi = 1;
  size_t missing = 0;
};

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

namespace projection_detail {

size_t point_count(const ProjectionPoints& pts) {
  return pts.xy.size() / 2;
}

void check_length(size_t have, size_t n, const std::string& what) {
  if (have != 0 && have != n)
    throw std::invalid_argument(kWho + ": " + what + " has " + std::to_string(have) +
                                " entries for " + std::to_string(n) + " points");
}

void check_classes(const ProjectionPoints& pts, const std::vector<int>& values,
                   const std::string& what) {
  for (size_t i = 0; i < values.size(); ++i) {
    const int v = values[i];
    if (v < -1)
      throw std::invalid_argument(kWho + ": " + what + " " + std::to_string(v) + " of point " +
                                  std::to_string(i) + " is below -1 (-1: none)");
    if (!pts.class_names.empty() && v >= int(pts.class_names.size()))
      throw std::invalid_argument(kWho + ": " + what + " " + std::to_string(v) + " of point " +
                                  std::to_string(i) + " has no class name (" +
                                  std::to_string(pts.class_names.size()) + " class names)");
  }
}

void validate(const ProjectionPoints& pts, const std::vector<ProjectionColouring>& colourings) {
  if (colourings.empty()) throw std::invalid_argument(kWho + ": no colouring requested");
  for (size_t i = 0; i < colourings.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (colourings[i] == colourings[j])
        throw std::invalid_argument(kWho + ": the colouring \"" +
                                    projection_colouring_name(colourings[i]) +
                                    "\" is requested twice");
  if (pts.xy.empty()) throw std::invalid_argument(kWho + ": no points (xy is empty)");
  if (pts.xy.size() % 2 != 0)
    throw std::invalid_argument(kWho + ": xy has " + std::to_string(pts.xy.size()) +
                                " values, not N x 2 (x, y pairs)");
  const size_t n = point_count(pts);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    bad += !std::isfinite(pts.xy[2 * i]) || !std::isfinite(pts.xy[2 * i + 1]);
  if (bad > 0)
    throw std::invalid_argument(kWho + ": " + std::to_string(bad) + " of " + std::to_string(n) +
                                " points have NaN or infinite coordinates");
  check_length(pts.labels.size(), n, "labels");
  check_length(pts.predictions.size(), n, "predictions");
  check_length(pts.scalar.size(), n, "scalar");
  check_classes(pts, pts.labels, "label");
  check_classes(pts, pts.predictions, "prediction");
  for (ProjectionColouring c : colourings) {
    const std::string name = projection_colouring_name(c);
    const auto need = [&](bool have, const std::string& what) {
      if (!have)
        throw std::invalid_argument(kWho + ": colouring by " + name + " needs " + what +
                                    " (none given)");
    };
    switch (c) {
      case ProjectionColouring::Label:
        need(!pts.labels.empty(), "labels");
        break;
      case ProjectionColouring::Prediction:
        need(!pts.predictions.empty(), "predictions");
        break;
      case ProjectionColouring::Correctness:
        need(!pts.labels.empty(), "labels");
        need(!pts.predictions.empty(), "predictions");
        if (count_correct(pts).compared() == 0)
          throw std::invalid_argument(kWho +
                                      ": colouring by correctness needs an image with both a "
                                      "label and a prediction (none has both)");
        break;
      case ProjectionColouring::Scalar:
        need(!pts.scalar.empty(), "scalar values");
        break;
    }
  }
}

// Circle diameter for n points: 3.5 pt for a few hundred, down to 1 pt from ~5000.
double auto_marker_pt(size_t n) {
  return std::clamp(70.0 / std::sqrt(double(std::max<size_t>(n, 1))), 1.0, 3.5);
}

// Widens the narrower data range (about its centre) so that one data unit is as long on x
// as on y. The tick labels' width moves the axes a little, so it is laid out again.
void equalise_axes(Figure& f) {
  for (int pass = 0; pass < 3; ++pass) {
    const FigureLayout L = layout_figure(f);
    const Rect& r = L.panels[0].plot;
    Axis& x = f.panels[0].x;
    Axis& y = f.panels[0].y;
    const double sx = (x.max - x.min) / r.w, sy = (y.max - y.min) / r.h;
    if (sx > sy) {
      const double c = (y.min + y.max) / 2, half = sx * r.h / 2;
      y.min = c - half, y.max = c + half;
    } else {
      const double c = (x.min + x.max) / 2, half = sy * r.w / 2;
      x.min = c - half, x.max = c + half;
    }
    for (Panel& p : f.panels) p.x = x, p.y = y;
  }
}

// Taller rows when an outside legend is taller than the axes it sits beside.
void fit_height_to_legends(Figure& f) {
  for (int pass = 0; pass < 3; ++pass) {
    const FigureLayout L = layout_figure(f);
    double short_by = 0;
    for (size_t i = 0; i < f.panels.size(); ++i) {
      const Panel& p = f.panels[i];
      if (!p.legend || !p.legend_outside) continue;
      short_by = std::max(short_by, legend_box(p, f.font_pt).h - L.panels[i].plot.h);
    }
    if (short_by <= 0) return;
    f.height_in += (short_by + 1) * f.rows() / 72.0;
  }
}

std::string percent(double share) {
  return format_number(100 * share, 3) + " %";
}

}  // namespace projection_detail

const char* projection_colouring_name(ProjectionColouring c) {
  switch (c) {
    case ProjectionColouring::Label:
      return "label";
    case ProjectionColouring::Prediction:
      return "prediction";
    case ProjectionColouring::Correctness:
      return "correctness";
    case ProjectionColouring::Scalar:
      return "scalar";
  }
  return "?";
}

Color tab10_color(int k) {
  return color_hex(projection_detail::kTab10[((k % 10) + 10) % 10]);
}
Color tab20_color(int k) {
  return color_hex(projection_detail::kTab20[((k % 20) + 20) % 20]);
}

CaptionedFigure projection_figure(const ProjectionPoints& pts,
                                  const std::vector<ProjectionColouring>& colourings,
                                  const std::string& model,
                                  const ProjectionFigureOptions& options) {
  using namespace projection_detail;
  validate(pts, colourings);
  const size_t n = point_count(pts);
  const std::string method = pts.method.empty() ? std::string("projection") : pts.method;
  const double marker_pt = options.marker_pt > 0 ? options.marker_pt : auto_marker_pt(n);

  // One set of axes for every panel.
  Axis x, y;
  x.label = pts.x_label.empty() ? method + " 1" : pts.x_label;
  y.label = pts.y_label.empty() ? method + " 2" : pts.y_label;
  {
    std::vector<double> xs(n), ys(n);
    for (size_t i = 0; i < n; ++i) xs[i] = pts.xy[2 * i], ys[i] = pts.xy[2 * i + 1];
    fit_axis(x, xs, false, 0.04);
    fit_axis(y, ys, false, 0.04);
  }

  const ClassPalette palette = class_palette(pts);
  const auto drawn = [&](ProjectionColouring c) {
    return std::find(colourings.begin(), colourings.end(), c) != colourings.end();
  };

  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = options.cols > 0 ? options.cols : colourings.size() <= 2 ? int(colourings.size()) : 2;
  f.title =
      (model.empty() ? "" : model + " \u2014 ") + method + " of " + std::to_string(n) + " images";
  std::vector<std::string> parts;
  Correctness corr;
  for (ProjectionColouring c : colourings) {
    Panel p;
    p.x = x;
    p.y = y;
    switch (c) {
      case ProjectionColouring::Label: {
        p.title = "label";
        add_points(p, pts,
                   class_grouping(pts, pts.labels, palette, "no label", options.class_counts),
                   marker_pt, options.alpha);
        parts.push_back("by the label (" + std::to_string(palette.slots) + " classes" +
                        (palette.other ? " with a colour, the rest dark grey" : "") + ")");
        break;
      }
      case ProjectionColouring::Prediction: {
        p.title = "prediction";
        add_points(
            p, pts,
            class_grouping(pts, pts.predictions, palette, "no prediction", options.class_counts),
            marker_pt, options.alpha);
        parts.push_back(std::string("by the model's top-1 prediction") +
                        (drawn(ProjectionColouring::Label) ? " (the same colours)" : ""));
        break;
      }
      case ProjectionColouring::Correctness: {
        corr = count_correct(pts);
        p.title = "correct / wrong";
        add_points(p, pts, correctness_grouping(pts, corr), marker_pt, options.alpha);
        parts.push_back("by whether the prediction is the label (" + std::to_string(corr.correct) +
                        " correct, " + std::to_string(corr.wrong) + " wrong: accuracy " +
                        percent(double(corr.correct) / double(corr.compared())) + " of the " +
                        std::to_string(corr.compared()) +
                        " images with both; the wrong ones drawn on top)");
        break;
      }
      case ProjectionColouring::Scalar: {
        const std::string name = pts.scalar_name.empty() ? std::string("value") : pts.scalar_name;
        const ScalarRange r = scalar_range(pts, options);
        p.title = name;
        add_points(p, pts, scalar_grouping(pts, r), marker_pt, options.alpha);
        p.colorbar = ColorbarSpec{Colormap::Viridis, r.lo, r.hi, name};
        std::string part =
            "by " + name + " (viridis, " + format_number(r.lo) + " to " + format_number(r.hi);
        if (r.missing > 0) part += "; " + std::to_string(r.missing) + " without a value grey";
        parts.push_back(part + ")");
        break;
      }
    }
    // Legends beside the axes, never over the points (the layout gives every panel the
    // room, so the axes stay the same size in every panel).
    p.legend_outside = true;
    f.panels.push_back(std::move(p));
  }
  f.height_in = options.row_height_in * f.rows();
  fit_height_to_legends(f);
  if (options.equal_axes) equalise_axes(f);

  size_t unlabelled = 0;
  for (int v : pts.labels) unlabelled += v < 0;
  std::string caption = method + " projection of " + model + "'s features of " + std::to_string(n) +
                        " images, one point per image";
  caption += options.equal_axes ? ", the same scale on both axes" : "";
  caption += "; ";
  if (parts.size() > 1)
    caption += "from left to right" + std::string(f.rows() > 1 ? " and top to bottom" : "") +
               ", coloured ";
  else
    caption += "coloured ";
  for (size_t i = 0; i < parts.size(); ++i)
    caption += (i ? (i + 1 == parts.size() ? " and " : ", ") : "") + parts[i];
  caption += ".";
  if (unlabelled > 0 &&
      (drawn(ProjectionColouring::Label) || drawn(ProjectionColouring::Correctness)))
    caption += " " + std::to_string(unlabelled) + " image(s) without a label in light grey.";
  return {f, caption};
}

}  // namespace attnlab::viz
