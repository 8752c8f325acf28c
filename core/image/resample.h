// Image resizing that reproduces what the reference evaluation pipelines compute: timm and
// torchvision resize PIL images, and PIL's resampling is an antialiased separable filter
// (the kernel widens with the downscale factor) evaluated in 8-bit fixed point with a
// rounded, clipped uint8 image between the horizontal and the vertical pass. OpenCV's
// INTER_CUBIC neither antialiases nor uses PIL's kernel (a = −0.5), so it would feed the
// models different pixels than the papers measured with.
#pragma once

#include "core/io/image_io.h"

namespace attnlab::image {

enum class Filter { Bilinear, Bicubic };

// Resize to width × height like PIL's Image.resize(size, filter) on an RGB image.
io::RgbImage resize_like_pil(const io::RgbImage& in, int width, int height, Filter filter);

}  // namespace attnlab::image
