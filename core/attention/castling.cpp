// Castling-ViT linear-angular attention (SPEC §1.3), as the authors' reference code
// computes it (which differs from the paper's closed form: see the self term below).
//   parameters  qkv: Linear(C, 3C) rows [q | k | v], head-major; proj: Linear(C, C);
//               dconv: depthwise Conv2d(h, h, (k, 1), padding ((k-1)/2, 0), groups h, no bias)
//   options     qkv_bias (default 0), threshold ε of the softmax mask (0.02),
//               kernel k of dconv (9, odd; the reference's res_kernel_size)
//   forward     per head, q, k, v (N, d):
//                 q̂, k̂ = q/‖q‖, k/‖k‖ per token (no epsilon)
//                 y = [sparse·v] + 0.5·v + (1/π)·q̂ (k̂ᵀ v)
//                 y = y/‖y‖ per token (no epsilon) + dconv(v)
//               then merge heads and proj. dconv treats v as an image with heads as channels,
//               tokens as rows and d as columns: a 1-D conv along the flattened token index.
//               The reference adds each token's own 0.5·v_i (not 0.5·Σ_j v_j as the paper's
//               1/2 term would); released weights follow the code, so we do.
//               sparse = (S > ε) ⊙ S with S = softmax(q·d^-0.5 kᵀ) over raw q, k, not
//               renormalised: the training-only branch, on when the module is_training().
//               A training forward also leaves training_penalty() = mean over (B, h, N) of
//               Σ_j sparse_ij, the optional sparsity regulariser of `attnlab train`.
//   trace       one head group "all": q = q̂, k = k̂ (unit rows), v as projected; internals
//                 castling.q, castling.k   raw q, k (B, h, N, d) — for S and its statistics
//                 castling.dconv_v         dconv(v) (B, h, N, d), added after normalisation
//                 castling.scores          S (B, h, N, N), only with TraceOptions::keep_scores
//                                          (computed for it in eval mode too)
//               The threshold and whether the sparse branch ran are members of the trace,
//               read with castling_threshold() / castling_sparse_branch_active().
//   rows        a_ij = (1/π) q̂_i·k̂_j + 0.5·[i = j], plus (S_ij > ε)·S_ij when the sparse
//               branch ran: the mixing before the output normalisation, so rows·V is the
//               pre-normalisation y exactly. dconv's k-tap band (castling.dconv_v) and the
//               normalisation are not part of the rows.
//   products    A·x and Aᵀ·y (AttentionTrace::apply) in O(N·d·c) when the sparse branch did not
//               run; with it, through chunked rows.
//   explicit    y = unit_rows(rows·v) + dconv(v); merge heads; proj
#include "core/attention/castling.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "core/attention/capabilities.h"
#include "core/attention/kernels.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"
#include "core/attention/head_outputs.h"

namespace attnlab::attention {
namespace {

constexpr double kInvPi = 0.31830988618379067154;  // 1/π

// S = softmax(q·scale kᵀ) over the last axis, scaling q first as the reference does; one
// definition for the forward, the rows and the statistics so that all three agree bitwise.
at::Tensor branch_scores(const at::Tensor& q, const at::Tensor& k, double scale) {
  return at::softmax(at::matmul(q * scale, k.transpose(-2, -1)), -1);
}

at::Tensor masked(const at::Tensor& scores, double threshold) {
  return scores * (scores > threshold);
}

class CastlingTrace : public AttentionTrace, public MapFactorSource, public AddedMixingSource {
 public:
  double scale = 1.0;
  double threshold = 0.0;
  bool sparse_active = false;
  at::Tensor q_raw, k_raw;  // also internals castling.q / castling.k
  at::Tensor dconv_weight;  // (h, 1, k, 1): one token-axis kernel per head

  // A = (1/π)·Q̂K̂ᵀ + 0.5·I without the sparse branch (inference); with it, no factors.
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    if (sparse_active) return std::nullopt;
    const HeadGroup& g = group_of(head);
    return MapFactors{g.q[b][head - g.first_head] * kInvPi, g.k[b][head - g.first_head], 0.5};
  }

  // dconv along the flattened token axis (prefix tokens included): one band matrix per
  // head, the same for all its channels. It is added after y is scaled to unit rows, so
  // A + W is the mixing up to that per-token scale.
  std::vector<at::Tensor> added_mixing(int64_t head,
                                       const std::vector<int64_t>& channels) const override {
    const at::Tensor band = conv_mixing_matrix(dconv_weight[head][0], layout.tokens(), 1,
                                               (dconv_weight.size(2) - 1) / 2, 0);
    return std::vector<at::Tensor>(channels.size(), band);
  }
  std::string added_mixing_name() const override { return "dconv"; }

  // The KV buffer k̂ᵀv: the group's k is k̂ (unit rows) and v is as projected, the buffer
  // the forward mixes.
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    const HeadGroup& g = group_of(0);
    if (g.num_heads != heads)
      throw TraceQueryError("rank matrices: a castling trace must have one head group");
    return {{"kv", at::matmul(g.k[b].transpose(-2, -1), g.v[b])}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    at::Tensor rows = at::matmul(g.q[b][h].index_select(0, q_rows), g.k[b][h].t()) * kInvPi;
    // The reference's own 0.5·v_i: half a weight on the query's own token.
    rows.scatter_add_(1, q_rows.reshape({-1, 1}),
                      at::full({q_rows.numel(), 1}, 0.5, rows.options()));
    if (sparse_active)
      rows = rows + masked(branch_scores(q_raw[b][h].index_select(0, q_rows), k_raw[b][h], scale),
                           threshold);
    return rows;
  }

  // Without the sparse branch A = (1/π) Q̂K̂ᵀ + 0.5·I, so A·x = (1/π) Q̂(K̂ᵀx) + 0.5·x (and
  // the same with Q̂, K̂ swapped for Aᵀ): O(N·d·c). The sparse branch is an N×N softmax by
  // definition; it falls back to chunked rows.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    if (sparse_active) return {};
    const at::Tensor left = transposed ? g.k[b][h] : g.q[b][h];
    const at::Tensor right = transposed ? g.q[b][h] : g.k[b][h];
    return at::matmul(left, at::matmul(right.t(), x)) * kInvPi + 0.5 * x;
  }
};

const CastlingTrace& as_castling(const AttentionTrace& trace, const char* what) {
  const auto* t = dynamic_cast<const CastlingTrace*>(&trace);
  if (!t)
    throw TraceQueryError(std::string(what) + " needs a castling trace, not a " +
                          (trace.mechanism.empty() ? "foreign" : trace.mechanism) + " one");
  return *t;
}

class CastlingAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit CastlingAttention(const MechanismConfig& c) : AttentionMechanism("castling", c) {
    const int64_t kernel = c.int_option("kernel");
    if (kernel < 1 || kernel % 2 == 0)
      throw AttentionError("castling: option 'kernel' = " + std::to_string(kernel) +
                           " must be odd and >= 1 (the token-axis conv pads (kernel-1)/2 on "
                           "both sides to keep N tokens)");
    threshold_ = c.option("threshold");
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
    qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
    Conv2dLayer::Shape s;
    s.in = s.out = s.groups = c.heads;
    s.kernel = {kernel, 1};
    s.padding = {(kernel - 1) / 2, 0};
    s.bias = false;
    dconv_ = add_layer<Conv2dLayer>(*this, "dconv", s);
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t heads = config().heads;
    auto [q, k, v] = split_qkv((*qkv_)(x), heads);

    const bool sparse_active = is_training();
    const bool keep_scores = request && request->options.keep_scores;
    at::Tensor scores;
    if (sparse_active || keep_scores) scores = branch_scores(q, k, scale_);

    at::Tensor qn = unit_rows(q);
    at::Tensor kn = unit_rows(k);
    at::Tensor dconv_v = (*dconv_)(v);  // (B, h, N, d): heads are the conv's channels
    at::Tensor kv = at::matmul(kn.transpose(-2, -1), v);  // (B, h, d, d)
    // Summed in the reference's order: [sparse·v] + 0.5·v + (1/π)·q̂ (k̂ᵀ v).
    at::Tensor y = 0.5 * v;
    if (sparse_active) {
      at::Tensor sparse = masked(scores, threshold_);
      set_training_penalty(sparse.sum(-1).mean());
      y = at::matmul(sparse, v) + y;
    } else {
      set_training_penalty({});
    }
    y = y + kInvPi * at::matmul(qn, kv);

    if (request) {
      auto trace = std::make_shared<CastlingTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      trace->threshold = threshold_;
      trace->sparse_active = sparse_active;
      trace->q_raw = trace->keep(q);
      trace->k_raw = trace->keep(k);
      trace->groups.push_back(all_heads_group(*trace, heads, qn, kn, v));
      trace->internals["castling.q"] = trace->q_raw;
      trace->internals["castling.k"] = trace->k_raw;
      trace->internals["castling.dconv_v"] = trace->keep(dconv_v);
      trace->dconv_weight = dconv_->weight.detach();
      if (keep_scores) trace->internals["castling.scores"] = trace->keep(scores);
      if (wants_explicit(request)) y = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(unit_rows(y) + dconv_v));
  }

 private:
  std::shared_ptr<LinearLayer> qkv_, proj_;
  std::shared_ptr<Conv2dLayer> dconv_;
  double scale_ = 1.0;
  double threshold_ = 0.0;
};

}  // namespace

MaskStatistics castling_mask_statistics(const AttentionTrace& trace, double threshold,
                                        int64_t chunk_rows, int64_t image) {
  const CastlingTrace& t = as_castling(trace, "castling_mask_statistics");
  if (chunk_rows < 1)
    throw TraceQueryError("castling mask statistics: chunk_rows must be >= 1, got " +
                          std::to_string(chunk_rows));
  if (image >= t.batch)
    throw TraceQueryError("castling mask statistics: image " + std::to_string(image) +
                          " of a batch of " + std::to_string(t.batch));
  const int64_t first = image < 0 ? 0 : image, last = image < 0 ? t.batch : image + 1;
  const int64_t n = t.q_raw.size(2);
  // Counts stay on the trace's device until the end: one host transfer, not one per chunk.
  at::Tensor counts = at::zeros({t.heads}, t.q_raw.options().dtype(at::kLong));
  for (int64_t b = first; b < last; ++b) {
    const at::Tensor q = t.q_raw[b], k = t.k_raw[b];  // (h, N, d)
    for (int64_t r0 = 0; r0 < n; r0 += chunk_rows) {
      at::Tensor s = branch_scores(q.slice(1, r0, std::min(n, r0 + chunk_rows)), k, t.scale);
      counts += (s > threshold).sum({1, 2});
    }
  }
  at::Tensor host = counts.cpu();
  MaskStatistics stats;
  stats.threshold = threshold;
  stats.entries_per_head = (last - first) * n * n;
  for (int64_t h = 0; h < t.heads; ++h) {
    stats.above_per_head.push_back(host[h].item<int64_t>());
    stats.above_total += stats.above_per_head.back();
  }
  return stats;
}

double castling_threshold(const AttentionTrace& trace) {
  return as_castling(trace, "castling_threshold").threshold;
}

bool castling_sparse_branch_active(const AttentionTrace& trace) {
  return as_castling(trace, "castling_sparse_branch_active").sparse_active;
}

MechanismInfo castling_mechanism() {
  MechanismInfo info;
  info.name = "castling";
  info.linear_in_tokens = true;
  info.capabilities = {capability::kSignedRows, capability::kKvBuffer, capability::kAuxiliaryMask};
  info.summary = "Castling-ViT linear-angular attention with token-axis dconv";
  info.options = {
      {"qkv_bias", OptionSpec::Kind::Flag, 0, 0, 1, "bias on the qkv projection"},
      {"threshold", OptionSpec::Kind::Real, 0.02, 0, 1,
       "ε of the training-only masked softmax branch (S > ε kept)"},
      {"kernel", OptionSpec::Kind::Integer, 9, 1, 1e6,
       "odd length of the depthwise conv along the token axis (res_kernel_size)"},
  };
  // The reference CastlingAttention module on a token sequence, evaluated both in eval
  // mode and with the training-only masked softmax branch.
  ReferenceModule module;
  module.fixture = "castling_attn";
  module.args = {
      {"qkv_bias", "qkv_bias"}, {"sparse_threshold", "threshold"}, {"res_kernel_size", "kernel"}};
  module.eval_output = "out.inference";
  module.train_output = "out.with_sparse_branch";
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<CastlingAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
