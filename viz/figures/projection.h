// The projection scatter figure (issue 70): N images' features projected to two dimensions
// (PCA, t-SNE, UMAP: the caller's projection), one small filled circle per image, one panel
// per colouring requested, side by side with identical axes:
//   label        the image's class, a qualitative palette (matplotlib's tab10 up to 10
//                classes, tab20 up to 20), a legend with the class names; no label (-1) grey
//   prediction   the model's predicted class, the same colours and legend as label
//   correctness  prediction == label or not (blue "correct (n)", red "wrong (n)", the wrong
//                ones drawn on top); images without a label grey
//   scalar       any per-image value (confidence, attention entropy) on viridis, with a
//                colour bar named after it; NaN grey
// Plain data in, no analysis tables. Every point is drawn, whatever N: per colour one filled
// path, the points interleaved in a fixed order (index modulo kProjectionRounds) so that no
// class is systematically on top. Legends sit beside the axes, never over the points.
// Four panels of 10 000 points: about 0.3 s to PNG at 200 dpi, 0.4-0.6 s to SVG (6 MB),
// 0.85 s to PDF (1.1 MB) on the 2-core VM; cairo's path output is the cost (per circle).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "viz/figures/figure_common.h"

namespace attnlab::viz {

struct ProjectionPoints {
  std::vector<float> xy;                 // N×2, row-major (x0, y0, x1, y1, ...)
  std::vector<int> labels;               // N or empty; -1: no label
  std::vector<int> predictions;          // N or empty; -1: no prediction
  std::vector<std::string> class_names;  // names of label/prediction indices ("class k" if empty)
  std::vector<float> scalar;             // N or empty: a per-image value; NaN: none
  std::string scalar_name;               // its name (title and colour bar), e.g. "confidence"
  std::string method;                    // "PCA", "t-SNE", "UMAP": title, caption, axis names
  std::string x_label, y_label;          // e.g. "PC 1 (23.4 %)"; empty: method + " 1" / " 2"
};

enum class ProjectionColouring { Label, Prediction, Correctness, Scalar };
const char* projection_colouring_name(ProjectionColouring c);  // "label", "prediction", ...

// Class colours: matplotlib's tab10 and tab20 tables (tab20 in matplotlib's order, dark and
// light partners adjacent). More distinct classes than this: the most frequent ones keep a
// colour, the rest are drawn as "other classes".
inline constexpr int kProjectionMaxClasses = 20;
// The drawing order: point i is in round i % kProjectionRounds; rounds are drawn one after
// the other, each with every colour, so overlapping classes look mixed. (Correctness is
// not interleaved: the correct points first, the wrong ones on top.)
inline constexpr int kProjectionRounds = 8;

// Tab10 / tab20 colour k (k wraps around).
Color tab10_color(int k);
Color tab20_color(int k);

struct ProjectionFigureOptions {
  double width_in = kPageWidthIn;
  double row_height_in = 2.3;  // per row of panels (taller when a legend needs it)
  double font_pt = 7;
  int cols = 0;               // panels per row; 0: all in one row up to 2 panels, else 2
  double marker_pt = 0;       // circle diameter; 0: from N (3.5 pt up to 400 points, 1 from 4900)
  double alpha = 0.8;         // of the circles
  bool equal_axes = false;    // the same data units per point on x and y (honest PCA axes)
  bool class_counts = false;  // "cat (123)" instead of "cat" in class legends
  std::optional<double> scalar_min, scalar_max;  // colour range; unset: the finite values'
};

// One panel per entry of `colourings` (in that order; each at most once), all with the same
// axes fitted to the points. Throws std::invalid_argument for: no points, xy not of even
// size, labels/predictions/scalar not N long, NaN or infinite coordinates (how many), a
// label or prediction below -1 or past class_names, no colouring or one given twice, and a
// colouring whose data is missing (label without labels, prediction without predictions,
// correctness without both or with no labelled and predicted image, scalar without values
// or with no finite one).
CaptionedFigure projection_figure(const ProjectionPoints& points,
                                  const std::vector<ProjectionColouring>& colourings,
                                  const std::string& model,
                                  const ProjectionFigureOptions& options = {});

}  // namespace attnlab::viz
