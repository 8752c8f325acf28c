// What lies under the mouse in a figure: the GUI's figure tabs (rank, spectra, locality,
// anchors, cost...) show it as a tooltip and copy it on a right click. Reads the panel's
// items at a data position (viz::FigureGeometry::hit gives the panel and the position):
// the heatmap cell and its value, each line series' point nearest in x, the bar under the
// mouse, named with the axes' labels and tick labels where the figure gives them.
#pragma once

#include <string>
#include <vector>

#include "viz/figure.h"

namespace attnlab::viz {

struct PointValue {
  std::string text;   // "layer 3 · head 1: 0.42" (one line per series, newline-separated)
  std::string value;  // the number alone, for the clipboard ("" when nothing is there)
};

// Nothing (empty text) when no item of the panel has a value at (x, y): an image layer,
// a point between bars, an empty panel.
PointValue value_at(const Panel& panel, double x, double y);

}  // namespace attnlab::viz
