// Small helpers of the figure description: colours, the colour cycle, axis fitting.
#include "viz/figure.h"

#include <algorithm>
#include <cmath>

namespace attnlab::viz {

Color color_hex(unsigned rgb, double alpha) {
  return Color{((rgb >> 16) & 0xFF) / 255.0, ((rgb >> 8) & 0xFF) / 255.0, (rgb & 0xFF) / 255.0,
               alpha};
}

Color cycle_color(int i) {
  // tab10, matplotlib's default property cycle; then tab20's light partners of the same ten
  // hues, so the zoo's 14 models (and up to 20 series) keep distinct colours.
  static const unsigned kTab20[20] = {
      0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2,
      0x7f7f7f, 0xbcbd22, 0x17becf, 0xaec7e8, 0xffbb78, 0x98df8a, 0xff9896,
      0xc5b0d5, 0xc49c94, 0xf7b6d2, 0xc7c7c7, 0xdbdb8d, 0x9edae5};
  return color_hex(kTab20[((i % 20) + 20) % 20]);
}

const char* upsample_name(Upsample u) {
  return u == Upsample::Nearest ? "nearest" : "bilinear";
}

void fit_axis(Axis& axis, const std::vector<double>& values, bool include_zero, double margin) {
  double lo = include_zero ? 0.0 : double(INFINITY), hi = include_zero ? 0.0 : -double(INFINITY);
  for (double v : values) {
    if (!std::isfinite(v) || (axis.log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    lo = axis.log ? 1.0 : 0.0;
    hi = axis.log ? 10.0 : 1.0;
  }
  if (axis.log) {
    const double a = std::log10(lo), b = std::log10(hi), m = std::max(b - a, 1.0) * margin;
    axis.min = std::pow(10.0, a - m);
    axis.max = std::pow(10.0, b + m);
    return;
  }
  if (hi <= lo) {
    const double d = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= d;
    hi += d;
  }
  const double m = (hi - lo) * margin;
  axis.min = (include_zero && lo == 0.0) ? 0.0 : lo - m;
  axis.max = (include_zero && hi == 0.0) ? 0.0 : hi + m;
}

}  // namespace attnlab::viz
