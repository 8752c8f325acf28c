// The figure renderer: the PNG file holds exactly the RGBA buffer's pixels; SVG and PDF
// parse (xmllint, pdfinfo) and carry the text labels (searchable, fonts embedded); the
// data-to-pixel transform round-trips through hit_test; writes are atomic; map figures fit
// their height; the overlay's upsampling and normalisation do what they say.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/viz/figure_test_util.h"
#include "tests/viz/sample_figures.h"
#include "viz/figure_layout.h"
#include "viz/overlay.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

using testing::run_output;

// The value of "Field:   value" in pdfinfo's output.
std::string info_field(const std::string& info, const std::string& field) {
  std::istringstream in(info);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) != 0) continue;
    const size_t v = line.find_first_not_of(' ', field.size() + 1);
    return v == std::string::npos ? "" : line.substr(v);
  }
  return "";
}

TEST(FigureRender, PngFileHoldsTheRgbaBufferPixels) {
  const auto dir = testing::temp_dir("png");
  for (const Figure& f : {testing::sample_plot_figure(), testing::sample_map_figure()}) {
    const RgbaImage buffer = render_rgba(f, 150);
    EXPECT_EQ(buffer.width, int(std::lround(f.width_in * 150)));
    EXPECT_EQ(buffer.height, int(std::lround(f.height_in * 150)));
    const std::string path = (dir / "f.png").string();
    write_figure(f, path, FigureFormat::Png, 150);
    const RgbaImage file = testing::read_png(path);
    ASSERT_EQ(file.width, buffer.width);
    ASSERT_EQ(file.height, buffer.height);
    EXPECT_TRUE(file.rgba == buffer.rgba) << "PNG and RGBA buffer differ";
  }
  std::filesystem::remove_all(dir);
}

TEST(FigureRender, PngRecordsItsResolution) {
  const std::string png = render_png(testing::sample_plot_figure(), 300);
  const size_t at = png.find("pHYs");
  ASSERT_NE(at, std::string::npos);
  const auto* p = reinterpret_cast<const unsigned char*>(png.data() + at + 4);
  const uint32_t ppm =
      (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
  EXPECT_EQ(ppm, 11811u);  // 300 dpi in pixels per metre
  EXPECT_EQ(p[8], 1);      // unit: metre
}

TEST(FigureRender, SvgParsesAndCarriesTheLabels) {
  const auto dir = testing::temp_dir("svg");
  const std::string path = (dir / "plot.svg").string();
  write_figure(testing::sample_plot_figure(), path, FigureFormat::Svg);
  const std::string svg = testing::read_text(path);
  for (const char* label :
       {"Sample plot", "rank per layer", "KV buffer", "output", "anchor", "share"})
    EXPECT_NE(svg.find(std::string(">") + label + "<"), std::string::npos) << label;
  if (!testing::have_program("xmllint")) GTEST_SKIP() << "xmllint not installed (scripts/setup.sh)";
  int status = -1;
  run_output("xmllint --noout '" + path + "' 2>&1", &status);
  EXPECT_EQ(status, 0) << "xmllint rejects the SVG";
  std::filesystem::remove_all(dir);
}

TEST(FigureRender, PdfParsesEmbedsFontsAndCarriesTheLabels) {
  const auto dir = testing::temp_dir("pdf");
  const std::string path = (dir / "plot.pdf").string();
  write_figure(testing::sample_plot_figure(), path, FigureFormat::Pdf);
  EXPECT_EQ(testing::read_text(path).rfind("%PDF-", 0), 0u);
  if (!testing::have_program("pdfinfo"))
    GTEST_SKIP() << "poppler-utils not installed (scripts/setup.sh)";
  int status = -1;
  const std::string info = run_output("pdfinfo '" + path + "' 2>&1", &status);
  EXPECT_EQ(status, 0) << info;
  EXPECT_EQ(info_field(info, "Pages"), "1") << info;
  EXPECT_EQ(info_field(info, "Title"), "Sample plot") << info;
  const std::string text = run_output("pdftotext '" + path + "' - 2>&1");
  for (const char* label : {"rank per layer", "KV buffer", "output", "anchor", "share"})
    EXPECT_NE(text.find(label), std::string::npos) << label << " not in:\n" << text;
  const std::string fonts = run_output("pdffonts '" + path + "' 2>&1");
  EXPECT_NE(fonts.find("DejaVuSans"), std::string::npos) << fonts;
  EXPECT_EQ(fonts.find(" no  "), std::string::npos) << "a font is not embedded:\n" << fonts;
  std::filesystem::remove_all(dir);
}

TEST(FigureRender, HitTestInvertsTheDataTransform) {
  const Figure f = testing::sample_plot_figure();
  const FigureLayout L = layout_figure(f);
  const double dpi = 144;
  for (int panel = 0; panel < 2; ++panel) {
    const PointXY pt = data_to_points(f.panels[size_t(panel)], L.panels[size_t(panel)], 1.0, 0.25);
    const auto hit = hit_test(f, L, pt.x * dpi / 72, pt.y * dpi / 72, dpi);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->panel, panel);
    EXPECT_NEAR(hit->x, 1.0, 1e-9);
    EXPECT_NEAR(hit->y, 0.25, 1e-9);
  }
  EXPECT_FALSE(hit_test(f, L, 1, 1, dpi).has_value());  // the top-left corner is margin
}

TEST(FigureRender, ImagePanelsKeepTheirAspectAndTheFigureFitsThem) {
  Figure f = testing::sample_map_figure();
  f.height_in = 4.0;  // far too tall
  f.height_in = fitted_height_in(f);
  EXPECT_LT(f.height_in, 2.0);
  const FigureLayout L = layout_figure(f);
  const PanelLayout& over = L.panels[0];
  EXPECT_NEAR(over.plot.w, over.plot.h, 1e-6);  // a square image stays square
  EXPECT_LT(over.cell.y + over.cell.h - (over.plot.y + over.plot.h), 6.0);  // little blank below
}

TEST(FigureRender, FailedWriteLeavesNothing) {
  const auto dir = testing::temp_dir("atomic");
  const std::string path = (dir / "missing" / "f.pdf").string();
  EXPECT_THROW(write_figure(testing::sample_plot_figure(), path, FigureFormat::Pdf),
               std::exception);
  EXPECT_FALSE(std::filesystem::exists(path));
  Figure bad = testing::sample_plot_figure();
  bad.width_in = 0;
  EXPECT_THROW(render_rgba(bad, 100), std::invalid_argument);
  std::filesystem::remove_all(dir);
}

TEST(FigureRender, FormatNames) {
  EXPECT_EQ(figure_format_from_name("svg"), FigureFormat::Svg);
  EXPECT_EQ(figure_format_from_name("pdf"), FigureFormat::Pdf);
  EXPECT_EQ(figure_format_from_name("png"), FigureFormat::Png);
  EXPECT_FALSE(figure_format_from_name("jpg").has_value());
}

TEST(Overlay, UpsamplingNearestAndBilinear) {
  const float map[4] = {0, 1, 2, 3};  // 2x2
  const auto nearest = upsample_map(map, 2, 2, 4, 4, Upsample::Nearest);
  EXPECT_EQ(nearest[0], 0.f);
  EXPECT_EQ(nearest[3], 1.f);
  EXPECT_EQ(nearest[15], 3.f);
  const auto bilinear = upsample_map(map, 2, 2, 4, 4, Upsample::Bilinear);
  // align_corners=False: output pixel 0 samples input -0.25 (clamped to 0), pixel 1 at 0.25.
  EXPECT_FLOAT_EQ(bilinear[0], 0.f);
  EXPECT_FLOAT_EQ(bilinear[1], 0.25f);
  EXPECT_FLOAT_EQ(bilinear[5], 0.75f);  // at (0.25, 0.25)
}

TEST(Overlay, NormalisationRanges) {
  const float v[4] = {2, 4, NAN, 6};
  const ValueRange mm = map_range(v, 4, MapNormalisation::MinMax);
  EXPECT_EQ(mm.lo, 2);
  EXPECT_EQ(mm.hi, 6);
  const ValueRange dm = map_range(v, 4, MapNormalisation::DivideByMax);
  EXPECT_EQ(dm.lo, 0);
  EXPECT_EQ(dm.hi, 6);
  const ValueRange sh = map_range(v, 4, MapNormalisation::Shared, ValueRange{-1, 9});
  EXPECT_EQ(sh.lo, -1);
  EXPECT_EQ(sh.hi, 9);
  const std::vector<float> a{1, 2}, b{-3, 0.5f};
  const ValueRange u = union_range({&a, &b}, false);
  EXPECT_EQ(u.lo, -3);
  EXPECT_EQ(u.hi, 2);
}

TEST(Overlay, BlendsOverGreyscaleWithAlpha) {
  RgbaImage img;
  img.width = img.height = 2;
  img.rgba = {255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255};
  const float map[1] = {0.f};
  OverlayStyle st;
  st.alpha = 0.0;
  const RgbaImage grey = overlay_map(img, map, 1, 1, ValueRange{0, 1}, st);
  EXPECT_EQ(grey.rgba[0], 76);  // 0.299 * 255, the luma of pure red
  EXPECT_EQ(grey.rgba[1], 76);
  st.alpha = 1.0;
  const RgbaImage full = overlay_map(img, map, 1, 1, ValueRange{0, 1}, st);
  const Rgba8 c0 = colormap_at(Colormap::Viridis, 0.f);
  EXPECT_EQ(full.rgba[0], c0.r);
  EXPECT_EQ(full.rgba[2], c0.b);
}

}  // namespace
}  // namespace attnlab::viz
