// The fixed tensors of Swin's window attention (SPEC_COMPARISON "Swin window attention"),
// shared by the mechanism (swin.cpp) and the Swin backbone, whose shifted blocks keep the
// shift mask as their `attn_mask` buffer.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace attnlab::attention {

// The relative_position_index buffer of a window × window window: (w², w²) int64 with
// entry (i, j) = (Δy + w − 1)(2w − 1) + (Δx + w − 1), Δ = position(i) − position(j),
// positions row-major inside the window. Rows of the (2w − 1)² × heads bias table.
at::Tensor swin_relative_position_index(int64_t window);

// The SW-MSA mask of an H × W grid (both multiples of `window`), shift s > 0: (nW, w², w²)
// with `options` (the tokens' dtype and device; float32 when they name none), windows row-major on
// the rolled grid; per axis the rolled positions fall into the regions [0, L − w), [L − w, L − s),
// [L − s, L), and a key outside the query's region (row region × column region) gets −100 (not
// −inf, as the reference), else 0.
at::Tensor swin_shift_mask(int64_t height, int64_t width, int64_t window, int64_t shift,
                           const at::TensorOptions& options);

// The shift a block really uses: none when the grid fits in one window (min(H, W) ≤ w), as
// the reference builds such blocks; otherwise `shift`.
int64_t swin_effective_shift(int64_t height, int64_t width, int64_t window, int64_t shift);

}  // namespace attnlab::attention
