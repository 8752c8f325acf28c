// Swin's fixed tensors and window partition (swin.h), shared by the mechanism (swin.cpp)
// and the Swin backbone (models/swin_blocks.cpp).
#include "core/attention/swin.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace attnlab::attention {

at::Tensor swin_relative_position_index(int64_t wh, int64_t ww) {
  const at::Tensor pos = at::arange(wh * ww, at::kLong);
  const at::Tensor y = pos.div(ww, "floor"), x = pos.remainder(ww);
  const at::Tensor dy = y.unsqueeze(1) - y.unsqueeze(0), dx = x.unsqueeze(1) - x.unsqueeze(0);
  return (dy + (wh - 1)) * (2 * ww - 1) + (dx + (ww - 1));
}

at::Tensor swin_relative_position_index(int64_t w) {
  return swin_relative_position_index(w, w);
}

std::pair<int64_t, int64_t> swin_fitted_window(int64_t height, int64_t width, int64_t wh,
                                               int64_t ww) {
  return {std::min(height, wh), std::min(width, ww)};
}

int64_t swin_effective_shift(int64_t height, int64_t width, int64_t wh, int64_t ww, int64_t shift) {
  return height <= wh || width <= ww ? 0 : shift;
}

int64_t swin_effective_shift(int64_t height, int64_t width, int64_t window, int64_t shift) {
  return swin_effective_shift(height, width, window, window, shift);
}

namespace {

// Region (0, 1, 2) of each rolled position along an axis of length n, window side w.
at::Tensor regions(int64_t n, int64_t w, int64_t s, const at::TensorOptions& o) {
  const at::Tensor r = at::arange(n, o.dtype(at::kLong));
  return r.ge(n - w).to(at::kLong) + r.ge(n - s).to(at::kLong);
}

}  // namespace

at::Tensor swin_to_windows(const at::Tensor& t, int64_t height, int64_t width, int64_t wh,
                           int64_t ww, int64_t s) {
  const int64_t b = t.size(0), h = t.size(1), c = t.size(-1);
  at::Tensor g = t.reshape({b, h, height, width, c});
  if (s > 0) g = at::roll(g, {-s, -s}, {2, 3});
  return g.reshape({b, h, height / wh, wh, width / ww, ww, c})
      .permute({0, 1, 2, 4, 3, 5, 6})
      .reshape({b, h, (height / wh) * (width / ww), wh * ww, c});
}

at::Tensor swin_from_windows(const at::Tensor& t, int64_t height, int64_t width, int64_t wh,
                             int64_t ww, int64_t s) {
  const int64_t b = t.size(0), h = t.size(1), c = t.size(-1);
  at::Tensor g = t.reshape({b, h, height / wh, width / ww, wh, ww, c})
                     .permute({0, 1, 2, 4, 3, 5, 6})
                     .reshape({b, h, height, width, c});
  if (s > 0) g = at::roll(g, {s, s}, {2, 3});
  return g.reshape({b, h, height * width, c});
}

at::Tensor swin_shift_mask(int64_t height, int64_t width, int64_t wh, int64_t ww, int64_t s,
                           const at::TensorOptions& options) {
  const at::Tensor id = regions(height, wh, s, options).unsqueeze(1) * 3 +
                        regions(width, ww, s, options).unsqueeze(0);  // (H, W)
  const at::Tensor win =
      swin_to_windows(id.reshape({1, 1, height * width, 1}), height, width, wh, ww, 0)
          .reshape({-1, wh * ww});  // (nW, Wh·Ww), windows of the rolled grid
  const at::Tensor differ = win.unsqueeze(2).ne(win.unsqueeze(1));
  // At the scores' precision (the options of the tokens): -100 and 0 are exact in bf16.
  return differ.to(options) * -100.0;
}

at::Tensor swin_shift_mask(int64_t height, int64_t width, int64_t w, int64_t s,
                           const at::TensorOptions& options) {
  return swin_shift_mask(height, width, w, w, s, options);
}

}  // namespace attnlab::attention
