// PIL-compatible separable resampling (8-bit path).
//
// For each output index the filter is centred at (i + 0.5)·scale in input coordinates and
// stretched by max(scale, 1) (that stretch is the antialiasing); taps are normalised to sum
// to 1, then quantised to 22-bit fixed point, and each pass rounds (+ half) and clips to
// 0..255 — the arithmetic PIL uses for 8-bit images, so results match it exactly.
#include "core/image/resample.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace attnlab::image {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double bicubic(double x) {
  constexpr double a = -0.5;  // PIL's bicubic
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Per output index: the first input index and the fixed-point taps.
struct Taps {
  std::vector<int> first;
  std::vector<std::vector<int32_t>> weights;
};

Taps compute_taps(int in_size, int out_size, Filter filter) {
  const double support_1 = filter == Filter::Bicubic ? 2.0 : 1.0;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = support_1 * filter_scale;
  Taps taps;
  taps.first.resize(static_cast<size_t>(out_size));
  taps.weights.resize(static_cast<size_t>(out_size));
  for (int i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    const int lo = std::max(0, static_cast<int>(center - support + 0.5));
    const int hi = std::min(in_size, static_cast<int>(center + support + 0.5));
    std::vector<double> w;
    double total = 0.0;
    for (int x = lo; x < hi; ++x) {
      const double t = (x - center + 0.5) / filter_scale;
      w.push_back(filter == Filter::Bicubic ? bicubic(t) : triangle(t));
      total += w.back();
    }
    auto& q = taps.weights[static_cast<size_t>(i)];
    for (double v : w) {
      const double k = total != 0.0 ? v / total : 0.0;
      const double f = k * static_cast<double>(1 << kPrecisionBits);
      q.push_back(static_cast<int32_t>(k < 0 ? f - 0.5 : f + 0.5));
    }
    taps.first[static_cast<size_t>(i)] = lo;
  }
  return taps;
}

uint8_t clip8(int64_t acc) {
  const int64_t v = acc >> kPrecisionBits;
  return static_cast<uint8_t>(std::clamp<int64_t>(v, 0, 255));
}

// One pass along x (horizontal) or y (vertical) of an interleaved RGB image.
io::RgbImage pass(const io::RgbImage& in, int out_size, bool horizontal, Filter filter) {
  const Taps taps = compute_taps(horizontal ? in.width : in.height, out_size, filter);
  io::RgbImage out;
  out.width = horizontal ? out_size : in.width;
  out.height = horizontal ? in.height : out_size;
  out.rgb.resize(static_cast<size_t>(out.width) * out.height * 3);
  const int64_t half = int64_t{1} << (kPrecisionBits - 1);
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      const int i = horizontal ? x : y;
      const auto& w = taps.weights[static_cast<size_t>(i)];
      const int first = taps.first[static_cast<size_t>(i)];
      for (int c = 0; c < 3; ++c) {
        int64_t acc = half;
        for (size_t t = 0; t < w.size(); ++t) {
          const int sx = horizontal ? first + static_cast<int>(t) : x;
          const int sy = horizontal ? y : first + static_cast<int>(t);
          acc += int64_t{in.rgb[(static_cast<size_t>(sy) * in.width + sx) * 3 + c]} * w[t];
        }
        out.rgb[(static_cast<size_t>(y) * out.width + x) * 3 + c] = clip8(acc);
      }
    }
  }
  return out;
}

}  // namespace

io::RgbImage resize_like_pil(const io::RgbImage& in, int width, int height, Filter filter) {
  if (width <= 0 || height <= 0 || in.width <= 0 || in.height <= 0)
    throw std::invalid_argument("resize: empty source or target size");
  io::RgbImage out = in;
  // PIL skips a pass whose size does not change, and runs the horizontal one first.
  if (width != in.width) out = pass(out, width, true, filter);
  if (height != in.height) out = pass(out, height, false, filter);
  return out;
}

}  // namespace attnlab::image
