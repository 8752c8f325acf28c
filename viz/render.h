// Renders a Figure with cairo: to an RGBA buffer (what the GUI uploads as a texture) and
// to SVG, PDF and PNG files. All outputs draw the same layout (viz/figure_layout.h);
// the PNG file holds exactly the pixels of the RGBA buffer at the same DPI.
//   - PDF: vector, fonts embedded as subsets (searchable, selectable text), title metadata.
//   - SVG: vector, glyphs as outlines (looks the same without the fonts installed) plus an
//     invisible text layer so that labels stay searchable and selectable.
//   - PNG: the raster at `dpi`, with its resolution recorded (pHYs) so that LaTeX and
//     word processors place it at the intended physical size.
// File writes are atomic (temporary file, then rename): a failed render leaves nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "viz/figure.h"

namespace attnlab::viz {

enum class FigureFormat { Png, Svg, Pdf };
const char* figure_format_name(FigureFormat f);  // "png", "svg", "pdf": also the extension
std::optional<FigureFormat> figure_format_from_name(std::string_view name);

// The picture at `dpi` (pixels = inches * dpi, rounded), straight (not premultiplied) RGBA.
RgbaImage render_rgba(const Figure& figure, double dpi);

// The encoded file contents. The PNG is attnlab's own (viz/png_encode.h).
std::string render_png(const Figure& figure, double dpi);
// The same pixels through cairo's own PNG writer (libpng at zlib's default level, no
// pHYs): the writer render_png replaced, kept as the reference its tests and the figure
// profile (bench/figure_profile.cpp) compare against. Not used by any front end.
std::string render_png_with_cairo_writer(const Figure& figure, double dpi);
std::string render_svg(const Figure& figure);
std::string render_pdf(const Figure& figure);

// Renders and writes `path` atomically. Throws std::runtime_error naming the path on a
// write failure. dpi applies to PNG only.
void write_figure(const Figure& figure, const std::string& path, FigureFormat format,
                  double dpi = 200);

}  // namespace attnlab::viz
