// The merge-group figure (declared in merges.h).
#include "viz/figures/merges.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/analysis/result_key.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

const char* kWho = "merge figure";

struct GroupMap {
  int64_t layer;
  const analysis::Array* groups;
};

}  // namespace

RgbaImage paint_groups(const RgbaImage& picture, const std::vector<float>& groups, int64_t h,
                       int64_t w) {
  if (h <= 0 || w <= 0 || int64_t(groups.size()) != h * w)
    throw std::invalid_argument(std::string(kWho) + ": a group map of " +
                                std::to_string(groups.size()) + " labels is not " +
                                std::to_string(h) + "×" + std::to_string(w));
  const int width = picture.width, height = picture.height;
  // The patch under each pixel (nearest, as the maps are drawn).
  std::vector<long> label(size_t(width) * size_t(height));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int64_t r = std::min<int64_t>(h - 1, int64_t(y) * h / height);
      const int64_t c = std::min<int64_t>(w - 1, int64_t(x) * w / width);
      label[size_t(y) * width + x] = std::lround(groups[size_t(r * w + c)]);
    }
  // Mean colour per group over its pixels.
  std::map<long, std::array<double, 4>> sum;  // r, g, b, count
  for (size_t i = 0; i < label.size(); ++i) {
    auto& s = sum[label[i]];
    for (int k = 0; k < 3; ++k) s[size_t(k)] += picture.rgba[i * 4 + size_t(k)];
    s[3] += 1;
  }
  RgbaImage out = picture;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const size_t i = size_t(y) * width + x;
      const long g = label[i];
      const bool edge =
          (x + 1 < width && label[i + 1] != g) || (y + 1 < height && label[i + size_t(width)] != g);
      const auto& s = sum[g];
      for (int k = 0; k < 3; ++k)
        out.rgba[i * 4 + size_t(k)] =
            edge ? uint8_t(30) : uint8_t(std::lround(s[size_t(k)] / s[3]));
      out.rgba[i * 4 + 3] = 255;
    }
  return out;
}

CaptionedFigure merge_figure(const std::vector<analysis::Array>& image_arrays,
                             const std::string& image_tag, const RgbaImage& image,
                             const MergeFigureOptions& options) {
  if (image.empty() || image.rgba.size() != image.pixel_count() * 4)
    throw std::invalid_argument(std::string(kWho) +
                                ": the image is empty or its buffer does not match its size");
  std::string tag = image_tag;
  std::vector<GroupMap> maps;
  for (const auto& a : image_arrays) {
    const auto key = analysis::parse_result_key(a.name);  // merges__<image>__L<ll>__group
    if (!key || key->analysis != "merges" || key->part != "group") continue;
    if (tag.empty()) tag = key->image;
    if (key->image != tag) continue;
    if (!options.layers.empty() &&
        std::find(options.layers.begin(), options.layers.end(), key->layer) == options.layers.end())
      continue;
    require_axes(a, {"y", "x"}, kWho);
    maps.push_back({key->layer, &a});
  }
  if (maps.empty())
    throw std::invalid_argument(std::string(kWho) + ": no array \"merges__" +
                                (tag.empty() ? "<image>" : tag) +
                                "__L<ll>__group\" for the requested layers (the model merges "
                                "no tokens, or the merges analysis did not run)");
  std::sort(maps.begin(), maps.end(),
            [](const GroupMap& x, const GroupMap& y) { return x.layer < y.layer; });
  for (int64_t want : options.layers)
    if (std::none_of(maps.begin(), maps.end(), [&](const GroupMap& m) { return m.layer == want; }))
      throw std::invalid_argument(std::string(kWho) + ": no array \"merges__" + tag + "__" +
                                  layer_tag(want) + "__group\"");

  const RgbaImage picture = scale_image_nearest(image, upscale_factor(image, 224));
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = std::max(1, std::min(options.cols, int(maps.size()) + 1));
  f.panels.push_back(image_panel(picture, "input"));
  for (const GroupMap& m : maps) {
    const analysis::Array& g = *m.groups;
    std::map<long, int> distinct;
    for (float v : g.data) distinct[std::lround(v)] += 1;
    f.panels.push_back(image_panel(paint_groups(picture, g.data, g.shape[0], g.shape[1]),
                                   "after layer " + std::to_string(m.layer) + ": " +
                                       std::to_string(distinct.size()) + " groups"));
  }
  f.height_in = 6.0;
  fit_height_to_images(f);
  return {f, "Token merging (ToMe) of image \"" + tag +
                 "\": after each layer's block, the patches each merged token holds, painted "
                 "with their mean colour and outlined (the class token is never merged and "
                 "not shown)."};
}

}  // namespace attnlab::viz
