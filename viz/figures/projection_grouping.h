// The projection figure's colourings (viz/figures/projection.h): per panel a grouping of
// the points — a colour and a legend entry per class slot, correct / wrong, or a viridis step
// of a scalar — and the panel's items drawn from it. Internal to the projection figure
// (projection.cpp lays the panels out); split from it to keep each file about one thing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "viz/figure.h"
#include "viz/figures/projection.h"

namespace attnlab::viz::projection_detail {

// The figure's name in its error messages.
inline const std::string kWho = "projection figure";

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

struct Correctness {
  size_t correct = 0, wrong = 0, no_label = 0, no_prediction = 0;
  size_t compared() const { return correct + wrong; }
};

struct ScalarRange {
  double lo = 0, hi = 1;
  size_t missing = 0;
};

ClassPalette class_palette(const ProjectionPoints& pts);
std::string class_name(const ProjectionPoints& pts, int c);
// Label or prediction panel: a group per palette slot, then "other", then none (grey).
Grouping class_grouping(const ProjectionPoints& pts, const std::vector<int>& values,
                        const ClassPalette& pal, const std::string& none_name, bool counts);
Correctness count_correct(const ProjectionPoints& pts);
// Correct, wrong (on top), and the points that cannot be compared (grey, behind).
Grouping correctness_grouping(const ProjectionPoints& pts, const Correctness& c);
ScalarRange scalar_range(const ProjectionPoints& pts, const ProjectionFigureOptions& o);
// A group per viridis entry (the colour bar's 256 steps), low values first; NaN grey.
Grouping scalar_grouping(const ProjectionPoints& pts, const ScalarRange& r);
// The panel's items: per round the groups in drawing order (one filled path each), then
// one empty series per legend entry (its marker a readable size whatever the points').
void add_points(Panel& p, const ProjectionPoints& pts, const Grouping& g, double marker_pt,
                double alpha);

}  // namespace attnlab::viz::projection_detail
