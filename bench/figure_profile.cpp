// Where the report's figure time goes (issue 66): the report's own figures for one model and
// a folder of images (by default bench_peer's 4-image case: DeiT-small shape, random weights,
// maps + rank + spectra), each timed stage by stage, the median of --repeats runs:
//   build   the figure description from the results (layout inputs, colormapped maps)
//   raster  cairo drawing the layout into pixels (render_rgba: layout, rasterisation and
//           the conversion to straight RGBA)
//   png     encoding those pixels: cairo's writer (libpng, zlib's default level: what
//           attnlab used before) against libpng at other levels and filters, RGB, and
//           attnlab's writer (libdeflate) at each level and filter, with the bytes of each
//   pdf/svg cairo's vector surfaces
//   sync    writing the PNG and PDF atomically (temporary, fsync, rename)
// then the whole figure stage (build + PNG + PDF + write, as `report` runs it) on 1 and on
// --threads workers. Prints Markdown tables for docs/BENCHMARKS.md.
//
// Usage: bench_figure_profile [--images DIR] [--model deit_small_patch16_224] [--dpi 200]
//                             [--repeats 3] [--threads 2]
#include <cairo.h>
#include <png.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/report_figures.h"
#include "app/cli/report_run.h"
#include "app/session/analysis_registry.h"
#include "core/io/file_bytes.h"
#include "core/runtime/threads.h"
#include "viz/png_encode.h"
#include "viz/render.h"

namespace fs = std::filesystem;
using namespace attnlab;
using Clock = std::chrono::steady_clock;

namespace {

template <class F>
double median_seconds(int repeats, F&& body) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    body();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void append(png_structp p, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<char*>(data), n);
}

// libpng directly, RGB (the figures are opaque), at a zlib level with its adaptive filters.
std::string libpng_rgb(const viz::RgbaImage& im, int level) {
  std::string out;
  png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(p);
  if (setjmp(png_jmpbuf(p))) {
    png_destroy_write_struct(&p, &info);
    throw std::runtime_error("libpng failed");
  }
  png_set_write_fn(p, &out, append, nullptr);
  png_set_compression_level(p, level);
  png_set_IHDR(p, info, png_uint_32(im.width), png_uint_32(im.height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(p, info);
  std::vector<png_byte> row(size_t(im.width) * 3);
  for (int y = 0; y < im.height; ++y) {
    for (int x = 0; x < im.width; ++x)
      for (int c = 0; c < 3; ++c) row[size_t(x) * 3 + c] = im.rgba[(size_t(y) * im.width + x) * 4 + c];
    png_write_row(p, row.data());
  }
  png_write_end(p, nullptr);
  png_destroy_write_struct(&p, &info);
  return out;
}

cairo_status_t to_string(void* closure, const unsigned char* data, unsigned int n) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), n);
  return CAIRO_STATUS_SUCCESS;
}

// cairo's writer on these pixels (an opaque figure premultiplies to itself).
std::string cairo_png(const viz::RgbaImage& im) {
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, im.width, im.height);
  unsigned char* d = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const uint8_t* p = &im.rgba[(size_t(y) * im.width + x) * 4];
      reinterpret_cast<uint32_t*>(d + size_t(y) * stride)[x] =
          uint32_t(p[3]) << 24 | uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2];
    }
  cairo_surface_mark_dirty(s);
  std::string out;
  cairo_surface_write_to_png_stream(s, to_string, &out);
  cairo_surface_destroy(s);
  return out;
}

struct Encoder {
  std::string name;
  std::function<std::string(const viz::RgbaImage&)> encode;
};

std::vector<Encoder> encoders(double dpi) {
  std::vector<Encoder> e;
  e.push_back({"cairo (libpng, zlib 6): before", cairo_png});
  for (int level : {1, 3, 6})
    e.push_back({"libpng, zlib " + std::to_string(level) + ", RGB",
                 [level](const viz::RgbaImage& im) { return libpng_rgb(im, level); }});
  const std::pair<viz::PngFilter, const char*> filters[] = {{viz::PngFilter::None, "none"},
                                                            {viz::PngFilter::Up, "up"},
                                                            {viz::PngFilter::Paeth, "paeth"},
                                                            {viz::PngFilter::Adaptive, "adaptive"}};
  for (int level : {1, 4, 6, 7, 8, 9})
    for (const auto& [f, fname] : filters) {
      if (f == viz::PngFilter::None && level != 6) continue;
      if (level > 6 && f != viz::PngFilter::Adaptive) continue;
      viz::PngSettings s;
      s.level = level;
      s.filter = f;
      const bool chosen = level == viz::PngSettings{}.level && f == viz::PngSettings{}.filter;
      e.push_back({"attnlab (libdeflate " + std::to_string(level) + ", " + fname + ")" +
                       (chosen ? ": now" : ""),
                   [s, dpi](const viz::RgbaImage& im) { return viz::encode_png(im, dpi, s); }});
    }
  return e;
}

std::string option(std::vector<std::string>& args, const std::string& name, std::string fallback) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == name) return args[i + 1];
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string images_dir = option(args, "--images", "");
  const std::string model = option(args, "--model", "deit_small_patch16_224");
  const double dpi = std::stod(option(args, "--dpi", "200"));
  const int repeats = std::stoi(option(args, "--repeats", "3"));
  const int threads = std::stoi(option(args, "--threads", "2"));
  if (images_dir.empty()) {
    std::fprintf(stderr, "usage: bench_figure_profile --images DIR [--model M] [--dpi 200] "
                         "[--repeats 3] [--threads 2]\n");
    return 2;
  }
  runtime::configure_threads(threads);
  const fs::path work = fs::temp_directory_path() / "attnlab_figure_profile";
  fs::remove_all(work);
  fs::create_directories(work / "stats");
  session::AnalysisSettings settings;
  settings.analyses = session::parse_analyses("maps,rank,spectra");
  cli::Args a({"--model", model, "--random-init"});
  const runtime::ComputeTarget cpu;
  std::vector<session::ModelResults> models = {cli::run_report_model(
      cli::take_model_choice(a), cli::expand_images({images_dir}), settings, cpu,
      (work / "stats").string(), {})};
  // The report's default figures: every kind but those it writes only on request.
  std::vector<session::FigureJob> jobs;
  for (auto& job : session::report_figure_jobs(models, std::nullopt, {})) {
    const auto kinds = session::figure_kinds();
    if (std::none_of(kinds.begin(), kinds.end(), [&](const session::FigureKind& k) {
          return k.id == job.kind && k.on_request;
        }))
      jobs.push_back(std::move(job));
  }

  struct Row {
    int figures = 0;
    double build = 0, raster = 0, pdf = 0, svg = 0, sync = 0;
    size_t pixels = 0, pdf_bytes = 0;
    std::vector<double> enc_s;
    std::vector<size_t> enc_bytes;
  };
  const auto encs = encoders(dpi);
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  for (const auto& job : jobs) {
    if (!rows.count(job.kind)) order.push_back(job.kind);
    Row& r = rows[job.kind];
    r.enc_s.resize(encs.size());
    r.enc_bytes.resize(encs.size());
    ++r.figures;
    viz::CaptionedFigure cf;
    r.build += median_seconds(repeats, [&] { cf = job.build(); });
    viz::RgbaImage im;
    r.raster += median_seconds(repeats, [&] { im = viz::render_rgba(cf.figure, dpi); });
    r.pixels += im.pixel_count();
    std::string png, pdf;
    for (size_t e = 0; e < encs.size(); ++e) {
      std::string bytes;
      r.enc_s[e] += median_seconds(repeats, [&] { bytes = encs[e].encode(im); });
      r.enc_bytes[e] += bytes.size();
    }
    png = viz::encode_png(im, dpi);
    r.pdf += median_seconds(repeats, [&] { pdf = viz::render_pdf(cf.figure); });
    r.pdf_bytes += pdf.size();
    r.svg += median_seconds(repeats, [&] { viz::render_svg(cf.figure); });
    r.sync += median_seconds(repeats, [&] {
      io::write_file_atomic((work / (job.stem + ".png")).string(), png);
      io::write_file_atomic((work / (job.stem + ".pdf")).string(), pdf);
    });
  }

  std::printf("%zu figures at %g dpi, %d repeat(s) (medians), %d thread(s) for the analyses\n\n",
              jobs.size(), dpi, repeats, threads);
  std::printf("| figure kind | figures | Mpixels | build ms | raster ms | PNG before ms | PNG now "
              "ms | PDF ms | SVG ms | write+fsync ms | PNG before MB | PNG now MB | PDF MB |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const size_t now = size_t(std::find_if(encs.begin(), encs.end(), [](const Encoder& e) {
                               return e.name.find(": now") != std::string::npos;
                             }) - encs.begin());
  Row total;
  total.enc_s.resize(encs.size());
  total.enc_bytes.resize(encs.size());
  for (const auto& kind : order) {
    const Row& r = rows[kind];
    std::printf("| %s | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f "
                "| %.2f |\n",
                kind.c_str(), r.figures, r.pixels / 1e6, r.build * 1e3, r.raster * 1e3,
                r.enc_s[0] * 1e3, r.enc_s[now] * 1e3, r.pdf * 1e3, r.svg * 1e3, r.sync * 1e3,
                r.enc_bytes[0] / 1e6, r.enc_bytes[now] / 1e6, r.pdf_bytes / 1e6);
    total.figures += r.figures;
    total.pixels += r.pixels;
    total.build += r.build;
    total.raster += r.raster;
    total.pdf += r.pdf;
    total.svg += r.svg;
    total.sync += r.sync;
    total.pdf_bytes += r.pdf_bytes;
    for (size_t e = 0; e < encs.size(); ++e) {
      total.enc_s[e] += r.enc_s[e];
      total.enc_bytes[e] += r.enc_bytes[e];
    }
  }
  std::printf("| **all** | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | "
              "%.2f |\n\n",
              total.figures, total.pixels / 1e6, total.build * 1e3, total.raster * 1e3,
              total.enc_s[0] * 1e3, total.enc_s[now] * 1e3, total.pdf * 1e3, total.svg * 1e3,
              total.sync * 1e3, total.enc_bytes[0] / 1e6, total.enc_bytes[now] / 1e6,
              total.pdf_bytes / 1e6);
  std::printf("| PNG encoder (all %d figures, one thread) | ms | MB | time vs before | bytes vs before |\n",
              total.figures);
  std::printf("|---|---|---|---|---|\n");
  for (size_t e = 0; e < encs.size(); ++e)
    std::printf("| %s | %.0f | %.2f | %.2fx | %.2fx |\n", encs[e].name.c_str(),
                total.enc_s[e] * 1e3, total.enc_bytes[e] / 1e6, total.enc_s[e] / total.enc_s[0],
                double(total.enc_bytes[e]) / double(total.enc_bytes[0]));

  // The stage as the report runs it: PNG + PDF per figure, written, on 1 and `threads` workers.
  std::printf("\n| figure stage (PNG + PDF, written) | wall s |\n|---|---|\n");
  for (int w : {1, threads}) {
    const fs::path out = work / ("stage" + std::to_string(w));
    const double s = median_seconds(repeats, [&] {
      fs::remove_all(out);
      fs::create_directories(out);
      runtime::configure_threads(w);
      cli::write_report_figures(jobs, jobs.size(), {viz::FigureFormat::Png, viz::FigureFormat::Pdf},
                                out.string(), dpi);
    });
    std::printf("| %d worker(s) | %.3f |\n", w, s);
  }
  fs::remove_all(work);
  return 0;
}
