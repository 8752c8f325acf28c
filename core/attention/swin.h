// The fixed tensors and the window partition of Swin's window attention (SPEC_COMPARISON
// "Swin window attention"; swin_windows.cpp), shared by the mechanism (swin.cpp) and the
// Swin backbone, whose shifted blocks keep the shift mask as their `attn_mask` buffer.
// Windows are Wh × Ww (rows × columns), as the reference WindowAttention's window_size
// pair; the one-side overloads are the square window the backbone builds (Wh = Ww = w).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

namespace attnlab::attention {

// The relative_position_index buffer of a Wh × Ww window: (Wh·Ww, Wh·Ww) int64 with
// entry (i, j) = (Δy + Wh − 1)(2Ww − 1) + (Δx + Ww − 1), Δ = position(i) − position(j),
// positions row-major inside the window. Rows of the (2Wh − 1)(2Ww − 1) × heads bias table.
at::Tensor swin_relative_position_index(int64_t window_h, int64_t window_w);
at::Tensor swin_relative_position_index(int64_t window);  // Wh = Ww = window

// The SW-MSA mask of an H × W grid (H a multiple of Wh, W of Ww), shift s > 0 on both
// axes: (nW, Wh·Ww, Wh·Ww) with `options` (the tokens' dtype and device; float32 when they
// name none), windows row-major on the rolled grid; along an axis of length L with window
// side w the rolled positions fall into the regions [0, L − w), [L − w, L − s), [L − s, L),
// and a key outside the query's region (row region × column region) gets −100 (not −inf,
// as the reference), else 0.
at::Tensor swin_shift_mask(int64_t height, int64_t width, int64_t window_h, int64_t window_w,
                           int64_t shift, const at::TensorOptions& options);
at::Tensor swin_shift_mask(int64_t height, int64_t width, int64_t window, int64_t shift,
                           const at::TensorOptions& options);  // Wh = Ww = window

// The window a layer on an H × W grid gets when the grid fits in the window along an axis:
// each axis shrunk on its own, (min(H, Wh), min(W, Ww)). (The reference's square block
// instead shrinks both sides to min(H, W) once min(H, W) ≤ window; the backbone keeps that.)
std::pair<int64_t, int64_t> swin_fitted_window(int64_t height, int64_t width, int64_t window_h,
                                               int64_t window_w);

// Tokens (B, h, H·W, c) on the image grid -> (B, h, nW, Wh·Ww, c) windows of the grid
// rolled by (−s, −s), windows row-major, tokens row-major inside (the reference's roll +
// window_partition); H a multiple of Wh, W of Ww. swin_from_windows is its inverse.
at::Tensor swin_to_windows(const at::Tensor& tokens, int64_t height, int64_t width,
                           int64_t window_h, int64_t window_w, int64_t shift);
at::Tensor swin_from_windows(const at::Tensor& windows, int64_t height, int64_t width,
                             int64_t window_h, int64_t window_w, int64_t shift);

// The shift a block really uses: none when the grid fits in the window along either axis
// (H ≤ Wh or W ≤ Ww; square: min(H, W) ≤ w), as the reference builds such blocks;
// otherwise `shift`.
int64_t swin_effective_shift(int64_t height, int64_t width, int64_t window_h, int64_t window_w,
                             int64_t shift);
int64_t swin_effective_shift(int64_t height, int64_t width, int64_t window,
                             int64_t shift);  // Wh = Ww = window

}  // namespace attnlab::attention
