// Drawing a Figure onto a cairo context: the one routine (draw_figure) every target of
// viz/render.cpp (raster buffer, PNG, SVG, PDF) draws with. Internal to viz: the rest of
// the project renders through viz/render.h.
#pragma once

#include <cairo.h>

#include <cstdint>
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

// The cairo image surfaces of one drawing, one per distinct picture (equal pixels share
// one), so that PDF and SVG files embed each picture once however many panels show it.
class ImageSurfaces {
 public:
  ImageSurfaces() = default;
  ImageSurfaces(const ImageSurfaces&) = delete;
  ImageSurfaces& operator=(const ImageSurfaces&) = delete;
  ~ImageSurfaces();
  // Borrowed: valid while this object lives.
  cairo_surface_t* surface_for(const RgbaImage& image);

 private:
  struct Entry {
    uint64_t hash;
    const RgbaImage* image;  // for the byte comparison; the figure outlives the drawing
    cairo_surface_t* surface;
  };
  std::vector<Entry> entries_;
};

struct DrawTarget {
  cairo_t* cr;
  bool vector;
  double px_per_pt;  // device pixels per point (raster), 1 for vector
  std::vector<DrawnText>* texts = nullptr;
  ImageSurfaces* images = nullptr;  // pictures drawn so far (none: each converted anew)
};

// Draws `f` on t.cr, whose user space is points (1/72 in) from the figure's top left.
void draw_figure(DrawTarget& t, const Figure& f);

}  // namespace attnlab::viz
