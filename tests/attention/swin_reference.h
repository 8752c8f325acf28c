// An independent re-implementation, in plain at:: ops, of microsoft/Swin-Transformer's
// WindowAttention with a rectangular window_size (Wh, Ww) and of the shifted block's roll,
// partition and attn_mask (models/swin_transformer.py @ f82860b), written from the
// reference code and SPEC_COMPARISON "Swin window attention", not from core/attention/
// swin*.cpp: the tests compare the mechanism against it for Wh ≠ Ww, which no fixture has.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace attnlab::testing::swin_reference {

// relative_position_index, entry by entry with the reference's formula:
// (Δy + Wh − 1)(2Ww − 1) + (Δx + Ww − 1), positions row-major in the window.
inline at::Tensor relative_position_index(int64_t wh, int64_t ww) {
  const int64_t n = wh * ww;
  at::Tensor index = at::empty({n, n}, at::kLong);
  auto a = index.accessor<int64_t, 2>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      a[i][j] = (i / ww - j / ww + wh - 1) * (2 * ww - 1) + (i % ww - j % ww + ww - 1);
  return index;
}

// window_partition: (B, H, W, C) -> (nW·B, Wh·Ww, C), batch, window row, window column.
inline at::Tensor window_partition(const at::Tensor& x, int64_t wh, int64_t ww) {
  const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
  return x.view({b, h / wh, wh, w / ww, ww, c})
      .permute({0, 1, 3, 2, 4, 5})
      .reshape({-1, wh * ww, c});
}

// window_reverse: (nW·B, Wh·Ww, C) -> (B, H, W, C).
inline at::Tensor window_reverse(const at::Tensor& win, int64_t wh, int64_t ww, int64_t h,
                                 int64_t w) {
  const int64_t c = win.size(-1), b = win.size(0) / ((h / wh) * (w / ww));
  return win.view({b, h / wh, w / ww, wh, ww, c}).permute({0, 1, 3, 2, 4, 5}).reshape({b, h, w, c});
}

// The block's attn_mask: img_mask labelled by the slices (0, −w), (−w, −s), (−s, end) per
// axis (w = Wh for rows, Ww for columns), partitioned, −100 where labels differ, else 0.
inline at::Tensor shift_mask(int64_t h, int64_t w, int64_t wh, int64_t ww, int64_t s) {
  at::Tensor img = at::zeros({1, h, w, 1});
  const std::vector<std::pair<int64_t, int64_t>> hs = {{0, h - wh}, {h - wh, h - s}, {h - s, h}};
  const std::vector<std::pair<int64_t, int64_t>> ws = {{0, w - ww}, {w - ww, w - s}, {w - s, w}};
  int64_t cnt = 0;
  for (const auto& [h0, h1] : hs)
    for (const auto& [w0, w1] : ws) img.slice(1, h0, h1).slice(2, w0, w1).fill_(double(cnt++));
  const at::Tensor m = window_partition(img, wh, ww).squeeze(-1);  // (nW, Wh·Ww)
  const at::Tensor diff = m.unsqueeze(1) - m.unsqueeze(2);
  return at::where(diff.ne(0), at::full({}, -100.0), at::full({}, 0.0));
}

struct Result {
  at::Tensor out;   // (B, H·W, C): the block's attention branch in image positions
  at::Tensor attn;  // (nW·B, heads, Wh·Ww, Wh·Ww): the softmax the forward used
};

// The block's attention branch on tokens x (B, H·W, C) of an H × W grid: roll (−s, −s),
// partition, WindowAttention.forward (with the mask when s > 0), reverse, roll (+s, +s).
// `p` holds the module's state: qkv.weight/bias, proj.weight/bias, the bias table.
inline Result attention(const at::Tensor& x, int64_t h, int64_t w, int64_t wh, int64_t ww,
                        int64_t s, int64_t heads, const at::Tensor& qkv_w, const at::Tensor& qkv_b,
                        const at::Tensor& proj_w, const at::Tensor& proj_b,
                        const at::Tensor& table) {
  const int64_t b = x.size(0), c = x.size(2), n = wh * ww, d = c / heads;
  at::Tensor g = x.view({b, h, w, c});
  if (s > 0) g = at::roll(g, {-s, -s}, {1, 2});
  const at::Tensor xw = window_partition(g, wh, ww);  // (B_, N, C)
  const int64_t bw = xw.size(0);
  const at::Tensor qkv =
      at::linear(xw, qkv_w, qkv_b).reshape({bw, n, 3, heads, d}).permute({2, 0, 3, 1, 4});
  const at::Tensor q = qkv[0] * (1.0 / std::sqrt(double(d))), k = qkv[1], v = qkv[2];
  at::Tensor attn = at::matmul(q, k.transpose(-2, -1));
  const at::Tensor bias = table.index_select(0, relative_position_index(wh, ww).view({-1}))
                              .view({n, n, -1})
                              .permute({2, 0, 1});
  attn = attn + bias.unsqueeze(0);
  if (s > 0) {
    const at::Tensor mask = shift_mask(h, w, wh, ww, s);
    const int64_t nw = mask.size(0);
    attn = (attn.view({bw / nw, nw, heads, n, n}) + mask.unsqueeze(1).unsqueeze(0))
               .view({-1, heads, n, n});
  }
  attn = at::softmax(attn, -1);
  const at::Tensor o =
      at::linear(at::matmul(attn, v).transpose(1, 2).reshape({bw, n, c}), proj_w, proj_b);
  at::Tensor y = window_reverse(o, wh, ww, h, w);
  if (s > 0) y = at::roll(y, {s, s}, {1, 2});
  return {y.reshape({b, h * w, c}), attn};
}

}  // namespace attnlab::testing::swin_reference
