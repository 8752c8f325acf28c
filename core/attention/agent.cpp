// Agent attention (Han et al., ECCV 2024; SPEC_COMPARISON "Agent attention"), in both of
// LeapLabTHU/Agent-Attention's forms: `agent` (agent_deit.py, class token first) and
// `agent_pvt` (agent_pvt.py, grid only, optional spatial reduction). One implementation of
// the agent math serves both.
//   parameters  agent: qkv: Linear(C, 3C) rows [q | k | v] head-major; ac_bias (1, h, A, 1),
//               ca_bias (1, h, 1, A) for the class token. agent_pvt: q: Linear(C, C); kv:
//               Linear(C, 2C) rows [k | v]; with sr_ratio R > 1: sr: Conv2d(C, C, R, stride
//               R) and norm: LayerNorm(C, ln_eps). Both: proj: Linear(C, C); dwc: depthwise
//               Conv2d(C, C, 3, pad 1, bias); an_bias, na_bias (h, A, 7, 7); ah_bias
//               (1, h, A, kh, 1), aw_bias (1, h, A, 1, kw) over the key grid, ha_bias
//               (1, h, H, 1, A), wa_bias (1, h, 1, W, A) over the query grid, sized by the
//               window (kh = kw = window / R). qkv_bias applies to qkv (q and kv).
//   options     agent_num A (49, a square p²); qkv_bias (0, the reference default); agent:
//               window (14 = 224/16); agent_pvt: num_patches (196; window = ⌊√num_patches⌋),
//               sr_ratio R (1), ln_eps (1e-5, sr's LayerNorm). The reference's qk_scale is
//               ignored by the reference itself (d^-0.5 always), so it is no option here.
//   forward     agents = q of the grid tokens as a C×H×W image, adaptive-average-pooled to
//               p×p, split into heads (B, h, A, d). agent_attn = softmax_keys(d^-0.5·agents·kᵀ
//               + bias_a) (B, h, A, M); V_a = agent_attn·v; q_attn = softmax_agents(d^-0.5·
//               q·agentsᵀ + bias_q) (B, h, N, A); out = q_attn·V_a, heads merged; plus
//               dwc(v's grid tokens as C×kh×kw, R > 1: bilinearly upsampled to H×W first)
//               on the grid tokens (not the class token); proj. bias_a = bilinear(an_bias)
//               to the key grid + ah + aw (class-token key: ac_bias); bias_q =
//               bilinear(na_bias) to the query grid + ha + wa (class-token query: ca_bias).
//   grid        agent_pvt: pure grid, R dividing H and W. agent: the reference has exactly
//               one class token; attnlab's extension takes any number of prefix tokens and
//               treats each as the reference treats its class token (ac_bias as its key
//               column, ca_bias as its query row, no dwc, not pooled): a DeiT's cls + dist
//               share those biases, and a pure grid leaves them unused. The reference fixes
//               the grid at the window (square, H = W = window). attnlab's extension: on
//               another grid (any H×W) the window-sized biases ah/aw/ha/wa are resized
//               along their axis by 1-D linear interpolation (align_corners false, the rule
//               the 7×7 biases already follow); on the window's grid this is the identity,
//               so the reference's numbers are reproduced exactly there.
//   trace       one group "all": q (B, h, N, d), k, v (B, h, M, d); keys the layer's tokens
//               (class token first) or, R > 1, the (H/R)×(W/R) pooled grid with cell R.
//               Internals (both forms, prefix "agent."):
//                 agent.agent_tokens  (B, h, A, d) the pooled queries
//                 agent.agent_attn    (B, h, A, M) agents ← keys
//                 agent.q_attn        (B, h, N, A) queries ← agents
//                 agent.agent_values  (B, h, A, d) V_a (rank_matrices "agent_values")
//                 agent.dwc           (B, C, H, W) the depthwise diversity term
//                 agent.sr, agent.norm (B, C, H/R, W/R), (B, M, C): R > 1 only
//   rows        the implied attention q_attn·agent_attn (N × M, positive, rows sum to 1,
//               rank ≤ A), computed per query from the two factors. The dwc term is local
//               mixing of v beside it (added_mixing "dwc" where R = 1), not in the rows.
//   products    A·x = q_attn·(agent_attn·x), Aᵀ·y likewise, O(N·A·c) (R = 1).
//   explicit    out = rows·v + dwc on the grid tokens; merge; proj.
#include <ATen/ATen.h>

#include <cmath>
#include <memory>
#include <string>

#include "core/attention/capabilities.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"
#include "core/runtime/mac_counter.h"

namespace attnlab::attention {
namespace {

constexpr int64_t kAgentBiasSide = 7;  // an_bias and na_bias are always 7×7

// Axis `dim` of t resized to n by 1-D linear interpolation (align_corners false); the
// identity when it already has n entries, so the reference's grid stays exact.
at::Tensor agent_resize_axis(const at::Tensor& t, int64_t dim, int64_t n) {
  if (t.size(dim) == n) return t;
  const at::Tensor moved = t.movedim(dim, -1);
  std::vector<int64_t> sizes = moved.sizes().vec();
  const at::Tensor up =
      at::upsample_linear1d(moved.reshape({1, -1, sizes.back()}), {n}, /*align_corners=*/false);
  sizes.back() = n;
  return up.reshape(sizes).movedim(-1, dim);
}

// Adaptive average pooling of an axis of `in` entries to p cells as a (p, in) matrix: cell i
// averages entries ⌊i·in/p⌋ … ⌈(i+1)·in/p⌉ − 1 (cells overlap when p ∤ in). A matrix on
// the input's device rather than at::adaptive_avg_pool2d, which LibTorch 1.13 lacks for
// meta tensors.
at::Tensor agent_pool_weights(int64_t in, int64_t p, const at::TensorOptions& options) {
  at::Tensor w = at::zeros({p, in}, options);
  for (int64_t i = 0; i < p; ++i) {
    const int64_t lo = (i * in) / p, hi = ((i + 1) * in + p - 1) / p;
    w[i].slice(0, lo, hi).fill_(1.0 / static_cast<double>(hi - lo));
  }
  return w;
}

class AgentTrace : public AttentionTrace, public MapFactorSource, public AddedMixingSource {
 public:
  at::Tensor dwc_weight;  // (C, 1, 3, 3); undefined when v is upsampled first (R > 1)

  // Rows = q_attn · agent_attn: left (N, A), right (M, A).
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    return MapFactors{internal("agent.q_attn")[b][head], internal("agent.agent_attn")[b][head].t()};
  }

  // The dwc on v: channel head·d + c's kernel on the grid tokens; prefix tokens (the class
  // token) are neither mixed nor mixed into.
  std::vector<at::Tensor> added_mixing(int64_t head,
                                       const std::vector<int64_t>& channels) const override {
    std::vector<at::Tensor> out;
    if (!dwc_weight.defined()) return out;
    const int64_t prefix = layout.num_prefix(), n = layout.tokens();
    for (int64_t c : channels) {
      const at::Tensor grid =
          conv_mixing_matrix(dwc_weight[head * head_dim + c][0], layout.height, layout.width, 1, 1);
      at::Tensor w = at::zeros({n, n}, at::kDouble);
      w.slice(0, prefix).slice(1, prefix).copy_(grid);
      out.push_back(w);
    }
    return out;
  }
  std::string added_mixing_name() const override { return "dwc"; }
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"agent_values", internal("agent.agent_values")[b]}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const int64_t head = g.first_head + h;
    return at::matmul(internal("agent.q_attn")[b][head].index_select(0, q_rows),
                      internal("agent.agent_attn")[b][head]);
  }

  // A = q_attn·agent_attn through its A-wide middle; pooled keys (R > 1) use rows.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    if (g.keys.cell != 1) return {};
    const int64_t head = g.first_head + h;
    const at::Tensor left = internal("agent.q_attn")[b][head];
    const at::Tensor right = internal("agent.agent_attn")[b][head];
    if (transposed) return at::matmul(right.t(), at::matmul(left.t(), x));
    return at::matmul(left, at::matmul(right, x));
  }
};

class AgentAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  AgentAttention(const std::string& name, const MechanismConfig& c, bool pvt)
      : AttentionMechanism(name, c), pvt_(pvt) {
    const int64_t agents = c.int_option("agent_num");
    pool_ = static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(agents)) + 1e-9));
    if (pool_ * pool_ != agents)
      throw AttentionError(name + ": option 'agent_num' = " + std::to_string(agents) +
                           " must be a square p² (the agents pool the grid to p×p)");
    int64_t window = 0;
    if (pvt_) {
      window = static_cast<int64_t>(std::floor(std::sqrt(c.option("num_patches")) + 1e-9));
      sr_ = c.int_option("sr_ratio");
      if (window / sr_ < 1)
        throw AttentionError(name + ": sr_ratio " + std::to_string(sr_) +
                             " leaves no key of the window " + std::to_string(window) +
                             " (num_patches " + std::to_string(c.int_option("num_patches")) + ")");
    } else {
      window = c.int_option("window");
    }
    const bool bias = c.flag("qkv_bias");
    const int64_t dim = c.dim, heads = c.heads, key_side = window / sr_;
    if (pvt_) {
      q_ = add_layer<LinearLayer>(*this, "q", dim, dim, bias);
      kv_ = add_layer<LinearLayer>(*this, "kv", dim, 2 * dim, bias);
    } else {
      qkv_ = add_layer<LinearLayer>(*this, "qkv", dim, 3 * dim, bias);
    }
    proj_ = add_layer<LinearLayer>(*this, "proj", dim, dim, true);
    if (sr_ > 1) {
      Conv2dLayer::Shape s;
      s.in = s.out = dim;
      s.kernel = s.stride = {sr_, sr_};
      reduce_ = add_layer<Conv2dLayer>(*this, "sr", s);
      norm_ = add_layer<LayerNormLayer>(*this, "norm", dim, c.option("ln_eps"));
    }
    Conv2dLayer::Shape s;
    s.in = s.out = s.groups = dim;
    s.kernel = {3, 3};
    s.padding = {1, 1};
    dwc_ = add_layer<Conv2dLayer>(*this, "dwc", s);
    // The reference draws its position biases from a truncated normal of std 0.02.
    const auto bias_param = [&](const char* pname, at::IntArrayRef shape) {
      return register_parameter(pname, at::randn(shape).mul_(0.02).clamp_(-0.04, 0.04));
    };
    an_ = bias_param("an_bias", {heads, agents, kAgentBiasSide, kAgentBiasSide});
    na_ = bias_param("na_bias", {heads, agents, kAgentBiasSide, kAgentBiasSide});
    ah_ = bias_param("ah_bias", {1, heads, agents, key_side, 1});
    aw_ = bias_param("aw_bias", {1, heads, agents, 1, key_side});
    ha_ = bias_param("ha_bias", {1, heads, window, 1, agents});
    wa_ = bias_param("wa_bias", {1, heads, 1, window, agents});
    if (!pvt_) {
      ac_ = bias_param("ac_bias", {1, heads, agents, 1});
      ca_ = bias_param("ca_bias", {1, heads, 1, agents});
    }
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    check_layout(layout);
    const int64_t batch = x.size(0), dim = x.size(2), heads = config().heads;
    const int64_t height = layout.height, width = layout.width, prefix = layout.num_prefix();
    at::Tensor q_all, k_all, v_all, reduced, normed;  // (B, tokens, C) before the head split
    int64_t key_h = height, key_w = width;
    if (pvt_) {
      q_all = (*q_)(x);
      at::Tensor keys_from = x;
      if (sr_ > 1) {
        reduced = (*reduce_)(x.transpose(1, 2).reshape({batch, dim, height, width}));
        normed = (*norm_)(reduced.flatten(2).transpose(1, 2));
        keys_from = normed;
        key_h /= sr_, key_w /= sr_;
      }
      const auto kv = (*kv_)(keys_from).chunk(2, -1);
      k_all = kv[0], v_all = kv[1];
    } else {
      const auto qkv = (*qkv_)(x).chunk(3, -1);
      q_all = qkv[0], k_all = qkv[1], v_all = qkv[2];
    }
    const at::Tensor q = split_heads(q_all, heads), k = split_heads(k_all, heads),
                     v = split_heads(v_all, heads);
    const double scale = 1.0 / std::sqrt(static_cast<double>(config().head_dim()));
    // Agents: the grid's queries pooled to p×p (the class token takes no part).
    const at::Tensor q_image =
        q_all.slice(1, prefix).transpose(1, 2).reshape({batch, dim, height, width});
    const at::Tensor pooled =
        at::matmul(at::matmul(agent_pool_weights(height, pool_, x.options()), q_image),
                   agent_pool_weights(width, pool_, x.options()).t());  // (B, C, p, p)
    const at::Tensor agents = split_heads(pooled.flatten(2).transpose(1, 2), heads);
    at::Tensor agent_scores, query_scores;  // both softmaxes' logits
    {
      const runtime::MacGroupScope label("scores");  // for the complexity report
      agent_scores = at::matmul(agents * scale, k.transpose(-2, -1));
      query_scores = at::matmul(q * scale, agents.transpose(-2, -1));
    }
    const at::Tensor agent_attn = at::softmax(agent_scores + key_bias(key_h, key_w, prefix), -1);
    const at::Tensor agent_values = at::matmul(agent_attn, v);
    const at::Tensor q_attn = at::softmax(query_scores + query_bias(height, width, prefix), -1);
    at::Tensor mixed = at::matmul(q_attn, agent_values);  // (B, h, N, d)

    // Diversity: dwc on v's grid tokens as an image (pooled keys: upsampled to the grid).
    at::Tensor v_image = v_all.slice(1, prefix).transpose(1, 2).reshape({batch, dim, key_h, key_w});
    if (sr_ > 1)
      v_image = at::upsample_bilinear2d(v_image, {height, width}, /*align_corners=*/false);
    const at::Tensor dwc = (*dwc_)(v_image);  // (B, C, H, W)

    if (request) {
      auto trace = std::make_shared<AgentTrace>();
      init_trace(*trace, x, layout, *request);
      HeadGroup g = all_heads_group(*trace, heads, q, k, v);
      if (sr_ > 1) g.keys = {0, key_h, key_w, sr_};
      trace->groups.push_back(std::move(g));
      trace->internals["agent.agent_tokens"] = trace->keep(agents);
      trace->internals["agent.agent_attn"] = trace->keep(agent_attn);
      trace->internals["agent.q_attn"] = trace->keep(q_attn);
      trace->internals["agent.agent_values"] = trace->keep(agent_values);
      trace->internals["agent.dwc"] = trace->keep(dwc);
      if (sr_ > 1) {
        trace->internals["agent.sr"] = trace->keep(reduced);
        trace->internals["agent.norm"] = trace->keep(normed);
      } else {
        trace->dwc_weight = dwc_->weight.detach();
      }
      if (wants_explicit(request)) mixed = explicit_mix(*trace);
      trace->head_outputs = trace->keep(mixed);
      request->trace = std::move(trace);
    }
    at::Tensor merged = merge_heads(mixed);
    const at::Tensor dwc_tokens = dwc.flatten(2).transpose(1, 2);
    merged = prefix > 0
                 ? at::cat({merged.slice(1, 0, prefix), merged.slice(1, prefix) + dwc_tokens}, 1)
                 : merged + dwc_tokens;
    return (*proj_)(merged);
  }

 private:
  // bias_a (h, A, M): the 7×7 an_bias resized bilinearly to the key grid plus ah/aw
  // (resized along their axis off the window's grid), ac_bias for each prefix key first.
  at::Tensor key_bias(int64_t key_h, int64_t key_w, int64_t prefix) const {
    const at::Tensor b = at::upsample_bilinear2d(an_, {key_h, key_w}, /*align_corners=*/false) +
                         agent_resize_axis(ah_[0], 2, key_h) + agent_resize_axis(aw_[0], 3, key_w);
    const at::Tensor flat = b.reshape({an_.size(0), an_.size(1), key_h * key_w});
    return prefix > 0 ? at::cat({ac_[0].expand({-1, -1, prefix}), flat}, -1) : flat;
  }
  // bias_q (h, N, A): na_bias resized to the query grid plus ha/wa, ca_bias for each
  // prefix query first.
  at::Tensor query_bias(int64_t height, int64_t width, int64_t prefix) const {
    const at::Tensor b = at::upsample_bilinear2d(na_, {height, width}, /*align_corners=*/false)
                             .permute({0, 2, 3, 1}) +
                         agent_resize_axis(ha_[0], 1, height) + agent_resize_axis(wa_[0], 2, width);
    const at::Tensor flat = b.reshape({na_.size(0), height * width, na_.size(1)});
    return prefix > 0 ? at::cat({ca_[0].expand({-1, prefix, -1}), flat}, 1) : flat;
  }

  void check_layout(const TokenLayout& layout) const {
    const std::string where =
        std::to_string(layout.tokens()) + " tokens (" + layout.describe() + ")";
    if (pvt_) {
      require_pure_grid(layout);
      if (layout.height % sr_ != 0 || layout.width % sr_ != 0)
        throw AttentionError(mechanism_name() + ": sr_ratio " + std::to_string(sr_) +
                             " must divide the grid's height and width, but the layer has " +
                             where);
    }
  }

  bool pvt_ = false;
  std::shared_ptr<LinearLayer> qkv_, q_, kv_, proj_;
  std::shared_ptr<Conv2dLayer> reduce_, dwc_;
  std::shared_ptr<LayerNormLayer> norm_;
  at::Tensor an_, na_, ah_, aw_, ha_, wa_, ac_, ca_;
  int64_t pool_ = 7, sr_ = 1;
};

// Score elements per image: each head's A×M agent scores and N×A query scores.
double agent_score_elements(const MechanismConfig& c, int64_t keys, const TokenLayout& layout) {
  return double(c.heads) * c.option("agent_num") * double(keys + layout.tokens());
}

OptionSpec agent_num_option() {
  return {"agent_num", OptionSpec::Kind::Integer,
          49,          1,
          1e6,         "agent tokens A, a square p² (the grid's queries pooled to p×p)"};
}
OptionSpec agent_qkv_bias_option() {
  return {"qkv_bias", OptionSpec::Kind::Flag, 0, 0, 1, "bias on the q/k/v projections"};
}

}  // namespace

MechanismInfo agent_mechanism() {
  MechanismInfo info;
  info.name = "agent";
  info.summary =
      "Agent attention (DeiT form): pooled agent tokens broadcast softmax attention, dwc on v";
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer, capability::kAgentTokens};
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& layout) {
    return agent_score_elements(c, layout.tokens(), layout);
  };
  info.options = {
      agent_num_option(),
      {"window", OptionSpec::Kind::Integer, 14, 1, 1e6,
       "grid side the ah/aw/ha/wa biases are built for (resized linearly on other grids)"},
      agent_qkv_bias_option(),
  };
  ReferenceModule module;  // the reference AgentAttention (agent_deit.py), class token first
  module.arch = "agent_attention_deit";
  module.fixture = "agent_attn";
  module.args = {{"qkv_bias", "qkv_bias"}, {"agent_num", "agent_num"}, {"window", "window"}};
  module.grid = true;
  module.class_token = true;
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) {
    return std::make_shared<AgentAttention>("agent", c, false);
  };
  return info;
}

MechanismInfo agent_pvt_mechanism() {
  MechanismInfo info;
  info.name = "agent_pvt";
  info.summary = "Agent attention (PVT form): agent tokens over spatially reduced keys, dwc on v";
  info.needs_grid = true;
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer, capability::kAgentTokens};
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& layout) {
    const int64_t r = c.int_option("sr_ratio");
    return agent_score_elements(c, (layout.height / r) * (layout.width / r), layout);
  };
  info.options = {
      agent_num_option(),
      {"num_patches", OptionSpec::Kind::Integer, 196, 1, 1e9,
       "tokens the biases are built for: window ⌊√num_patches⌋ (resized linearly on other grids)"},
      {"sr_ratio", OptionSpec::Kind::Integer, 1, 1, 1e6,
       "spatial reduction R of the keys (conv k = stride = R + LayerNorm; must divide H, W)"},
      agent_qkv_bias_option(),
      {"ln_eps", OptionSpec::Kind::Real, 1e-5, 0, 1, "eps of the LayerNorm after sr (R > 1)"},
  };
  ReferenceModule module;  // the reference AgentAttention (agent_pvt.py) on the H x W grid
  module.arch = "agent_attention_pvt";
  module.fixture = "agent_pvt_attn";
  module.args = {{"qkv_bias", "qkv_bias"},
                 {"agent_num", "agent_num"},
                 {"num_patches", "num_patches"},
                 {"sr_ratio", "sr_ratio"},
                 {"ln_eps", "ln_eps"}};
  module.grid = true;
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) {
    return std::make_shared<AgentAttention>("agent_pvt", c, true);
  };
  return info;
}

}  // namespace attnlab::attention
