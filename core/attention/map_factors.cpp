// conv_mixing_matrix: a depthwise convolution on a grid written as a token-mixing matrix.
#include "core/attention/map_factors.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace attnlab::attention {

at::Tensor conv_mixing_matrix(const at::Tensor& kernel, int64_t height, int64_t width,
                              int64_t pad_h, int64_t pad_w) {
  if (!kernel.defined() || kernel.dim() != 2)
    throw std::invalid_argument("conv_mixing_matrix: the kernel must be 2-D (kh, kw)");
  const int64_t kh = kernel.size(0), kw = kernel.size(1);
  if (kh != 2 * pad_h + 1 || kw != 2 * pad_w + 1)
    throw std::invalid_argument("conv_mixing_matrix: a " + std::to_string(kh) + "x" +
                                std::to_string(kw) + " kernel with padding (" +
                                std::to_string(pad_h) + ", " + std::to_string(pad_w) +
                                ") does not keep the grid's size");
  const at::Tensor w = kernel.detach().to(at::kCPU, at::kDouble).contiguous();
  const auto k = w.accessor<double, 2>();
  const int64_t n = height * width;
  at::Tensor out = at::zeros({n, n}, at::kDouble);
  auto m = out.accessor<double, 2>();
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int64_t a = 0; a < kh; ++a) {
        const int64_t ys = y + a - pad_h;
        if (ys < 0 || ys >= height) continue;
        for (int64_t c = 0; c < kw; ++c) {
          const int64_t xs = x + c - pad_w;
          if (xs >= 0 && xs < width) m[y * width + x][ys * width + xs] = k[a][c];
        }
      }
  return out;
}

}  // namespace attnlab::attention
