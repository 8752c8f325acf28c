// Evaluation preprocessing: PIL-exact resampling (a hand-computed case, and images whose
// resize Pillow 9.4.0 — Debian 12's python3-pil — computed, compared by checksums and
// sample pixels), torchvision's resize/crop geometry, and the normalisation.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <tuple>

#include "core/image/preprocess.h"

namespace attnlab::testing {
namespace {

using image::Filter;

io::RgbImage make_image(int w, int h) {
  io::RgbImage im;
  im.width = w;
  im.height = h;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      im.rgb.push_back(static_cast<uint8_t>((x * 37 + y * 101) % 256));
      im.rgb.push_back(static_cast<uint8_t>((x * 11 + y * 7 + 50) % 256));
      im.rgb.push_back(static_cast<uint8_t>((x * x + y * 3) % 256));
    }
  return im;
}

std::array<int, 3> pixel(const io::RgbImage& im, size_t index) {
  return {im.rgb[index * 3], im.rgb[index * 3 + 1], im.rgb[index * 3 + 2]};
}

TEST(Resample, BicubicDownscaleByTwoMatchesTheHandComputedTaps) {
  // 4 → 2 pixels: scale 2 widens PIL's bicubic (a = −0.5, support 2) to support 4; output 0
  // has centre 1.0 and taps bicubic((x − 0.5)/2) = 0.8671875, 0.8671875, 0.2265625,
  // −0.0703125 (sum 1.890625) on 0, 100, 200, 255 → 60.35 → 60; output 1 mirrors it:
  // 220.68 → 221.
  io::RgbImage row;
  row.width = 4;
  row.height = 1;
  for (int v : {0, 100, 200, 255})
    for (int c = 0; c < 3; ++c) row.rgb.push_back(static_cast<uint8_t>(v));
  const io::RgbImage out = image::resize_like_pil(row, 2, 1, Filter::Bicubic);
  ASSERT_EQ(out.rgb.size(), 6u);
  EXPECT_EQ(pixel(out, 0), (std::array<int, 3>{60, 60, 60}));
  EXPECT_EQ(pixel(out, 1), (std::array<int, 3>{221, 221, 221}));
}

TEST(Resample, MatchesPillowOnDownscaleUpscaleAndBilinear) {
  struct Case {
    int w, h, ow, oh;
    Filter filter;
    int64_t sum, weighted;  // Σ bytes, Σ index·byte mod 1000003
    std::array<int, 3> first, middle, last;
  };
  const Case cases[] = {
      {37, 23, 16, 11, Filter::Bicubic, 66010, 546000, {92, 62, 3}, {128, 82, 156}, {147, 76, 72}},
      {37, 23, 80, 50, Filter::Bicubic, 1496973, 70019, {0, 48, 0}, {94, 128, 34}, {238, 90, 89}},
      {37, 23, 16, 11, Filter::Bilinear, 66023, 549586, {99, 64, 3}, {124, 82, 146}, {145, 74, 74}},
      {300,
       200,
       372,
       248,
       Filter::Bicubic,
       35188284,
       762373,
       {0, 50, 0},
       {103, 237, 44},
       {192, 124, 146}},
  };
  for (const Case& c : cases) {
    const io::RgbImage out = image::resize_like_pil(make_image(c.w, c.h), c.ow, c.oh, c.filter);
    int64_t sum = 0, weighted = 0;
    for (size_t i = 0; i < out.rgb.size(); ++i) {
      sum += out.rgb[i];
      weighted = (weighted + static_cast<int64_t>(i) * out.rgb[i]) % 1000003;
    }
    const size_t n = static_cast<size_t>(c.ow) * c.oh;
    EXPECT_EQ(sum, c.sum) << c.w << "x" << c.h << " -> " << c.ow << "x" << c.oh;
    EXPECT_EQ(weighted, c.weighted) << c.w << "x" << c.h << " -> " << c.ow << "x" << c.oh;
    EXPECT_EQ(pixel(out, 0), c.first);
    EXPECT_EQ(pixel(out, n / 2), c.middle);
    EXPECT_EQ(pixel(out, n - 1), c.last);
  }
}

TEST(Preprocess, ResizeKeepsTheAspectRatioLikeTorchvision) {
  EXPECT_EQ(image::resized_size(640, 480, 248), (std::array<int, 2>{330, 248}));
  EXPECT_EQ(image::resized_size(480, 640, 256), (std::array<int, 2>{256, 341}));
  EXPECT_EQ(image::resized_size(300, 300, 248), (std::array<int, 2>{248, 248}));
}

TEST(Preprocess, CenterCropRoundsHalfToEvenAndNormalises) {
  // No resize: a 249×250 image cropped to 224 starts at left round(12.5) = 12 (half to
  // even, as Python's round) and top round(13.0) = 13.
  image::Preprocessing p = image::imagenet_eval(0, 224);
  const io::RgbImage im = make_image(249, 250);
  const at::Tensor t = image::preprocess(im, p);
  ASSERT_EQ(t.sizes(), (at::IntArrayRef{1, 3, 224, 224}));
  for (auto [y, x] : {std::pair{0, 0}, std::pair{100, 57}, std::pair{223, 223}}) {
    const auto src = pixel(im, static_cast<size_t>(y + 13) * 249 + (x + 12));
    for (int c = 0; c < 3; ++c) {
      const float expected = (static_cast<float>(src[c]) / 255.0f - p.mean[c]) / p.std[c];
      EXPECT_FLOAT_EQ(t[0][c][y][x].item<float>(), expected) << y << "," << x << " c" << c;
    }
  }
}

TEST(Preprocess, ConstantImageGivesTheNormalisedConstantAtEveryPixel) {
  io::RgbImage im;
  im.width = 300;
  im.height = 260;
  for (int i = 0; i < 300 * 260; ++i) im.rgb.insert(im.rgb.end(), {10, 128, 250});
  const image::Preprocessing p = image::imagenet_eval(248, 224);
  const at::Tensor t = image::preprocess(im, p);
  ASSERT_EQ(t.sizes(), (at::IntArrayRef{1, 3, 224, 224}));
  const float values[3] = {10, 128, 250};
  for (int c = 0; c < 3; ++c) {
    const float expected = (values[c] / 255.0f - p.mean[c]) / p.std[c];
    EXPECT_FLOAT_EQ(t[0][c].min().item<float>(), expected);
    EXPECT_FLOAT_EQ(t[0][c].max().item<float>(), expected);
  }
  EXPECT_EQ(p.describe(), "bicubic resize 248, center crop 224, ImageNet mean/std");
}

// A 1 x 300000 image passes the decoder's pixel limit (300000 pixels), but resizing its
// shorter side to 248 would make it 248 x 74400000: refused before any resize allocates.
// An elongated image whose resize stays under the limit still runs.
TEST(Preprocess, RefusesAnAspectRatioWhoseResizeWouldExceedThePixelLimit) {
  io::RgbImage tall;
  tall.width = 1;
  tall.height = 300000;
  tall.rgb.assign(size_t(3) * 300000, 128);
  try {
    image::preprocess(tall, image::imagenet_eval(248, 224));
    FAIL() << "a 1x300000 image was resized";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1×300000"), std::string::npos) << what;
    EXPECT_NE(what.find("over the limit of " + std::to_string(io::ImageLimits{}.max_pixels)),
              std::string::npos)
        << what;
  }
  const at::Tensor ok = image::preprocess(make_image(4, 400), image::imagenet_eval(248, 224));
  EXPECT_EQ(ok.sizes(), (at::IntArrayRef{1, 3, 224, 224}));
}

TEST(Preprocess, RefusesEmptyAndTooSmallImages) {
  EXPECT_THROW(image::preprocess(io::RgbImage{}, image::imagenet_eval(248, 224)),
               std::invalid_argument);
  EXPECT_THROW(image::preprocess(make_image(100, 120), image::imagenet_eval(0, 224)),
               std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::testing
