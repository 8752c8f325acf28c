// The anchor-assignment figure: hard-anchor maps over the picture and per-anchor token
// shares, one column per layer.
#include "viz/figures/anchors.h"

#include "core/analysis/result_key.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

const char* kWho = "anchor figure";

struct HardMap {
  int64_t layer;
  const analysis::Array* hard;
  const analysis::Array* soft;
};

RgbaImage blend_labels(const RgbaImage& picture, const analysis::Array& hard, int64_t slot,
                       int anchors, double alpha) {
  const int64_t h = hard.shape[1], w = hard.shape[2];
  // A lightened greyscale copy: on the mostly black pictures of small data sets the
  // palette would otherwise turn muddy, and the picture still shows through as lightness.
  RgbaImage out = greyscale(picture);
  for (size_t i = 0; i < out.pixel_count(); ++i)
    for (int k = 0; k < 3; ++k) out.rgba[i * 4 + k] = uint8_t(96 + out.rgba[i * 4 + k] * 159 / 255);
  // The palette once, premultiplied by alpha (the blend runs per pixel).
  std::vector<std::array<float, 3>> tint(size_t(std::max(anchors, 1)));
  for (int m = 0; m < anchors; ++m) {
    const Color col = anchor_color(m, anchors);
    tint[size_t(m)] = {float(alpha * 255 * col.r), float(alpha * 255 * col.g),
                       float(alpha * 255 * col.b)};
  }
  const auto keep = float(1 - alpha);
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x) {
      const int64_t r = std::min<int64_t>(h - 1, int64_t(y) * h / out.height);
      const int64_t c = std::min<int64_t>(w - 1, int64_t(x) * w / out.width);
      const float v = hard.data[size_t((slot * h + r) * w + c)];
      if (!std::isfinite(v)) continue;
      const long m = std::lround(v);
      if (m < 0 || m >= anchors) continue;
      const auto& t = tint[size_t(m)];
      uint8_t* p = &out.rgba[(size_t(y) * out.width + x) * 4];
      for (size_t k = 0; k < 3; ++k) p[k] = uint8_t(keep * float(p[k]) + t[k] + 0.5f);
      p[3] = 255;
    }
  return out;
}

}  // namespace

Color anchor_color(int m, int anchors) {
  // matplotlib's tab10 / tab20 without their greys, which would read as "no colour" over
  // the greyscale picture.
  static const unsigned kTab9[9] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                    0x8c564b, 0xe377c2, 0xbcbd22, 0x17becf};
  static const unsigned kTab18[18] = {0x1f77b4, 0xaec7e8, 0xff7f0e, 0xffbb78, 0x2ca02c, 0x98df8a,
                                      0xd62728, 0xff9896, 0x9467bd, 0xc5b0d5, 0x8c564b, 0xc49c94,
                                      0xe377c2, 0xf7b6d2, 0xbcbd22, 0xdbdb8d, 0x17becf, 0x9edae5};
  const int i = m < 0 ? 0 : m;
  return anchors <= 9 ? color_hex(kTab9[i % 9]) : color_hex(kTab18[i % 18]);
}

CaptionedFigure anchor_figure(const std::vector<analysis::Array>& image_arrays,
                              const std::string& image_tag, const RgbaImage& image,
                              const std::vector<analysis::Table>& tables,
                              const AnchorFigureOptions& options) {
  if (image.empty() || image.rgba.size() != image.pixel_count() * 4)
    throw std::invalid_argument(std::string(kWho) +
                                ": the image is empty or its buffer does not match its size");
  std::string tag = image_tag;
  std::vector<HardMap> maps;
  for (const auto& a : image_arrays) {
    auto key = analysis::parse_result_key(a.name);  // anchors__<image>__L<ll>__hard
    if (!key || key->analysis != "anchors" || key->part != "hard") continue;
    const int64_t layer = key->layer;
    if (tag.empty()) tag = key->image;
    if (key->image != tag) continue;
    if (!options.layers.empty() &&
        std::find(options.layers.begin(), options.layers.end(), layer) == options.layers.end())
      continue;
    require_axes(a, {"head", "y", "x"}, kWho);
    key->part = "soft";
    maps.push_back(
        {layer, &a, find_array_or_null(image_arrays, analysis::format_result_key(*key))});
  }
  if (maps.empty())
    throw std::invalid_argument(std::string(kWho) + ": no array \"anchors__" +
                                (tag.empty() ? "<image>" : tag) +
                                "__L<ll>__hard\" for the requested layers");
  std::sort(maps.begin(), maps.end(),
            [](const HardMap& x, const HardMap& y) { return x.layer < y.layer; });
  for (int64_t want : options.layers)
    if (std::none_of(maps.begin(), maps.end(), [&](const HardMap& m) { return m.layer == want; }))
      throw std::invalid_argument(std::string(kWho) + ": no array \"anchors__" + tag + "__" +
                                  layer_tag(want) + "__hard\"");

  const analysis::Table* usage = find_table_or_null(tables, "anchors_usage");
  std::optional<Columns> ucols;
  if (usage) {
    ucols.emplace(*usage, kWho);
    for (const char* c : {"layer", "head", "anchor", "usage_mean"}) ucols->index(c);
  }
  const RgbaImage picture = scale_image_nearest(image, upscale_factor(image, 224));

  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = int(maps.size());
  std::vector<Panel> bars_row;
  for (const HardMap& hm : maps) {
    const analysis::Array& hard = *hm.hard;
    const int64_t slots = hard.shape[0], h = hard.shape[1], w = hard.shape[2];
    const int64_t slot = options.head < 0 ? slots - 1 : options.head;
    if (slot >= slots)
      throw std::invalid_argument(std::string(kWho) + ": head " + std::to_string(options.head) +
                                  " out of range: \"" + hard.name + "\" has " +
                                  std::to_string(slots - 1) + " heads and the head-mean");
    // Anchor count: the soft assignment's last axis, else the table, else the labels seen.
    int anchors = 0;
    if (hm.soft && hm.soft->shape.size() == 3) anchors = int(hm.soft->shape[2]);
    std::vector<double> share;
    for (int64_t i = 0; i < h * w; ++i) {
      const float v = hard.data[size_t(slot * h * w + i)];
      if (!std::isfinite(v) || v < 0) continue;
      const size_t m = size_t(std::lround(v));
      if (share.size() <= m) share.resize(m + 1, 0.0);
      share[m] += 1.0 / double(h * w);
    }
    std::vector<double> mean_usage;
    if (usage) {
      std::vector<int> count;
      for (const auto& row : usage->rows) {
        if (int64_t(std::llround(ucols->number(row, "layer"))) != hm.layer) continue;
        const std::string head = ucols->text(row, "head");
        if (options.head >= 0 && head != std::to_string(options.head)) continue;
        const double a = ucols->number(row, "anchor"), u = ucols->number(row, "usage_mean");
        if (!std::isfinite(a) || !std::isfinite(u) || a < 0) continue;
        const size_t m = size_t(std::llround(a));
        if (mean_usage.size() <= m) mean_usage.resize(m + 1, 0.0), count.resize(m + 1, 0);
        mean_usage[m] += u;
        count[m] += 1;
      }
      for (size_t m = 0; m < mean_usage.size(); ++m)
        mean_usage[m] = count[m] ? mean_usage[m] / count[m] : std::nan("");
    }
    anchors = std::max({anchors, int(share.size()), int(mean_usage.size())});
    share.resize(size_t(anchors), 0.0);

    Panel map = image_panel(blend_labels(picture, hard, slot, anchors, options.alpha),
                            "layer " + std::to_string(hm.layer));
    f.panels.push_back(map);

    Panel bars;
    bars.x.label = "anchor";
    bars.y.label = bars_row.empty() ? "token share" : "";
    bars.x.min = -0.7;
    bars.x.max = anchors - 0.3;
    double top = 1.0 / anchors;
    for (int m = 0; m < anchors; ++m) {
      BarSeries b;
      b.x = {double(m)};
      b.height = {share[size_t(m)]};
      b.color = anchor_color(m, anchors);
      bars.items.push_back(b);
      top = std::max(top, share[size_t(m)]);
    }
    LineSeries uniform;
    uniform.x = {bars.x.min, bars.x.max};
    uniform.y = {1.0 / anchors, 1.0 / anchors};
    uniform.dashed = true;
    uniform.width_pt = 0.8;
    uniform.color = Color{0.3, 0.3, 0.3, 1};
    uniform.label = bars_row.empty() ? "uniform 1/M" : "";
    bars.items.push_back(uniform);
    if (!mean_usage.empty()) {
      LineSeries dots;
      dots.width_pt = 0;
      dots.marker_pt = 2.8;
      dots.color = kBlack;
      dots.label = bars_row.empty() ? "mean soft usage" : "";
      for (size_t m = 0; m < mean_usage.size(); ++m) {
        dots.x.push_back(double(m));
        dots.y.push_back(mean_usage[m]);
        if (std::isfinite(mean_usage[m])) top = std::max(top, mean_usage[m]);
      }
      bars.items.push_back(dots);
    }
    bars.y.min = 0;
    bars.y.max = top * (bars_row.empty() ? 1.45 : 1.1);
    bars.legend = bars_row.empty();
    bars_row.push_back(bars);
  }
  // All bar panels share the first one's y range (it has the legend's headroom).
  double ymax = 0;
  for (const auto& b : bars_row) ymax = std::max(ymax, b.y.max);
  for (auto& b : bars_row) b.y.max = ymax, f.panels.push_back(b);
  if (maps.size() == 1) f.cols = 2;  // one layer: the map beside its bars
  f.height_in = 6.0;
  fit_height_to_images(f);

  const int64_t slots = maps[0].hard->shape[0];
  const std::string who_head = options.head < 0
                                   ? "the head-mean of A (" + std::to_string(slots - 1) + " heads)"
                                   : "head " + std::to_string(options.head);
  std::string caption = "Hard anchor assignment argmax_m A (" + who_head +
                        ") of every token of image \"" + tag +
                        "\", each anchor a colour blended at " + format_number(options.alpha, 2) +
                        " over the greyscale picture, per layer; below, the share of the image's "
                        "tokens held by each anchor";
  if (usage)
    caption += std::string(", with the mean soft usage Δ_m/N over the image set (dots") +
               (options.head < 0 ? ", mean over heads)" : ")");
  caption += " and the uniform share 1/M (dashed).";
  return {f, caption};
}

}  // namespace attnlab::viz
