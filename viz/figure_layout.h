// Where a Figure's parts go, and the transform between data and pixels.
// The layout is computed once in points (1/72 in) from the description and the fonts'
// metrics, independent of the output: the renderer draws every target from it, and the
// GUI uses the same layout to turn a mouse position into a panel and data coordinates
// (hover, click a token) on the texture it shows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "viz/figure.h"

namespace attnlab::viz {

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;  // points, origin top left, y down
  bool contains(double px, double py) const {
    return px >= x && px <= x + w && py >= y && py <= y + h;
  }
};

// Ticks of one axis: positions and their text.
struct Ticks {
  std::vector<double> at;
  std::vector<std::string> labels;
};
// The axis's own ticks, or automatic ones (1-2-2.5-5 steps; decades on a log axis),
// limited to [min, max].
Ticks axis_ticks(const Axis& axis);

struct PanelLayout {
  Rect cell;  // the panel's share of the figure
  Rect plot;  // the axes area; for image panels already shrunk to the data's aspect
  Ticks xticks, yticks;
};

struct FigureLayout {
  double width_pt = 0, height_pt = 0;
  std::vector<PanelLayout> panels;  // one per Figure::panels entry
  Rect colorbar;                    // the shared colorbar's bar (w == 0 when none)
  Rect title;                       // figure title line (h == 0 when none)
};

// Text metrics used by the layout: the figure font (DejaVu Sans) at size_pt.
double text_width_pt(const std::string& text, double size_pt, bool bold = false);

// The legend box of a panel's labelled series: its size in points, and its rows' metrics
// (font size, row height, the width of a line sample), shared by layout and drawing.
struct LegendBox {
  double w = 0, h = 0;  // 0 × 0 when no series is labelled
  double font_pt = 0, row_pt = 0, sample_pt = 0;
};
LegendBox legend_box(const Panel& panel, double figure_font_pt);

FigureLayout layout_figure(const Figure& figure);

// The height at which every row of image panels fits its pictures without blank space
// below them (at the figure's width): builders of map figures set height_in to this.
// Start from a generous height; rows of plot panels keep theirs.
double fitted_height_in(const Figure& figure);

// Data coordinates of a panel to figure points, and back. Log axes map log10 linearly.
struct PointXY {
  double x = 0, y = 0;
};
PointXY data_to_points(const Panel& panel, const PanelLayout& box, double x, double y);
PointXY points_to_data(const Panel& panel, const PanelLayout& box, double px, double py);

// A position in a rendered picture (pixels at `dpi`) resolved to a panel and its data
// coordinates; nothing when it is outside every panel's axes.
struct FigureHit {
  int panel = -1;
  double x = 0, y = 0;
};
std::optional<FigureHit> hit_test(const Figure& figure, const FigureLayout& layout, double pixel_x,
                                  double pixel_y, double dpi);

// A rendered figure's geometry, kept with its picture (the GUI's texture) so that a mouse
// position on the picture resolves to a panel and data coordinates (hit_test) without the
// figure being laid out again: the figure's panels (image layers' pixels dropped, the
// rest kept for values under the mouse), its layout and the DPI it was drawn at.
struct FigureGeometry {
  Figure figure;
  FigureLayout layout;
  double dpi = 96;
  std::optional<FigureHit> hit(double pixel_x, double pixel_y) const {
    return hit_test(figure, layout, pixel_x, pixel_y, dpi);
  }
};
FigureGeometry figure_geometry(const Figure& figure, double dpi);

}  // namespace attnlab::viz
