// Token merging (declared and described in token_merging.h). Written from the spec's steps
// (SPEC_COMPARISON "Token merging (ToMe ...)"), not from ToMe's code (CC BY-NC).
#include "models/token_merging.h"

#include <cmath>
#include <limits>

#include "core/attention/registry.h"

namespace attnlab::models::tome {

using attention::add_layer;
using attention::LinearLayer;

namespace {

// Gathers rows `idx` (B, n, 1) of x (B, T, C) along the tokens.
at::Tensor tome_gather_rows(const at::Tensor& x, const at::Tensor& idx) {
  return x.gather(1, idx.expand({x.size(0), idx.size(1), x.size(2)}));
}

// The merge of spec steps 4–5 with a sum: A = even positions, B = odd ones; the r' merged A
// rows are added into their B rows; [unmerged A, B] is the new order. The weighted average
// divides two such sums; for the 0/1 source matrix the sum equals the spec's max, because
// each input token is in exactly one token, so the rows added together never overlap.
at::Tensor tome_merge_sum(const TomeMatch& m, const at::Tensor& x) {
  const at::Tensor a = x.slice(1, 0, x.size(1), 2), b = x.slice(1, 1, x.size(1), 2);
  const at::Tensor unmerged = tome_gather_rows(a, m.unmerged);
  const at::Tensor src = tome_gather_rows(a, m.src);
  const at::Tensor dst = b.scatter_add(1, m.dst.expand({x.size(0), m.r, x.size(2)}), src);
  return at::cat({unmerged, dst}, 1);
}

}  // namespace

TomeState tome_initial_state(const at::Tensor& x, bool trace_source) {
  TomeState s;
  s.size = at::ones({x.size(0), x.size(1), 1}, x.options());
  if (trace_source)
    s.source = at::eye(x.size(1), x.options()).unsqueeze(0).expand({x.size(0), -1, -1});
  return s;
}

TomeMatch tome_match(const at::Tensor& metric, int64_t r) {
  TomeMatch m;
  const int64_t t = metric.size(1);
  // The class token (A[0]) is protected, so at most (T − 1)//2 of the other A tokens can
  // merge: the spec's clamp, which also makes a too-large r (or a few tokens left) safe.
  m.r = std::min(r, (t - 1) / 2);
  if (m.r <= 0) return m;
  // The decisions are discrete: no gradient flows through them (the merged values do).
  at::NoGradGuard no_grad;
  const at::Tensor unit = metric / metric.norm(2, {-1}, /*keepdim=*/true);
  const at::Tensor a = unit.slice(1, 0, t, 2), b = unit.slice(1, 1, t, 2);
  at::Tensor scores = a.matmul(b.transpose(-1, -2));  // cosine(A_a, B_b), (B, |A|, |B|)
  scores.select(1, 0).fill_(-std::numeric_limits<double>::infinity());  // class token: never
  const auto best = scores.max(-1);                                     // over B
  const at::Tensor node_max = std::get<0>(best), node_idx = std::get<1>(best);
  const at::Tensor order = node_max.argsort(-1, /*descending=*/true).unsqueeze(-1);
  m.src = order.slice(1, 0, m.r);
  // The tokens kept go back to their positions (the class token first).
  m.unmerged = std::get<0>(order.slice(1, m.r).sort(1));
  m.dst = node_idx.unsqueeze(-1).gather(1, m.src);
  return m;
}

std::pair<at::Tensor, at::Tensor> tome_merge_weighted(const TomeMatch& m, const at::Tensor& x,
                                                      const at::Tensor& size) {
  if (m.r <= 0) return {x, size};
  const at::Tensor merged_size = tome_merge_sum(m, size);
  return {tome_merge_sum(m, x * size) / merged_size, merged_size};
}

at::Tensor tome_merge_source(const TomeMatch& m, const at::Tensor& source) {
  if (m.r <= 0 || !source.defined()) return source;
  return tome_merge_sum(m, source);
}

TomeAttention::TomeAttention(int64_t dim, int64_t heads, bool qkv_bias)
    : dim_(dim), heads_(heads), scale_(std::pow(static_cast<double>(dim / heads), -0.5)) {
  qkv_ = add_layer<LinearLayer>(*this, "qkv", dim, 3 * dim, qkv_bias);
  proj_ = add_layer<LinearLayer>(*this, "proj", dim, dim, true);
}

std::pair<at::Tensor, at::Tensor> TomeAttention::forward(const at::Tensor& x,
                                                         const at::Tensor& size) const {
  const int64_t batch = x.size(0), t = x.size(1), c = x.size(2);
  // (B, T, 3C) -> (3, B, h, T, d): [q | k | v], each head-major.
  const at::Tensor qkv =
      (*qkv_)(x).reshape({batch, t, 3, heads_, c / heads_}).permute({2, 0, 3, 1, 4});
  const at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
  at::Tensor logits = q.matmul(k.transpose(-2, -1)) * scale_;
  // Proportional attention: a token standing for s_j inputs counts s_j times as a key.
  if (size.defined()) logits = logits + size.log().select(-1, 0).unsqueeze(1).unsqueeze(1);
  const at::Tensor out = logits.softmax(-1).matmul(v).transpose(1, 2).reshape({batch, t, c});
  return {(*proj_)(out), k.mean(1)};
}

attention::TracedOutput TomeAttention::trace_on_inputs(
    const at::Tensor& x, const at::Tensor& owner, const attention::TokenLayout& layout,
    const attention::TraceOptions& options) const {
  if (!input_view_) {
    attention::MechanismConfig c;
    c.dim = dim_;
    c.heads = heads_;
    c.options["qkv_bias"] = qkv_->bias.defined() ? 1 : 0;
    input_view_ = attention::make_mechanism(attention::kPlainSoftmaxMechanism, c);
  }
  // Point the view's parameters at this module's tensors on every call: a load, a cast or a
  // move to another device replaces them.
  const auto mine = named_parameters();
  for (auto& p : input_view_->named_parameters()) p.value().set_data(mine[p.key()]);
  const at::Tensor spread = x.gather(1, owner.unsqueeze(-1).expand({-1, -1, x.size(2)}));
  return input_view_->forward_traced(spread, layout, options);
}

}  // namespace attnlab::models::tome
