// Softmax attention with 2-D RoPE, LePE and gate (SPEC §1.1 last line, §2.3): RAVLT stages
// 3–4, the same module shell as RALA (rala.cpp) with full softmax mixing. The reference
// module is NCHW; ours takes the grid's tokens (B, N, C), N = H·W.
//   parameters  qkvo: Conv2d(C, 4C, 1) -> [q | k | v | o], each C wide, head-major;
//               lepe: Conv2d(C, C, 5, padding 2, groups C); proj: Conv2d(C, C, 1); all biased
//   options     none. Grid only (RoPE); the head dim must be a multiple of 4.
//   forward     q̃ = R(q), k̃ = R(k); out = softmax(q̃ k̃ᵀ · d^-0.5) v; to NCHW; + lepe(v); ⊙ o;
//               proj.
//   trace       group "all": q̃, k̃ (rotated), v (B, h, N, d).
//               internals:
//                 softmax_rope.o     (B, h, N, d) the gate (raw, no activation)
//                 softmax_rope.lepe  (B, h, N, d) lepe(v)
//   rows        a_i = softmax(q̃_i · k̃ᵀ · d^-0.5) over all N tokens (sums to 1).
//               out = proj(((rows·v) + lepe) ⊙ o) per head.
#include <ATen/ATen.h>

#include <cmath>
#include <string>

#include "core/attention/kernels.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/attention/rope.h"

namespace attnlab::attention {
namespace {

class SoftmaxRopeTrace : public AttentionTrace {
 public:
  double scale = 1.0;

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    return softmax_scores(g.q[b][h].index_select(0, q_rows), g.k[b][h], scale);
  }
};

Conv2dLayer::Shape conv(int64_t in, int64_t out, int64_t kernel, int64_t groups) {
  Conv2dLayer::Shape s;
  s.in = in;
  s.out = out;
  s.kernel = {kernel, kernel};
  s.padding = {kernel / 2, kernel / 2};
  s.groups = groups;
  return s;
}

class SoftmaxRopeAttention : public AttentionMechanism {
 public:
  explicit SoftmaxRopeAttention(const MechanismConfig& c) : AttentionMechanism("softmax_rope", c) {
    if (c.head_dim() % 4 != 0)
      throw AttentionError("softmax_rope: head dim " + std::to_string(c.head_dim()) +
                           " must be a multiple of 4 for its 2-D RoPE");
    qkvo_ = add_layer<Conv2dLayer>(*this, "qkvo", conv(c.dim, 4 * c.dim, 1, 1));
    lepe_ = add_layer<Conv2dLayer>(*this, "lepe", conv(c.dim, c.dim, 5, c.dim));
    proj_ = add_layer<Conv2dLayer>(*this, "proj", conv(c.dim, c.dim, 1, 1));
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), dim = config().dim, heads = config().heads;
    const int64_t d = dim / heads, height = layout.height, width = layout.width;
    const int64_t n = height * width;
    // NCHW image <-> per-head features (B, h, N, d); channel = head·d + c.
    auto per_head = [&](const at::Tensor& img) {
      return img.reshape({batch, heads, d, n}).transpose(-2, -1);
    };
    auto to_image = [&](const at::Tensor& t) {
      return t.transpose(-2, -1).reshape({batch, dim, height, width});
    };

    const at::Tensor qkvo = (*qkvo_)(x.transpose(1, 2).reshape({batch, dim, height, width}));
    const at::Tensor v_img = qkvo.slice(1, 2 * dim, 3 * dim);
    const at::Tensor o_img = qkvo.slice(1, 3 * dim, 4 * dim);
    const at::Tensor lepe = (*lepe_)(v_img);
    const RopeTables rope = rope_tables(height, width, d, x.options());
    const at::Tensor q = apply_rope(per_head(qkvo.slice(1, 0, dim)), rope);
    const at::Tensor k = apply_rope(per_head(qkvo.slice(1, dim, 2 * dim)), rope);
    const at::Tensor v = per_head(v_img);

    const at::Tensor out = at::matmul(softmax_scores(q, k, scale_), v);
    const at::Tensor result = (*proj_)((to_image(out) + lepe) * o_img);

    if (request) {
      auto trace = std::make_shared<SoftmaxRopeTrace>();
      init_trace(*trace, x, layout);
      trace->scale = scale_;
      trace->groups.push_back(all_heads_group(layout, heads, q, k, v));
      trace->internals["softmax_rope.o"] = keep(per_head(o_img));
      trace->internals["softmax_rope.lepe"] = keep(per_head(lepe));
      request->trace = std::move(trace);
    }
    return result.reshape({batch, dim, n}).transpose(1, 2);
  }

 private:
  std::shared_ptr<Conv2dLayer> qkvo_, lepe_, proj_;
  double scale_ = 1.0;
};

}  // namespace

MechanismInfo softmax_rope_mechanism() {
  MechanismInfo info;
  info.name = "softmax_rope";
  info.summary = "softmax attention with 2-D RoPE, LePE and gate (RAVLT stages 3-4)";
  info.needs_grid = true;
  info.create = [](const MechanismConfig& c) { return std::make_shared<SoftmaxRopeAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
