// Reference-exact evaluation preprocessing.
#include "core/image/preprocess.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace attnlab::image {

std::string Preprocessing::describe() const {
  std::string s;
  if (resize_short > 0)
    s += std::string(filter == Filter::Bicubic ? "bicubic" : "bilinear") + " resize " +
         std::to_string(resize_short) + ", ";
  if (crop > 0)
    s += "center crop " + std::to_string(crop) +
         (crop_width > 0 && crop_width != crop ? "x" + std::to_string(crop_width) : "") + ", ";
  const bool imagenet = mean == std::array<float, 3>{0.485f, 0.456f, 0.406f} &&
                        std == std::array<float, 3>{0.229f, 0.224f, 0.225f};
  return s + (imagenet ? "ImageNet mean/std" : "custom mean/std");
}

Preprocessing imagenet_eval(int resize_short, int crop) {
  Preprocessing p;
  p.resize_short = resize_short;
  p.crop = crop;
  return p;
}

std::array<int, 2> resized_size(int width, int height, int short_side) {
  // torchvision: the long side is int(short_side · long / short), truncated.
  if (width <= height)
    return {short_side, static_cast<int>(static_cast<int64_t>(short_side) * height / width)};
  return {static_cast<int>(static_cast<int64_t>(short_side) * width / height), short_side};
}

io::RgbImage preprocess_picture(const io::RgbImage& image, const Preprocessing& p) {
  if (image.width <= 0 || image.height <= 0) throw std::invalid_argument("preprocess: empty image");
  io::RgbImage img = image;
  if (p.resize_short > 0) {
    // An extreme aspect ratio passes the decoder's pixel limit and then explodes here:
    // 1 x 300000 resized to a shorter side of 28 is 28 x 8400000. Refuse it before resizing.
    const int64_t shorter = std::min(img.width, img.height),
                  longer = std::max(img.width, img.height);
    const int64_t resized_longer = int64_t(p.resize_short) * longer / shorter;
    const int64_t limit = io::ImageLimits{}.max_pixels;
    if (resized_longer > std::numeric_limits<int>::max() || resized_longer * p.resize_short > limit)
      throw std::invalid_argument(
          "preprocess: resizing a " + std::to_string(img.width) + "×" + std::to_string(img.height) +
          " image to a shorter side of " + std::to_string(p.resize_short) + " would make it " +
          std::to_string(resized_longer) + " pixels long, " +
          std::to_string(resized_longer * p.resize_short) + " pixels, over the limit of " +
          std::to_string(limit) + " pixels (crop the image first)");
    const auto [w, h] = resized_size(img.width, img.height, p.resize_short);
    if (w != img.width || h != img.height) img = resize_like_pil(img, w, h, p.filter);
  }
  if (p.crop > 0) {
    const int ch = p.crop, cw = p.crop_width > 0 ? p.crop_width : p.crop;
    if (img.width < cw || img.height < ch)
      throw std::invalid_argument("preprocess: a " + std::to_string(img.width) + "×" +
                                  std::to_string(img.height) + " image is smaller than the " +
                                  std::to_string(cw) + "×" + std::to_string(ch) + " crop");
    // torchvision: int(round((size − crop) / 2)), Python's round-half-to-even.
    const int top = static_cast<int>(std::nearbyint((img.height - ch) / 2.0));
    const int left = static_cast<int>(std::nearbyint((img.width - cw) / 2.0));
    if (ch != img.height || cw != img.width) {
      io::RgbImage out;
      out.width = cw;
      out.height = ch;
      out.rgb.resize(size_t(cw) * size_t(ch) * 3);
      for (int y = 0; y < ch; ++y)
        std::copy_n(img.rgb.begin() + (ptrdiff_t(top + y) * img.width + left) * 3, size_t(cw) * 3,
                    out.rgb.begin() + ptrdiff_t(y) * cw * 3);
      img = std::move(out);
    }
  }
  return img;
}

at::Tensor normalise_picture(const io::RgbImage& picture, const Preprocessing& p) {
  if (picture.width <= 0 || picture.height <= 0)
    throw std::invalid_argument("preprocess: empty picture");
  // from_blob does not own the pixels: to(kFloat) copies them before `picture` can go.
  const at::Tensor t = at::from_blob(const_cast<uint8_t*>(picture.rgb.data()),
                                     {picture.height, picture.width, 3}, at::kByte)
                           .permute({2, 0, 1});
  const auto mean = at::tensor(at::ArrayRef<float>(p.mean.data(), 3)).view({3, 1, 1});
  const auto stdv = at::tensor(at::ArrayRef<float>(p.std.data(), 3)).view({3, 1, 1});
  return t.to(at::kFloat).div(255).sub(mean).div(stdv).unsqueeze(0).contiguous();
}

at::Tensor preprocess(const io::RgbImage& image, const Preprocessing& p) {
  return normalise_picture(preprocess_picture(image, p), p);
}

}  // namespace attnlab::image
