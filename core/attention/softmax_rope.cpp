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
//               out = proj(((rows·v) + lepe) ⊙ o) per head: also the explicit form.
#include <ATen/ATen.h>

#include <cmath>
#include <string>

#include "core/attention/fused_attention.h"
#include "core/attention/head_outputs.h"
#include "core/attention/ravlt_shell.h"
#include "core/attention/registry.h"
#include "core/attention/rope.h"
#include "core/attention/softmax_trace.h"

namespace attnlab::attention {
namespace {

class SoftmaxRopeAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit SoftmaxRopeAttention(const MechanismConfig& c)
      : AttentionMechanism("softmax_rope", c), shell_(*this, c, "softmax_rope") {
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const RavltParts p = shell_.split(x, layout);
    const RopeTables rope = rope_tables(p.height, p.width, config().head_dim(), x.options());
    const at::Tensor q = apply_rope(p.q, rope);
    const at::Tensor k = apply_rope(p.k, rope);

    at::Tensor out = wants_explicit(request) ? at::Tensor() : softmax_attention(q, k, p.v, scale_);
    if (request) {
      auto trace = std::make_shared<SoftmaxRowsTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      trace->groups.push_back(all_heads_group(*trace, p.heads, q, k, p.v));
      trace->internals["softmax_rope.o"] = trace->keep(p.per_head(p.o_img));
      trace->internals["softmax_rope.lepe"] = trace->keep(p.per_head(p.lepe_img));
      if (wants_explicit(request)) out = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    return shell_.project(p, (p.to_image(out) + p.lepe_img) * p.o_img);
  }

 private:
  RavltShell shell_;
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
