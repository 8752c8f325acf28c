// RAVLT's 2-D RoPE: frequencies, sin/cos tables for any grid, interleaved-pair rotation.
#include "core/attention/rope.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "core/attention/mechanism.h"

namespace attnlab::attention {

at::Tensor rope_angle(int64_t head_dim) {
  if (head_dim <= 0 || head_dim % 4 != 0)
    throw AttentionError("RoPE: head dim " + std::to_string(head_dim) +
                         " must be a positive multiple of 4 (d/4 frequencies per axis)");
  // float32 step by step as the reference builds its buffer (linspace, pow, reciprocal),
  // so that the result equals a checkpoint's stored `RoPE.angle`.
  at::Tensor f = at::reciprocal(at::pow(10000.0, at::linspace(0.0, 1.0, head_dim / 4, at::kFloat)));
  return f.unsqueeze(-1).repeat({1, 2}).flatten();
}

RopeTables rope_tables(int64_t height, int64_t width, int64_t head_dim,
                       const at::TensorOptions& options) {
  if (height <= 0 || width <= 0)
    throw AttentionError("RoPE: the grid " + std::to_string(height) + "x" + std::to_string(width) +
                         " is empty");
  // The phases in fp32 at least, then sin and cos at the tokens' precision: a bf16 phase
  // (8 significant bits) at position 50 would be off by up to 0.1 rad (--dtype bf16).
  const auto phase = options.dtype(at::promote_types(options.dtype().toScalarType(), at::kFloat));
  const at::Tensor angle = rope_angle(head_dim).to(phase);
  const int64_t half = head_dim / 2;
  const at::Tensor ys = at::arange(height, phase).unsqueeze(1) * angle.unsqueeze(0);  // (H, d/2)
  const at::Tensor xs = at::arange(width, phase).unsqueeze(1) * angle.unsqueeze(0);   // (W, d/2)
  auto table = [&](const at::Tensor& row, const at::Tensor& col) {
    return at::cat({row.unsqueeze(1).expand({height, width, half}),
                    col.unsqueeze(0).expand({height, width, half})},
                   -1)
        .reshape({height * width, head_dim});
  };
  return {table(at::sin(ys), at::sin(xs)).to(options), table(at::cos(ys), at::cos(xs)).to(options)};
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& sin, const at::Tensor& cos) {
  const int64_t d = x.size(-1);
  if (d % 2 != 0 || sin.size(-1) != d || cos.size(-1) != d)
    throw AttentionError("RoPE: features of size " + std::to_string(d) +
                         " do not match tables of size " + std::to_string(sin.size(-1)));
  // Interleaved pairs (x_2i, x_2i+1) -> (-x_2i+1, x_2i).
  std::vector<int64_t> pairs(x.sizes().begin(), x.sizes().end() - 1);
  pairs.push_back(d / 2);
  pairs.push_back(2);
  const at::Tensor p = x.reshape(pairs);
  const at::Tensor rotated = at::stack({-p.select(-1, 1), p.select(-1, 0)}, -1).reshape(x.sizes());
  return x * cos + rotated * sin;
}

}  // namespace attnlab::attention
