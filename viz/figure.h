// The figure description: what a figure shows, independent of where it is drawn.
// One Figure value is rendered by viz/render.h to an RGBA buffer (the GUI's texture) or to
// SVG, PDF and PNG files, so the picture on screen and the picture in the paper are the
// same drawing. Paper figures (viz/figures/) are functions from analysis results to a
// Figure; viz/figure_layout.h places its panels and exposes the data-to-pixel transform.
//
// Units: sizes are in inches (figure) and points (fonts, line widths, markers: 1/72 in),
// as in matplotlib, so a figure made for a 3.3 in column keeps readable text when placed
// at 100% in the paper. Panel contents are in data coordinates of the panel's axes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "viz/colormap.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

// Widths of the two usual paper layouts (two-column conference format).
inline constexpr double kColumnWidthIn = 3.3;
inline constexpr double kPageWidthIn = 6.9;

struct Color {
  double r = 0, g = 0, b = 0, a = 1;
};
Color color_hex(unsigned rgb, double alpha = 1.0);  // 0xRRGGBB
// matplotlib's default colour cycle (tab10): distinguishable, and the order readers of
// papers are used to. i wraps around.
Color cycle_color(int i);  // tab10, then tab20's light partners: 20 distinct colours
inline const Color kBlack{0, 0, 0, 1};
inline const Color kWhite{1, 1, 1, 1};

// How a coarse map (tokens) becomes pixels: each cell a flat block, or bilinear between
// cell centres (half-pixel centres, edges clamped: PyTorch's align_corners=False).
enum class Upsample { Nearest, Bilinear };
const char* upsample_name(Upsample u);

struct LineSeries {
  std::vector<double> x, y;
  Color color = cycle_color(0);
  double width_pt = 1.25;  // 0: markers only (a scatter plot)
  bool markers = false;
  double marker_pt = 3.5;
  bool dashed = false;
  std::string label;  // shown in the legend when not empty
};

// Bars centred on x, from 0 to height.
struct BarSeries {
  std::vector<double> x, height;
  double width = 0.8;  // in x units
  Color color = cycle_color(0);
  std::string label;
};

// A rows x cols grid of values drawn over [x0, x1] x [y0, y1]; row 0 at y0. NaN cells are
// transparent. alpha < 1 blends it over what is below (a map over its picture): vector
// files then hold the map at token resolution (or a little more, for a bilinear map) and
// the picture once, not a blended picture per panel.
struct HeatmapLayer {
  int rows = 0, cols = 0;
  std::vector<float> values;  // row-major
  Colormap cmap = Colormap::Viridis;
  double vmin = 0, vmax = 1;
  Upsample upsample = Upsample::Nearest;
  double x0 = 0, y0 = 0, x1 = 1, y1 = 1;
  double alpha = 1;
};

// A picture (an input image) drawn pixel for pixel over [x0, x1] x [y0, y1]. Shared and
// immutable: the 72 panels of a layers x heads figure hold one picture, and a file embeds
// each distinct picture once.
struct ImageLayer {
  std::shared_ptr<const RgbaImage> image;
  double x0 = 0, y0 = 0, x1 = 1, y1 = 1;
};

// Outlines of a cols x rows grid of equal cells over a rectangle (patch or window grid).
struct GridLines {
  double x0 = 0, y0 = 0, x1 = 1, y1 = 1;
  int cols = 1, rows = 1;
  Color color{1, 1, 1, 0.35};
  double width_pt = 0.4;
};

struct RectOutline {
  double x0 = 0, y0 = 0, x1 = 1, y1 = 1;
  Color color = kWhite;
  double width_pt = 1.0;
};

// A point marker, e.g. the query token: a coloured shape with a contrasting outline.
struct Marker {
  enum class Shape { Cross, Circle, Square };
  double x = 0, y = 0;
  Shape shape = Shape::Square;
  Color color{1.0, 0.15, 0.15, 1};
  Color outline = kWhite;
  double size_pt = 6;
};

// Text at a data position. size_pt 0: the figure's font size.
struct TextLabel {
  enum class Anchor { Left, Center, Right };
  double x = 0, y = 0;
  std::string text;
  Anchor anchor = Anchor::Center;
  Color color = kBlack;
  double size_pt = 0;
};

using PlotItem = std::variant<LineSeries, BarSeries, HeatmapLayer, ImageLayer, GridLines,
                              RectOutline, Marker, TextLabel>;

struct Axis {
  std::string label;
  double min = 0, max = 1;
  bool log = false;  // base 10; min and max must be > 0
  // Tick positions; empty: chosen automatically (1-2-5 steps, or decades on a log axis).
  std::vector<double> ticks;
  std::vector<std::string> tick_labels;  // one per tick when given; else formatted numbers
  bool show = true;                      // ticks, tick labels and axis label
};

struct ColorbarSpec {
  Colormap cmap = Colormap::Viridis;
  double vmin = 0, vmax = 1;
  std::string label;
};

struct Panel {
  std::string title;
  // Image axes: y grows downwards, one x unit is as long as one y unit (no stretched maps),
  // no frame ticks unless the axes are shown. Data coordinates are usually image pixels.
  bool image = false;
  Axis x, y;
  std::vector<PlotItem> items;
  bool legend = false;  // legend of the labelled series, in the corner inside the axes
                        // that covers the fewest data points
  // The legend right of the axes instead (the layout makes room for it): for more
  // series than fit inside without hiding the data.
  bool legend_outside = false;
  bool grid = false;                     // light lines at the ticks
  std::optional<ColorbarSpec> colorbar;  // a colorbar just right of this panel
};

struct Figure {
  double width_in = kPageWidthIn, height_in = 3.0;
  double font_pt = 8;  // tick labels; titles and axis labels are derived from it
  std::string title;
  int cols = 1;  // panels fill rows left to right; rows = ceil(panels / cols)
  std::vector<Panel> panels;
  // Headers for grids of small multiples: one per column above the top row, one per row
  // left of the first column (either may be empty).
  std::vector<std::string> col_labels, row_labels;
  std::optional<ColorbarSpec> colorbar;  // one colorbar for all panels, right of the grid
  bool transparent = false;              // no white background (PNG/RGBA alpha 0)

  int rows() const { return cols <= 0 ? 0 : (int(panels.size()) + cols - 1) / cols; }
};

// Fills an axis's min/max from data (with a small margin; zero included when asked).
void fit_axis(Axis& axis, const std::vector<double>& values, bool include_zero = false,
              double margin = 0.05);

}  // namespace attnlab::viz
