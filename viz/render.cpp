// The figure's targets: an RGBA buffer, PNG (with its dpi), SVG (with an invisible,
// searchable text layer) and PDF, each drawn by figure_drawing's draw_figure, and written
// to disk atomically.
#include "viz/render.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/io/file_bytes.h"
#include "viz/figure_drawing.h"
#include "viz/png_encode.h"
#include "viz/xml_escape.h"

namespace attnlab::viz {
namespace {

cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void check(cairo_status_t s, const char* what) {
  if (s != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string("figure rendering failed (") + what +
                             "): " + cairo_status_to_string(s));
}

cairo_surface_t* render_surface(const Figure& f, double dpi) {
  if (!(dpi > 0) || !(f.width_in > 0) || !(f.height_in > 0))
    throw std::invalid_argument("figure size and dpi must be positive");
  const int w = int(std::lround(f.width_in * dpi)), h = int(std::lround(f.height_in * dpi));
  if (w > 32767 || h > 32767)
    throw std::invalid_argument("figure of " + std::to_string(w) + "x" + std::to_string(h) +
                                " pixels is larger than the renderer's 32767-pixel limit");
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  check(cairo_surface_status(s), "image surface");
  cairo_t* cr = cairo_create(s);
  cairo_scale(cr, dpi / 72.0, dpi / 72.0);
  ImageSurfaces images;
  DrawTarget t{cr, false, dpi / 72.0, nullptr, &images};
  draw_figure(t, f);
  const cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_flush(s);
  if (st != CAIRO_STATUS_SUCCESS) cairo_surface_destroy(s);
  check(st, "drawing");
  return s;
}

std::string render_vector(const Figure& f, bool pdf) {
  std::string out;
  const double w = f.width_in * 72.0, h = f.height_in * 72.0;
  if (!(w > 0) || !(h > 0)) throw std::invalid_argument("figure size must be positive");
  cairo_surface_t* s = pdf ? cairo_pdf_surface_create_for_stream(append_to_string, &out, w, h)
                           : cairo_svg_surface_create_for_stream(append_to_string, &out, w, h);
  check(cairo_surface_status(s), pdf ? "pdf surface" : "svg surface");
  if (pdf) {
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "attnlab");
    if (!f.title.empty())
      cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, f.title.c_str());
  } else {
    cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
  }
  std::vector<DrawnText> texts;
  cairo_t* cr = cairo_create(s);
  ImageSurfaces images;
  DrawTarget t{cr, true, 1.0, pdf ? nullptr : &texts, &images};
  draw_figure(t, f);
  const cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(s);
  const cairo_status_t fs = cairo_surface_status(s);
  cairo_surface_destroy(s);
  check(st, "drawing");
  check(fs, "finishing the file");
  if (!pdf) {  // the invisible, searchable text layer
    const size_t end = out.rfind("</svg>");
    if (end == std::string::npos) throw std::runtime_error("cairo wrote an SVG without </svg>");
    std::string layer = "<g id=\"text\" fill-opacity=\"0\" font-family=\"DejaVu Sans\">\n";
    char buf[160];
    for (const auto& d : texts) {
      std::snprintf(buf, sizeof buf,
                    "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" text-anchor=\"%s\"", d.x, d.y,
                    d.size, d.anchor);
      layer += buf;
      if (d.vertical) {
        std::snprintf(buf, sizeof buf, " transform=\"rotate(-90 %.2f %.2f)\"", d.x, d.y);
        layer += buf;
      }
      layer += ">" + xml_escape(d.text) + "</text>\n";
    }
    layer += "</g>\n";
    out.insert(end, layer);
  }
  return out;
}

}  // namespace

const char* figure_format_name(FigureFormat f) {
  switch (f) {
    case FigureFormat::Png:
      return "png";
    case FigureFormat::Svg:
      return "svg";
    case FigureFormat::Pdf:
      return "pdf";
  }
  return "?";
}

std::optional<FigureFormat> figure_format_from_name(std::string_view name) {
  for (FigureFormat f : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf})
    if (name == figure_format_name(f)) return f;
  return std::nullopt;
}

RgbaImage render_rgba(const Figure& figure, double dpi) {
  cairo_surface_t* s = render_surface(figure, dpi);
  RgbaImage img;
  img.width = cairo_image_surface_get_width(s);
  img.height = cairo_image_surface_get_height(s);
  img.rgba.resize(size_t(img.width) * img.height * 4);
  const unsigned char* data = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  for (int y = 0; y < img.height; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + size_t(y) * stride);
    for (int x = 0; x < img.width; ++x) {
      const uint32_t p = row[x], a = p >> 24;
      uint8_t* o = &img.rgba[(size_t(y) * img.width + x) * 4];
      if (a == 255) {  // opaque (nearly every pixel of a figure): nothing to un-premultiply
        o[0] = uint8_t(p >> 16);
        o[1] = uint8_t(p >> 8);
        o[2] = uint8_t(p);
        o[3] = 255;
        continue;
      }
      // Un-premultiply exactly as cairo's PNG writer does, so the two agree bit for bit.
      const auto un = [a](uint32_t c) { return a == 0 ? 0u : (c * 255 + a / 2) / a; };
      o[0] = uint8_t(un((p >> 16) & 0xFF));
      o[1] = uint8_t(un((p >> 8) & 0xFF));
      o[2] = uint8_t(un(p & 0xFF));
      o[3] = uint8_t(a);
    }
  }
  cairo_surface_destroy(s);
  return img;
}

std::string render_png(const Figure& figure, double dpi) {
  return encode_png(render_rgba(figure, dpi), dpi);
}

std::string render_png_with_cairo_writer(const Figure& figure, double dpi) {
  cairo_surface_t* s = render_surface(figure, dpi);
  std::string png;
  const cairo_status_t st = cairo_surface_write_to_png_stream(s, append_to_string, &png);
  cairo_surface_destroy(s);
  check(st, "png encoding");
  return png;
}

std::string render_svg(const Figure& figure) {
  return render_vector(figure, false);
}
std::string render_pdf(const Figure& figure) {
  return render_vector(figure, true);
}

void write_figure(const Figure& figure, const std::string& path, FigureFormat format, double dpi) {
  std::string bytes;
  switch (format) {
    case FigureFormat::Png:
      bytes = render_png(figure, dpi);
      break;
    case FigureFormat::Svg:
      bytes = render_svg(figure);
      break;
    case FigureFormat::Pdf:
      bytes = render_pdf(figure);
      break;
  }
  io::write_file_atomic(path, bytes);
}

}  // namespace attnlab::viz
