// 2-D rotary position embedding of RAVLT (SPEC §2.3), shared by RALA and the RoPE softmax
// of stages 3–4 and usable by a backbone loader to check a checkpoint's stored buffer.
//
// Per axis there are d/2 angles: d/4 frequencies f = 10000^-linspace(0, 1, d/4), each
// repeated twice. Token (y, x) gets angles concat(y·f, x·f) (first half from the row,
// second half from the column) and R(x) = x ⊙ cos + rot2(x) ⊙ sin, where rot2 turns each
// interleaved pair (x_2i, x_2i+1) into (−x_2i+1, x_2i).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace attnlab::attention {

// The d/2 per-axis angles, float32, exactly as the reference's buffer
// `layers.i.RoPE.angle`. head_dim must be a positive multiple of 4 (AttentionError).
at::Tensor rope_angle(int64_t head_dim);

// sin and cos of every token's angles: (H·W, d) each, token index y·W + x.
struct RopeTables {
  at::Tensor sin, cos;
};

// Tables for an H×W grid, computed with `options` (the input's device and dtype).
RopeTables rope_tables(int64_t height, int64_t width, int64_t head_dim,
                       const at::TensorOptions& options);

// R(x) for x (..., H·W, d) with tables from rope_tables.
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& sin, const at::Tensor& cos);
inline at::Tensor apply_rope(const at::Tensor& x, const RopeTables& t) {
  return apply_rope(x, t.sin, t.cos);
}

}  // namespace attnlab::attention
