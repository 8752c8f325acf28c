// InLine attention (Han et al., NeurIPS 2024, "Bridging the Divide: Reconsidering Softmax
// and Linear Attention"; SPEC_COMPARISON "InLine attention"), DeiT form, as
// LeapLabTHU/InLine's InLineAttention computes it.
//   parameters  qkv: Linear(C, 3C) rows [q | k | v] head-major; proj: Linear(C, C);
//               residual.0: Conv1d(C, C, 1, groups h), residual.2: Conv1d(C, 9C, 1, groups h)
//               (both with bias; residual.1 is the exact GELU between them).
//   options     qkv_bias (0), window (14: the reference stores it and never reads it;
//               accepted so that its configs load, it changes nothing).
//   forward     Identity kernel: q, k as projected. s = d^-0.5, n = N (prefix tokens
//               included). Per head: out_i = q_i·((s/n)·Σ_j k_jᵀ v_j) + (1 − s·q_i·k̄)·v̄,
//               k̄, v̄ the token means. Residual: w = residual(mean of the INPUT tokens),
//               (B, 9C) read as (B, C, 3, 3) (channel c: outputs 9c … 9c+8, row-major); v's
//               grid tokens as a C×H×W image are depthwise-convolved with each image's own
//               kernels (pad 1, no bias) and added to the grid tokens only; heads merged; proj.
//   grid        any H × W after any number of prefix tokens. The reference has exactly one
//               class token and H = W = ⌊√(N−1)⌋; attnlab's extension keeps every prefix
//               token out of the residual and in the means (exact to the reference with one
//               class token on a square grid).
//   trace       one group "all": q, k (B, h, N, d) (identity kernel: the raw ones), v; keys
//               the layer's tokens. Internals:
//                 inline.kv          (B, h, d, d) (s/n)·Σ kᵀv, the KV buffer (rank)
//                 inline.k_mean      (B, h, d) k̄
//                 inline.v_mean      (B, h, d) v̄
//                 inline.res_weight  (B, C, 3, 3) the predicted depthwise kernels
//                 inline.residual    (B, h, N, d) the residual term (zero on prefix tokens)
//   rows        a_ij = 1/n + (s/n)·q_i·(k_j − k̄): rows sum to exactly 1, entries may be
//               negative (signed). The residual mixes v locally too (a per-image 3×3 conv),
//               but it is not part of the rows: they describe the attention part.
//   products    A·x, Aᵀ·y in O(N·d·c) through Q and K − k̄ plus the uniform 1/n term.
//   explicit    out = rows·v + residual, heads merged, proj.
#include <ATen/ATen.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/capabilities.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"
#include "core/nn/initial_values.h"

namespace attnlab::attention {
namespace {

// Conv1d(in, out, 1, groups) with PyTorch's default initialisation; weight (out, in/groups, 1)
// as the reference's state dict has it (a 1×1 Conv2d would have one more axis).
class InlineConv1d : public torch::nn::Module {
 public:
  InlineConv1d(int64_t in, int64_t out, int64_t groups) : groups_(groups) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in / groups));
    weight = register_parameter("weight", nn::initial_uniform({out, in / groups, 1}, bound));
    bias = register_parameter("bias", nn::initial_uniform({out}, bound));
  }
  at::Tensor operator()(const at::Tensor& x) const {  // (B, in, L) -> (B, out, L)
    const std::vector<int64_t> one{1}, none{0};       // stride, padding, dilation
    return at::conv1d(x, weight, bias, at::IntArrayRef(one), at::IntArrayRef(none),
                      at::IntArrayRef(one), groups_);
  }
  at::Tensor weight, bias;

 private:
  int64_t groups_;
};

class InlineTrace : public AttentionTrace, public MapFactorSource {
 public:
  double scale = 1.0;  // s = d^-0.5

  // Rows (s/n)·q_i·(k_j − k̄) + 1/n: left = [s/n·Q | 1/n], right = [K − k̄ | 1].
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    const at::Tensor q = g.q[b][head], k = g.k[b][head];
    const double n = double(k.size(0));
    const at::Tensor ones = at::ones({k.size(0), 1}, k.options());
    return MapFactors{at::cat({q * (scale / n), ones / n}, 1),
                      at::cat({k - k.mean(0, /*keepdim=*/true), ones}, 1)};
  }
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal("inline.kv")[b]}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const at::Tensor k = g.k[b][h];
    const double n = double(k.size(0));
    const at::Tensor centred = k - k.mean(0, /*keepdim=*/true);
    return at::matmul(g.q[b][h].index_select(0, q_rows), centred.t()) * (scale / n) + 1.0 / n;
  }

  // A = (1/n)·11ᵀ + (s/n)·Q (K − 1k̄ᵀ)ᵀ.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];
    const double n = double(k.size(0));
    const at::Tensor centred = k - k.mean(0, /*keepdim=*/true);
    const at::Tensor uniform = x.sum(0, /*keepdim=*/true) / n;  // every row's 1/n part
    if (transposed) return at::matmul(centred, at::matmul(q.t(), x)) * (scale / n) + uniform;
    return at::matmul(q, at::matmul(centred.t(), x)) * (scale / n) + uniform;
  }
};

class InlineAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    // The residual acts on v's channels of the same head, so it is switched off with it.
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit InlineAttention(const MechanismConfig& c) : AttentionMechanism("inline", c) {
    const int64_t dim = c.dim, heads = c.heads;
    qkv_ = add_layer<LinearLayer>(*this, "qkv", dim, 3 * dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", dim, dim, true);
    auto residual = register_module("residual", std::make_shared<torch::nn::Module>());
    res_in_ = add_layer<InlineConv1d>(*residual, "0", dim, dim, heads);
    res_out_ = add_layer<InlineConv1d>(*residual, "2", dim, 9 * dim, heads);
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t batch = x.size(0), n = x.size(1), dim = x.size(2), heads = config().heads;
    const int64_t prefix = layout.num_prefix(), height = layout.height, width = layout.width;
    auto [q, k, v] = split_qkv((*qkv_)(x), heads);
    const at::Tensor k_mean = k.mean(-2), v_mean = v.mean(-2);  // (B, h, d)
    const at::Tensor kv =
        at::matmul(k.transpose(-2, -1), v) * (scale_ / double(n));  // (B, h, d, d)
    // (1 − s·q_i·k̄)·v̄: the uniform 1/n part of every row and its centring of k.
    const at::Tensor gain = 1.0 - at::matmul(q, k_mean.unsqueeze(-1)) * scale_;  // (B, h, N, 1)
    at::Tensor out = at::matmul(q, kv) + gain * v_mean.unsqueeze(-2);

    // Per-image 3×3 kernels from the mean of the input tokens, one conv group per image
    // and channel.
    const at::Tensor res_weight =
        (*res_out_)(at::gelu((*res_in_)(x.mean(1).unsqueeze(-1)))).reshape({batch, dim, 3, 3});
    const at::Tensor image =
        merge_heads(v).slice(1, prefix).transpose(1, 2).reshape({1, batch * dim, height, width});
    const at::Tensor local = at::conv2d(image, res_weight.reshape({batch * dim, 1, 3, 3}), {},
                                        {1, 1}, {1, 1}, {1, 1}, batch * dim)
                                 .reshape({batch, dim, height * width})
                                 .transpose(1, 2);  // (B, H·W, C)
    const at::Tensor residual = split_heads(at::constant_pad_nd(local, {0, 0, prefix, 0}), heads);

    if (request) {
      auto trace = std::make_shared<InlineTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, v));
      trace->internals["inline.kv"] = trace->keep(kv);
      trace->internals["inline.k_mean"] = trace->keep(k_mean);
      trace->internals["inline.v_mean"] = trace->keep(v_mean);
      trace->internals["inline.res_weight"] = trace->keep(res_weight);
      trace->internals["inline.residual"] = trace->keep(residual);
      // The rows are the whole mixing (their 1/n part is the v̄ term).
      if (wants_explicit(request)) out = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out + residual));
  }

 private:
  std::shared_ptr<LinearLayer> qkv_, proj_;
  std::shared_ptr<InlineConv1d> res_in_, res_out_;
  double scale_ = 1.0;
};

}  // namespace

MechanismInfo inline_mechanism() {
  MechanismInfo info;
  info.name = "inline";
  info.summary =
      "InLine injective linear attention: identity kernel, rows summing to 1, predicted local "
      "residual";
  info.needs_grid = false;
  info.linear_in_tokens = true;
  info.capabilities = {capability::kSignedRows, capability::kKvBuffer};
  info.options = {
      {"qkv_bias", OptionSpec::Kind::Flag, 0, 0, 1, "bias on the qkv projection"},
      {"window", OptionSpec::Kind::Integer, 14, 0, 1e6,
       "the reference's window (image size / patch size): stored, unused"},
  };
  ReferenceModule module;  // the reference InLineAttention: class token + the config's H x W
  module.arch = "inline_attention";
  module.fixture = "inline_attn";
  module.args = {{"qkv_bias", "qkv_bias"}, {"window", "window"}};
  module.grid = true;
  module.class_token = true;
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<InlineAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
