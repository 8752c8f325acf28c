// The evaluation preprocessing of the reference pipelines (timm / torchvision on PIL
// images): resize the short side (PIL-exact resampling, resample.h) keeping the aspect
// ratio, center-crop a square, scale to [0, 1], normalise by mean/std. Every preset carries
// one of these; describe() is what the GUI and exports show.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <string>

#include "core/image/resample.h"
#include "core/io/image_io.h"

namespace attnlab::image {

struct Preprocessing {
  Filter filter = Filter::Bicubic;
  int resize_short = 248;  // short side after the resize; 0 = no resize
  int crop = 224;          // square center crop; 0 = no crop
  int crop_width = 0;      // a crop × crop_width (H × W) crop instead; 0 = square
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  // ImageNet
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};

  std::string describe() const;  // "bicubic resize 248, center crop 224, ImageNet mean/std"
};

// ImageNet evaluation: resize short side to `resize_short` (bicubic), crop `crop`.
Preprocessing imagenet_eval(int resize_short, int crop);

// The size torchvision's Resize(short) gives a w×h image: (new_w, new_h).
std::array<int, 2> resized_size(int width, int height, int short_side);

// The geometric part: the picture resized and cropped, still 8-bit RGB (what the model
// sees before normalisation; what-if edits are applied to it, image_edits.h). Throws
// std::invalid_argument for an empty image, one smaller than the crop, or a resize over
// the pixel limit.
io::RgbImage preprocess_picture(const io::RgbImage& image, const Preprocessing& p);
// The rest: scale to [0, 1] and normalise by mean/std, as (1, 3, H, W) float32.
at::Tensor normalise_picture(const io::RgbImage& picture, const Preprocessing& p);

// Both: (1, 3, crop, crop_width or crop) float32 CPU tensor. Throws std::invalid_argument
// for an empty image.
at::Tensor preprocess(const io::RgbImage& image, const Preprocessing& p);

}  // namespace attnlab::image
