// input_picture; see input_picture.h.
#include "app/session/input_picture.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace attnlab::session {

viz::RgbaImage input_picture(const at::Tensor& x, const image::Preprocessing& p) {
  const at::Tensor img = x.detach().to(at::kCPU, at::kFloat).contiguous();
  viz::RgbaImage out;
  if (img.dim() != 4 || img.size(0) < 1 || img.size(1) < 1) return out;
  const int64_t c = img.size(1);
  out.height = int(img.size(2));
  out.width = int(img.size(3));
  out.rgba.resize(size_t(out.width) * out.height * 4);
  const float* d = img.data_ptr<float>();
  const size_t plane = size_t(out.width) * out.height;
  for (size_t i = 0; i < plane; ++i) {
    for (int ch = 0; ch < 3; ++ch) {
      const int64_t src = std::min<int64_t>(ch, c - 1);
      const float v = d[size_t(src) * plane + i] * p.std[size_t(src)] + p.mean[size_t(src)];
      out.rgba[i * 4 + size_t(ch)] = uint8_t(std::lround(std::clamp(v, 0.f, 1.f) * 255.f));
    }
    out.rgba[i * 4 + 3] = 255;
  }
  return out;
}

}  // namespace attnlab::session
