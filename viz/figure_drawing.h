// Drawing a Figure onto a cairo context: the one routine (draw_figure) every target of
// viz/render.cpp (raster buffer, PNG, SVG, PDF) draws with. Internal to viz: the rest of
// the project renders through viz/render.h.
#pragma once

#include <cairo.h>

#include <string>
#include <vector>

#include "viz/figure.h"

namespace attnlab::viz {

struct DrawnText {  // for the SVG text layer
  double x, y, size;
  std::string text;
  const char* anchor;
  bool vertical;
};

struct DrawTarget {
  cairo_t* cr;
  bool vector;
  double px_per_pt;  // device pixels per point (raster), 1 for vector
  std::vector<DrawnText>* texts = nullptr;
};

// Draws `f` on t.cr, whose user space is points (1/72 in) from the figure's top left.
void draw_figure(DrawTarget& t, const Figure& f);

}  // namespace attnlab::viz
