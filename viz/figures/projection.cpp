// The projection scatter figure (see projection.h).
#include "viz/figures/projection.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figures/projection_grouping.h"

namespace attnlab::viz {

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
