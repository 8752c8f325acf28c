// Efficient attention (Shen et al., WACV 2021; SPEC_COMPARISON "Efficient attention",
// cmsflash/efficient-attention EfficientAttention): keys softmaxed over the N positions,
// queries softmaxed over their dk channels, keys and values folded into a dk×dv context
// first. O(N·dk·dv) per head, no scaling, no epsilon.
//   parameters  keys, queries: 1×1 Conv2d(C, key_channels); values: 1×1 Conv2d(C,
//               value_channels); reprojection: 1×1 Conv2d(value_channels, C); all with bias
//               and 4-D weights (out, in, 1, 1) as the reference's state dict. A 1×1 conv
//               is a per-token linear map, so the layer runs on (B, N, C) tokens, prefix
//               tokens included (nothing depends on the grid).
//   options     key_channels, value_channels (0 = dim; each a multiple of the heads);
//               inner_residual (default 0): add the layer's input to its output, as the
//               reference module does. A ViT block adds its own residual, so the mechanism
//               inside a block leaves it off; the reference module as a model of its own
//               (arch efficient_attention) sets it through ReferenceModule::fixed_options.
//   forward     heads are contiguous channel blocks (dk = key_channels/h, dv =
//               value_channels/h): ρk(K) = softmax over tokens, ρq(Q) = softmax over
//               channels, context = ρk(K)ᵀV (dk×dv), out_i = ρq(q_i)·context; heads
//               concatenated, reprojection (+ input with inner_residual)
//   trace       one head group "all": q = ρq(Q), k = ρk(K) (B, h, N, dk), v (B, h, N, dv);
//               internals "efficient.kv" (B, h, dk, dv), the context (KV buffer)
//   rows        a_ij = Σ_c ρq(q_i)_c ρk(k_j)_c over all N tokens: non-negative and
//               summing to 1 (each ρk column sums to 1 over tokens, each ρq row over c)
//   products    A·x = ρQ(ρKᵀx) and Aᵀ·y = ρK(ρQᵀy), O(N·dk·c)
//   explicit    out = reprojection(merge(rows·v)) (+ input)
#include <ATen/ATen.h>

#include "core/attention/capabilities.h"
#include "core/attention/factored_trace.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

// A 1×1 convolution with bias.
std::shared_ptr<Conv2dLayer> pointwise(torch::nn::Module& owner, const std::string& name,
                                       int64_t in, int64_t out) {
  Conv2dLayer::Shape s;
  s.in = in;
  s.out = out;
  return add_layer<Conv2dLayer>(owner, name, s);
}

// A 1×1 convolution applied to tokens (B, N, C): the same map per token.
at::Tensor per_token(const Conv2dLayer& conv, const at::Tensor& x) {
  return at::linear(x, conv.weight.flatten(1), conv.bias);
}

// An option that gives a channel count: 0 means the layer's dim; it must split into heads.
int64_t channels(const MechanismConfig& c, const char* option) {
  const int64_t n = c.int_option(option) == 0 ? c.dim : c.int_option(option);
  if (n % c.heads != 0)
    throw AttentionError("efficient: option '" + std::string(option) + "' = " + std::to_string(n) +
                         " must be a multiple of the heads (" + std::to_string(c.heads) + ")");
  return n;
}

class EfficientAttention : public AttentionMechanism {
 public:
  explicit EfficientAttention(const MechanismConfig& c) : AttentionMechanism("efficient", c) {
    const int64_t kc = channels(c, "key_channels"), vc = channels(c, "value_channels");
    keys_ = pointwise(*this, "keys", c.dim, kc);
    queries_ = pointwise(*this, "queries", c.dim, kc);
    values_ = pointwise(*this, "values", c.dim, vc);
    reprojection_ = pointwise(*this, "reprojection", vc, c.dim);
    key_dim_ = kc / c.heads;
    inner_residual_ = c.flag("inner_residual");
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t heads = config().heads;
    const at::Tensor k = split_heads(per_token(*keys_, x), heads).softmax(-2);     // over tokens
    const at::Tensor q = split_heads(per_token(*queries_, x), heads).softmax(-1);  // over dk
    const at::Tensor v = split_heads(per_token(*values_, x), heads);
    const at::Tensor context = at::matmul(k.transpose(-2, -1), v);  // (B, h, dk, dv)
    at::Tensor out = at::matmul(q, context);                        // (B, h, N, dv)
    if (request) {
      auto trace = std::make_shared<FactoredRowsTrace>("efficient.kv");
      init_trace(*trace, x, layout, *request);
      trace->head_dim = key_dim_;
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, v));
      trace->internals["efficient.kv"] = trace->keep(context);
      if (wants_explicit(request)) out = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    at::Tensor y = per_token(*reprojection_, merge_heads(out));
    return inner_residual_ ? y + x : y;
  }

 private:
  std::shared_ptr<Conv2dLayer> keys_, queries_, values_, reprojection_;
  int64_t key_dim_ = 0;
  bool inner_residual_ = false;
};

}  // namespace

MechanismInfo efficient_mechanism() {
  MechanismInfo info;
  info.name = "efficient";
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer};
  info.summary =
      "Efficient attention (Shen et al.): keys softmaxed over tokens, queries over channels, "
      "context ρk(K)ᵀV first, O(N·d²)";
  info.options = {
      {"key_channels", OptionSpec::Kind::Integer, 0, 0, 1e9,
       "channels of the keys and queries convs, split among the heads (0: dim)"},
      {"value_channels", OptionSpec::Kind::Integer, 0, 0, 1e9,
       "channels of the values conv, split among the heads (0: dim)"},
      {"inner_residual", OptionSpec::Kind::Flag, 0, 0, 1,
       "add the layer's input to its output, as the reference module does (off inside a "
       "block, which adds its own residual)"}};
  // The reference EfficientAttention on (B, C, H, W) images, its residual inside.
  ReferenceModule module;
  module.fixture = "efficient_attn";
  module.dim_arg = "in_channels";
  module.heads_arg = "head_count";
  module.args = {{"key_channels", "key_channels"}, {"value_channels", "value_channels"}};
  module.fixed_options = {{"inner_residual", 1}};
  module.channels_first = true;
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<EfficientAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
