// EfficientViT's lightweight multi-scale linear attention (LiteMLA, Cai et al. ICCV 2023;
// SPEC_COMPARISON "EfficientViT"), as mit-han-lab/efficientvit's LiteMLA computes it: a
// 1×1 qkv conv, a multi-scale branch per kernel side s (depthwise s×s conv, then a grouped
// 1×1 conv) whose output is a further set of heads, ReLU linear attention, and a 1×1 conv
// + BatchNorm.
//   parameters  qkv.conv: Conv2d(C, 3·h·d, 1); per branch i: aggreg.i.0: depthwise
//               Conv2d(3hd, 3hd, s_i, pad s_i//2); aggreg.i.1: Conv2d(3hd, 3hd, 1, groups
//               3h); proj.conv: Conv2d(h·d·(1+S), C, 1), S the number of branches;
//               proj.norm: BatchNorm2d(C, eps 1e-5) with the
//               running_mean / running_var buffers (no num_batches_tracked: the checkpoint
//               loader drops it and nothing reads it). Convs have a bias only with use_bias.
//   options     head_dim d (the reference's `dim`; 0: C / heads), scale, scale2, scale3: the
//               reference's tuple `scales` (odd sides in order, 0 ends it: scale 5 alone is
//               the default (5,), scale 3 + scale2 5 is (3, 5), scale 0 is ()), eps (1e-15),
//               use_bias (0).
//               h is the config's heads; h·d need not be C (the reference's explicit heads).
//   forward     channel layout per head [q(d) | k(d) | v(d)] contiguous (NOT [q | k | v]
//               head-major), the branches' heads after the qkv conv's, in the order of
//               `scales`: H' = h·(1+S) heads.
//               out_n = (Σ_m v_m relu(k_m)ᵀ) relu(q_n) / (relu(q_n)·Σ_m relu(k_m) + eps),
//               heads concatenated channel-wise (head·d + c), proj. No residual inside.
//               The reference's quadratic form for H·W ≤ d is the same function.
//   grid        pure grid only (the s×s convs); BatchNorm uses batch statistics in train().
//   trace       heads = H' (the branch's heads are heads too), head_dim d; one group "all":
//               q = relu(q), k = relu(k), v (B, H', N, d). Internals:
//                 efficientvit.qkv    (B, 3·d·H', H, W) the multi-scale qkv before the kernel
//                                     (the fixture's out.qkv, then out.aggreg.0)
//                 efficientvit.kv     (B, H', d, d) Σ relu(k)ᵀ v, the KV buffer (rank)
//                 efficientvit.k_sum  (B, H', d) Σ relu(k)
//   rows        a_ij = relu(q_i)·relu(k_j) / Σ_m relu(q_i)·relu(k_m); eps not in the row, so a
//               row sums to 1. A query with relu(q_i)·Σ relu(k) = 0 (relu(q_i) = 0, or no
//               key alive in its features) has an all-zero row: the layer gives it a zero
//               output (0 / (0 + eps)), and a zero row says "mixes nothing" without 0/0.
//   products    A·x, Aᵀ·y in O(N·d·c) through relu(Q), relu(K).
//   explicit    out = rows·v · den/(den + eps), den = relu(q_i)·Σ relu(k); merge; proj
#include <ATen/ATen.h>

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/capabilities.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

// Rows normalised by their sums, a zero-sum row (all scores 0: ReLU features are >= 0)
// left at zero; the safe divisor keeps 0/0 out of gradients too.
at::Tensor normalise_rows(const at::Tensor& scores) {
  const at::Tensor sums = scores.sum(-1, /*keepdim=*/true);
  return scores / at::where(sums > 0, sums, at::ones_like(sums));
}

class EfficientVitTrace : public AttentionTrace, public MapFactorSource {
 public:
  // Rows q_i·Kᵀ / (q_i·Σk), zero where that sum is 0: left = Q / den (0 there), right = K.
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    const at::Tensor q = g.q[b][head - g.first_head], k = g.k[b][head - g.first_head];
    const at::Tensor den = at::matmul(q, k.sum(0)).unsqueeze(1);
    return MapFactors{q * at::where(den > 0, den.reciprocal(), at::zeros_like(den)), k};
  }
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal("efficientvit.kv")[b]}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    return normalise_rows(at::matmul(g.q[b][h].index_select(0, q_rows), g.k[b][h].t()));
  }

  // A = diag(1/den) Q Kᵀ, den = Q·Σk (zero rows where den = 0, as the rows).
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];
    const at::Tensor den = at::matmul(q, k.sum(0)).unsqueeze(1);
    const at::Tensor inv = at::where(den > 0, den.reciprocal(), at::zeros_like(den));
    if (transposed) return at::matmul(k, at::matmul(q.t(), x * inv));
    return at::matmul(q, at::matmul(k.t(), x)) * inv;
  }
};

// nn.BatchNorm2d: running statistics in eval, batch statistics (updating them) in train.
class BatchNorm2d : public torch::nn::Module {
 public:
  explicit BatchNorm2d(int64_t channels) {
    weight = register_parameter("weight", at::ones({channels}));
    bias = register_parameter("bias", at::zeros({channels}));
    running_mean = register_buffer("running_mean", at::zeros({channels}));
    running_var = register_buffer("running_var", at::ones({channels}));
  }
  at::Tensor operator()(const at::Tensor& x) const {
    return at::batch_norm(x, weight, bias, running_mean, running_var, is_training(), 0.1, 1e-5,
                          /*cudnn_enabled=*/true);
  }
  at::Tensor weight, bias, running_mean, running_var;
};

Conv2dLayer::Shape conv_shape(int64_t in, int64_t out, int64_t kernel, int64_t groups, bool bias) {
  Conv2dLayer::Shape s;
  s.in = in;
  s.out = out;
  s.kernel = {kernel, kernel};
  s.padding = {kernel / 2, kernel / 2};
  s.groups = groups;
  s.bias = bias;
  return s;
}

// The options scale, scale2, scale3 as the reference's tuple `scales`: odd sides, in order,
// up to the first 0.
constexpr const char* kScaleOptions[] = {"scale", "scale2", "scale3"};

std::vector<int64_t> branch_scales(const MechanismConfig& c) {
  std::vector<int64_t> scales;
  bool ended = false;
  for (const char* name : kScaleOptions) {
    const int64_t s = c.int_option(name);
    if (s == 0) {
      ended = true;
      continue;
    }
    if (ended)
      throw AttentionError("efficientvit: option '" + std::string(name) + "' = " +
                           std::to_string(s) + " follows a 0: the scales are given in order");
    if (s % 2 == 0)
      throw AttentionError("efficientvit: option '" + std::string(name) +
                           "' = " + std::to_string(s) +
                           " must be odd (the branch's conv pads s//2 to keep the grid) or 0");
    scales.push_back(s);
  }
  return scales;
}

class EfficientVitAttention : public AttentionMechanism {
 public:
  explicit EfficientVitAttention(const MechanismConfig& c) : AttentionMechanism("efficientvit", c) {
    const int64_t asked = c.int_option("head_dim");
    d_ = asked > 0 ? asked : c.head_dim();
    scales_ = branch_scales(c);
    eps_ = c.option("eps");
    const bool bias = c.flag("use_bias");
    const int64_t total = c.heads * d_;  // 3·total channels per branch
    // Registered in the reference's order: qkv, aggreg, proj.
    auto qkv = register_module("qkv", std::make_shared<torch::nn::Module>());
    qkv_ = add_layer<Conv2dLayer>(*qkv, "conv", conv_shape(c.dim, 3 * total, 1, 1, bias));
    auto aggreg = register_module("aggreg", std::make_shared<torch::nn::Module>());
    for (size_t i = 0; i < scales_.size(); ++i) {
      auto branch =
          aggreg->register_module(std::to_string(i), std::make_shared<torch::nn::Module>());
      spatial_.push_back(add_layer<Conv2dLayer>(
          *branch, "0", conv_shape(3 * total, 3 * total, scales_[i], 3 * total, bias)));
      mix_.push_back(add_layer<Conv2dLayer>(
          *branch, "1", conv_shape(3 * total, 3 * total, 1, 3 * c.heads, bias)));
    }
    auto proj = register_module("proj", std::make_shared<torch::nn::Module>());
    proj_ =
        add_layer<Conv2dLayer>(*proj, "conv", conv_shape(total * branches(), c.dim, 1, 1, bias));
    norm_ = add_layer<BatchNorm2d>(*proj, "norm", c.dim);
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), height = layout.height, width = layout.width;
    const int64_t n = height * width, d = d_, heads = config().heads * branches();
    const at::Tensor image = x.transpose(1, 2).reshape({batch, x.size(2), height, width});
    at::Tensor qkv = (*qkv_)(image);
    if (!scales_.empty()) {  // [qkv, branch 0, branch 1, ...] along the channels
      std::vector<at::Tensor> multi = {qkv};
      for (size_t i = 0; i < scales_.size(); ++i) multi.push_back((*mix_[i])((*spatial_[i])(qkv)));
      qkv = at::cat(multi, 1);
    }
    // Per head 3d contiguous channels [q | k | v] -> (B, H', N, d) each.
    const at::Tensor parts = qkv.reshape({batch, heads, 3 * d, n}).transpose(-2, -1);
    const at::Tensor q = at::relu(parts.narrow(-1, 0, d));
    const at::Tensor k = at::relu(parts.narrow(-1, d, d));
    const at::Tensor v = parts.narrow(-1, 2 * d, d);
    const at::Tensor kv = at::matmul(k.transpose(-2, -1), v);   // (B, H', d, d)
    const at::Tensor k_sum = k.sum(-2);                         // (B, H', d)
    const at::Tensor den = at::matmul(q, k_sum.unsqueeze(-1));  // (B, H', N, 1)
    at::Tensor out = at::matmul(q, kv) / (den + eps_);
    if (request) {
      auto trace = std::make_shared<EfficientVitTrace>();
      init_trace(*trace, x, layout, *request);
      trace->heads = heads;  // the branch's heads are heads of their own
      trace->head_dim = d;
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, v));
      trace->internals["efficientvit.qkv"] = trace->keep(qkv);
      trace->internals["efficientvit.kv"] = trace->keep(kv);
      trace->internals["efficientvit.k_sum"] = trace->keep(k_sum);
      // Rows are normalised without eps (and are zero where den = 0, as is the output).
      if (wants_explicit(request)) out = explicit_mix(*trace) * (den / (den + eps_));
      request->trace = std::move(trace);
    }
    // Heads back to channels head·d + c, then the 1×1 conv and the norm.
    const at::Tensor mixed = out.transpose(-2, -1).reshape({batch, heads * d, height, width});
    const at::Tensor y = (*norm_)((*proj_)(mixed));
    return y.flatten(2).transpose(1, 2);
  }

 private:
  int64_t branches() const { return 1 + int64_t(scales_.size()); }

  std::shared_ptr<Conv2dLayer> qkv_, proj_;
  std::vector<std::shared_ptr<Conv2dLayer>> spatial_, mix_;  // per branch
  std::shared_ptr<BatchNorm2d> norm_;
  int64_t d_ = 0;
  std::vector<int64_t> scales_;
  double eps_ = 1e-15;
};

}  // namespace

MechanismInfo efficientvit_mechanism() {
  MechanismInfo info;
  info.name = "efficientvit";
  info.summary =
      "EfficientViT LiteMLA: ReLU linear attention plus a multi-scale (s×s) branch's heads";
  info.needs_grid = true;
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer};
  info.options = {
      {"head_dim", OptionSpec::Kind::Integer, 0, 0, 1e6,
       "head dimension d, the reference's dim (0: C / heads; the reference default is 8)"},
      {"scale", OptionSpec::Kind::Integer, 5, 0, 1e6,
       "odd kernel side of the first multi-scale branch, scales = (s,) (0: no branch)"},
      {"scale2", OptionSpec::Kind::Integer, 0, 0, 1e6,
       "odd kernel side of a second branch: scale 3, scale2 5 is scales = (3, 5) (0: none)"},
      {"scale3", OptionSpec::Kind::Integer, 0, 0, 1e6,
       "odd kernel side of a third branch (0: none)"},
      {"eps", OptionSpec::Kind::Real, 1e-15, 0, 1e9, "epsilon added to the denominator"},
      {"use_bias", OptionSpec::Kind::Flag, 0, 0, 1,
       "bias on every conv (the reference's use_bias)"},
  };
  info.trace_heads = [](const MechanismConfig& c) {
    return c.heads * (1 + int64_t(branch_scales(c).size()));
  };
  // The reference LiteMLA on (B, C, H, W). Its config leaves heads null (h = C // dim ·
  // heads_ratio): the weights give h and the branch's kernel.
  ReferenceModule module;
  module.arch = "efficientvit_litemla";
  module.fixture = "efficientvit_attn";
  module.dim_arg = "in_channels";
  module.heads_arg = "heads";
  module.args = {{"dim", "head_dim"}, {"eps", "eps"}, {"use_bias", "use_bias"}};
  module.channels_first = true;
  module.fit_to_weights = [](MechanismConfig& c, const std::map<std::string, at::Tensor>& w) {
    if (!c.options.count("head_dim")) c.options["head_dim"] = 8;  // the reference's default
    const int64_t d = static_cast<int64_t>(c.options.at("head_dim"));
    for (size_t i = 0; i < std::size(kScaleOptions); ++i) {  // each branch's kernel side
      const auto agg = w.find("aggreg." + std::to_string(i) + ".0.weight");
      c.options[kScaleOptions[i]] = agg == w.end() ? 0.0 : double(agg->second.size(-1));
    }
    const auto qkv = w.find("qkv.conv.weight");
    if (c.heads == 0 && d > 0) c.heads = qkv == w.end() ? c.dim / d : qkv->second.size(0) / (3 * d);
  };
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<EfficientVitAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
