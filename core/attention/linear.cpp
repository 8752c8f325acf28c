// Linear attention with the κ(x) = elu(x) + 1 feature map (SPEC §1.2): the kernel baseline,
// the "vanilla linear" attention of RALA's analysis. Cost O(N·d²) per head: keys and values
// are folded into a d×d buffer first, so no N×N matrix is ever formed.
//   parameters  qkv: Linear(C, 3C) rows [q | k | v], head-major; proj: Linear(C, C)
//   options     qkv_bias (default 1); eps (default 1e-6), the denominator epsilon
//   forward     out_i = κ(q_i)·KV / (κ(q_i)·k_sum + eps) with KV = Σ_j κ(k_j)ᵀ v_j,
//               k_sum = Σ_j κ(k_j); merge heads; proj
//   trace       one head group "all": q = κ(q), k = κ(k), v (B, h, N, d); internals
//               "linear.kv"    (B, h, d, d)  KV = Σ_j κ(k_j)ᵀ v_j, the buffer whose rank
//                                            RALA analyses
//               "linear.k_sum" (B, h, d)     Σ_j κ(k_j)
//   rows        a_ij = κ(q_i)·κ(k_j) / Σ_m κ(q_i)·κ(k_m) over all N tokens (prefix tokens
//               included). The forward's eps is NOT in the row: the row is the exact
//               normalised kernel, so it sums to 1; the forward's output equals rows·v
//               scaled by den/(den + eps), den = κ(q_i)·k_sum (a relative 1e-6/den change).
//   products    A·x and Aᵀ·y (AttentionTrace::apply) in O(N·d·c) through κK and κQ.
//   explicit    out = proj(merge((rows·v) · den/(den + eps)))
#include <ATen/ATen.h>

#include "core/attention/capabilities.h"
#include "core/attention/kernels.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

class LinearTrace : public AttentionTrace {
 public:
  // The KV buffer Σκ(k)ᵀv the forward mixed with.
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal("linear.kv")[b]}};
  }

 protected:
  // O(len(q_rows)·N·d): only the queried rows of κ(q) κ(k)ᵀ are formed.
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    at::Tensor scores = at::matmul(g.q[b][h].index_select(0, q_rows), g.k[b][h].transpose(0, 1));
    return scores / scores.sum(-1, /*keepdim=*/true);
  }

  // A = diag(1/den) κQ κKᵀ with den = κQ·Σκk, so A·x = κQ(κKᵀx)/den and
  // Aᵀ·y = κK(κQᵀ(y/den)): O(N·d·c), no row is ever formed.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];                // (N, d)
    const at::Tensor den = at::matmul(q, k.sum(0)).unsqueeze(1);  // (N, 1), as the rows' sums
    if (transposed) return at::matmul(k, at::matmul(q.t(), x / den));
    return at::matmul(q, at::matmul(k.t(), x)) / den;
  }
};

class LinearAttention : public AttentionMechanism {
 public:
  explicit LinearAttention(const MechanismConfig& c) : AttentionMechanism("linear", c) {
    qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
    eps_ = c.option("eps");
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t heads = config().heads;
    auto [q_raw, k_raw, v] = split_qkv((*qkv_)(x), heads);
    at::Tensor q = elu_feature(q_raw);
    at::Tensor k = elu_feature(k_raw);
    at::Tensor kv = at::matmul(k.transpose(-2, -1), v);          // (B, h, d, d)
    at::Tensor k_sum = k.sum(-2);                                // (B, h, d)
    at::Tensor den = at::matmul(q, k_sum.unsqueeze(-1)) + eps_;  // (B, h, N, 1)
    at::Tensor out = at::matmul(q, kv) / den;
    if (request) {
      auto trace = std::make_shared<LinearTrace>();
      init_trace(*trace, x, layout, *request);
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, v));
      trace->internals["linear.kv"] = trace->keep(kv);
      trace->internals["linear.k_sum"] = trace->keep(k_sum);
      // The rows are normalised without eps; the forward's denominator has it.
      if (wants_explicit(request)) out = explicit_mix(*trace) * ((den - eps_) / den);
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out));
  }

 private:
  std::shared_ptr<LinearLayer> qkv_, proj_;
  double eps_ = 1e-6;
};

}  // namespace

MechanismInfo linear_mechanism() {
  MechanismInfo info;
  info.name = "linear";
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer};
  info.summary = "linear attention with the elu+1 feature map, O(N·d²) (kernel baseline)";
  info.options = {
      {"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the qkv projection"},
      {"eps", OptionSpec::Kind::Real, 1e-6, 0, 1e9, "epsilon added to the denominator"}};
  info.create = [](const MechanismConfig& c) { return std::make_shared<LinearAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
