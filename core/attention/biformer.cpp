// Bi-level routing attention (BiFormer; Zhu et al. CVPR 2023; SPEC_COMPARISON "BiFormer
// bi-level routing attention"), as rayleizhu/BiFormer's BiLevelRoutingAttention computes it
// (ops/bra_legacy.py, the module BiFormer-T's blocks build).
//   parameters  qkv.qkv: Linear(C, 2·qk + C, bias) rows [q (qk) | k (qk) | v (C)]; wo: Linear(C,
//               C) ('qkvo'); lepe: depthwise Conv2d(C, C, side_dwconv, pad side_dwconv//2, bias).
//   options     n_win S regions per side (7), topk (4, ≤ S²), qk_dim (0: C; heads must divide
//               it), qk_scale (0: qk_dim^-0.5 — the WHOLE qk width, both levels), side_dwconv
//               (3, odd), auto_pad (1: attnlab's default, the reference's is false — pad the
//               grid bottom/right with zero tokens to multiples of S and crop, exactly the
//               reference's auto_pad; on grids S divides it changes nothing, so the default is
//               the reference's wherever the reference runs; 0: refuse such grids).
//               kv_downsample_mode: only 'identity' (BiFormer-T); the pooling modes are
//               refused (kv_per_win, kv_downsample_ratio, kv_downsample_kernel are accepted for
//               the reference's configs and only matter to them). param_attention: only
//               'qkvo'. param_routing, diff_routing, soft_routing: only false (refused).
//   forward     tokens as a (B, H, W, C) grid, padded to Hp×Wp (auto_pad), qkv. Regions r =
//               row·S + col of rh×rw = (Hp/S)×(Wp/S) pixels (row-major inside). Router (no
//               gradient): logits = (s·mean_r q)·(mean_r' k)ᵀ (B, S², S²), top-k descending →
//               route_idx, route_weight = softmax of the k logits (not used: hard routing).
//               Each region's pixels attend, per head (q/k: qk/h, v: C/h contiguous channels),
//               over the pixels of its k routed regions in routing order: softmax(s·q·kᵀ)·v.
//               out = wo(attention + lepe(v as (B, C, Hp, Wp))), cropped to H×W.
//   grid        pure grid only; S must divide H and W unless auto_pad.
//   trace       one group "all": q (B, h, Hp·Wp, qk/h), k likewise, v (B, h, Hp·Wp, C/h) on the
//               padded grid (query_grid_w = Wp; keys Hp×Wp, cell 1, those beyond H×W are
//               padding). window × window_w = the region size (viewers outline the regions,
//               which tile the grid from the top-left). Internals:
//                 biformer.route_idx     (B, S², k) int64, routed regions per query region
//                 biformer.route_weight  (B, S², k) softmax of the routing logits
//                 biformer.lepe          (B, C, Hp, Wp) lepe(v), added after the mixing
//                 biformer.region        (2,) int64, the region size (rh, rw)
//   rows        a query's softmax over the pixels of its region's k routed regions, zero on
//               every other key (block-sparse, ≥ 0); over real tokens they sum to 1 less the
//               weight on padding keys. Computed per query from q, k, route_idx: never N×N.
//   products    through rows (the attention is not linear).
//   explicit    out = wo(merge(rows·v) + lepe), cropped.
#include <ATen/ATen.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/capabilities.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/runtime/mac_counter.h"

namespace attnlab::attention {
namespace {

// The reference's kv_downsample_mode values; only the first runs here.
const std::vector<std::string> kBiformerKvModes = {
    "identity", "ada_avgpool", "ada_maxpool", "maxpool", "avgpool", "fracpool", "conv"};

class BiformerTrace : public AttentionTrace {
 public:
  double scale = 1.0;
  at::Tensor region_of_row;  // (Hp·Wp,) int64: the region of each padded-grid query row
  at::Tensor region_keys;    // (S², rh·rw) int64: the key indices of each region's pixels

 protected:
  // Scores over the routed regions' pixels only, softmax, scattered into the key space.
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const int64_t n = q_rows.size(0);
    const at::Tensor routed =
        internal("biformer.route_idx")[b].index_select(0, region_of_row.index_select(0, q_rows));
    const at::Tensor keys = region_keys.index_select(0, routed.reshape({-1})).reshape({n, -1});
    const at::Tensor q = g.q[b][h].index_select(0, q_rows) * scale;  // the reference's order
    const at::Tensor k =
        g.k[b][h].index_select(0, keys.reshape({-1})).reshape({n, keys.size(1), -1});
    const at::Tensor probs = at::softmax(at::matmul(k, q.unsqueeze(-1)).squeeze(-1), -1);
    return at::zeros({n, g.keys.size()}, probs.options()).scatter(1, keys, probs);
  }
};

// The reference's QKVLinear: a module "qkv" holding the Linear "qkv" (state dict qkv.qkv.*).
class BiformerQkvLinear : public torch::nn::Module {
 public:
  BiformerQkvLinear(int64_t dim, int64_t qk) {
    qkv = add_layer<LinearLayer>(*this, "qkv", dim, 2 * qk + dim, true);
  }
  std::shared_ptr<LinearLayer> qkv;
};

class BiformerAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("wo.weight", config().heads, config().head_dim());
  }
  explicit BiformerAttention(const MechanismConfig& c) : AttentionMechanism("biformer", c) {
    const auto refuse = [](const std::string& what) { throw AttentionError("biformer: " + what); };
    if (c.int_option("kv_downsample_mode") != 0)
      refuse("kv_downsample_mode '" +
             kBiformerKvModes.at(static_cast<size_t>(c.int_option("kv_downsample_mode"))) +
             "' is not implemented (only 'identity', BiFormer-T's: no kv pooling)");
    if (c.int_option("param_attention") != 0)
      refuse("param_attention 'qkv' (no output projection) is not implemented (only 'qkvo')");
    for (const char* flag : {"param_routing", "diff_routing", "soft_routing"})
      if (c.flag(flag))
        refuse(std::string("option '") + flag +
               "' = true is not implemented (only the hard, parameter-free, non-differentiable "
               "routing of BiFormer-T)");
    n_win_ = c.int_option("n_win");
    topk_ = c.int_option("topk");
    if (topk_ > n_win_ * n_win_)
      refuse("topk " + std::to_string(topk_) + " exceeds the " + std::to_string(n_win_ * n_win_) +
             " regions of n_win " + std::to_string(n_win_));
    qk_ = c.int_option("qk_dim") > 0 ? c.int_option("qk_dim") : c.dim;
    if (qk_ % c.heads != 0)
      refuse("qk_dim " + std::to_string(qk_) + " must be divisible by heads " +
             std::to_string(c.heads));
    scale_ = c.option("qk_scale") > 0 ? c.option("qk_scale") : std::pow(double(qk_), -0.5);
    const int64_t side = c.int_option("side_dwconv");
    if (side % 2 == 0)
      refuse("option 'side_dwconv' = " + std::to_string(side) +
             " must be odd (lepe pads side//2 to keep the grid)");
    auto_pad_ = c.flag("auto_pad");
    qkv_ = register_module("qkv", std::make_shared<BiformerQkvLinear>(c.dim, qk_))->qkv;
    wo_ = add_layer<LinearLayer>(*this, "wo", c.dim, c.dim, true);
    Conv2dLayer::Shape s;
    s.in = s.out = s.groups = c.dim;
    s.kernel = {side, side};
    s.padding = {side / 2, side / 2};
    lepe_ = add_layer<Conv2dLayer>(*this, "lepe", s);
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), dim = x.size(2), heads = config().heads;
    const int64_t height = layout.height, width = layout.width, s_win = n_win_;
    if (!auto_pad_ && (height % s_win != 0 || width % s_win != 0))
      throw AttentionError("biformer: n_win " + std::to_string(s_win) +
                           " must divide the grid's height and width (or set auto_pad), but "
                           "the layer has " +
                           layout.describe());
    // Zero tokens bottom/right, before the projections (they get the biases), as the reference.
    const int64_t pad_b = (s_win - height % s_win) % s_win, pad_r = (s_win - width % s_win) % s_win;
    at::Tensor grid = x.reshape({batch, height, width, dim});
    if (pad_b > 0 || pad_r > 0) grid = at::constant_pad_nd(grid, {0, 0, 0, pad_r, 0, pad_b});
    const int64_t hp = height + pad_b, wp = width + pad_r, rh = hp / s_win, rw = wp / s_win;
    const int64_t regions = s_win * s_win, w2 = rh * rw, np = hp * wp;
    const at::Tensor qkv = (*qkv_)(grid);  // (B, Hp, Wp, 2qk + C)
    const at::Tensor q = qkv.slice(-1, 0, qk_), k = qkv.slice(-1, qk_, 2 * qk_),
                     v = qkv.slice(-1, 2 * qk_);
    // (B, Hp, Wp, c) -> (B, S², rh·rw, c): regions row-major, pixels row-major inside.
    const auto to_regions = [&](const at::Tensor& t) {
      return t.reshape({batch, s_win, rh, s_win, rw, t.size(-1)})
          .permute({0, 1, 3, 2, 4, 5})
          .reshape({batch, regions, w2, t.size(-1)});
    };
    const at::Tensor q_reg = to_regions(q), k_reg = to_regions(k), v_reg = to_regions(v);

    // Router: region means, scaled logits, top-k (no gradient: hard, non-differentiable).
    at::Tensor logits;
    {
      const runtime::MacGroupScope label("scores");  // for the complexity report
      logits =
          at::matmul(q_reg.mean(2).detach() * scale_, k_reg.mean(2).detach().transpose(-2, -1));
    }
    const auto top = logits.topk(topk_, -1, /*largest=*/true, /*sorted=*/true);
    const at::Tensor route_idx = std::get<1>(top), route_weight = at::softmax(std::get<0>(top), -1);

    // Each query region's keys/values: its routed regions' pixels in routing order.
    const at::Tensor flat_idx =
        (route_idx + at::arange(batch, route_idx.options()).view({batch, 1, 1}) * regions)
            .reshape({-1});
    const auto gather = [&](const at::Tensor& t) {
      return t.reshape({batch * regions, w2, t.size(-1)})
          .index_select(0, flat_idx)
          .reshape({batch, regions, topk_ * w2, t.size(-1)});
    };
    const auto per_head = [&](const at::Tensor& t) {  // (B, S², L, h·c) -> (B, S², h, L, c)
      return t.reshape({batch, regions, t.size(2), heads, t.size(-1) / heads})
          .permute({0, 1, 3, 2, 4});
    };
    at::Tensor scores;
    {
      const runtime::MacGroupScope label("scores");
      scores = at::matmul(per_head(q_reg) * scale_, per_head(gather(k_reg)).transpose(-2, -1));
    }
    const at::Tensor attn = at::softmax(scores, -1);
    const at::Tensor mixed = at::matmul(attn, per_head(gather(v_reg)));  // (B, S², h, w², C/h)
    // Back to the padded grid, then cropped to the layer's tokens.
    const auto crop = [&](const at::Tensor& g) {  // (B, Hp, Wp, c) -> (B, N, c)
      return g.slice(1, 0, height).slice(2, 0, width).reshape({batch, height * width, g.size(-1)});
    };
    at::Tensor out = crop(mixed.permute({0, 1, 3, 2, 4})
                              .reshape({batch, s_win, s_win, rh, rw, dim})
                              .permute({0, 1, 3, 2, 4, 5})
                              .reshape({batch, hp, wp, dim}));
    const at::Tensor lepe = (*lepe_)(v.permute({0, 3, 1, 2}));  // (B, C, Hp, Wp)

    if (request) {
      auto trace = std::make_shared<BiformerTrace>();
      init_trace(*trace, x, layout, *request);
      HeadGroup g;
      g.name = "all";
      g.num_heads = heads;
      g.keys = {0, hp, wp, 1};
      g.query_grid_w = wp;
      g.q = trace->keep(split_heads(q.reshape({batch, np, qk_}), heads));
      g.k = trace->keep(split_heads(k.reshape({batch, np, qk_}), heads));
      g.v = trace->keep(split_heads(v.reshape({batch, np, dim}), heads));
      trace->groups.push_back(std::move(g));
      trace->scale = scale_;
      const auto opts = route_idx.options();
      trace->region_of_row = ((at::arange(hp, opts).div(rh, "floor") * s_win).unsqueeze(1) +
                              at::arange(wp, opts).div(rw, "floor").unsqueeze(0))
                                 .reshape({-1});
      trace->region_keys = at::arange(np, opts)
                               .reshape({s_win, rh, s_win, rw})
                               .permute({0, 2, 1, 3})
                               .reshape({regions, w2});
      trace->window = rh;
      trace->window_w = rw;
      trace->internals["biformer.route_idx"] = route_idx;
      trace->internals["biformer.route_weight"] = trace->keep(route_weight);
      trace->internals["biformer.lepe"] = trace->keep(lepe);
      trace->internals["biformer.region"] = at::tensor({rh, rw}, at::kLong).to(opts.device());
      if (wants_explicit(request)) out = merge_heads(explicit_mix(*trace));
      trace->head_outputs = trace->keep(split_heads(out, heads));
      request->trace = std::move(trace);
    }
    return (*wo_)(out + crop(lepe.permute({0, 2, 3, 1})));
  }

 private:
  std::shared_ptr<LinearLayer> qkv_, wo_;
  std::shared_ptr<Conv2dLayer> lepe_;
  int64_t n_win_ = 7, topk_ = 4, qk_ = 0;
  double scale_ = 1.0;
  bool auto_pad_ = true;
};

}  // namespace

MechanismInfo biformer_mechanism() {
  MechanismInfo info;
  info.name = "biformer";
  info.summary =
      "BiFormer bi-level routing attention: top-k region routing, token softmax over the "
      "routed regions, LePE";
  info.needs_grid = true;
  info.capabilities = {capability::kLocalWindows, capability::kRoutedRegions};
  // Each padded-grid query scores topk·rh·rw keys.
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& l) {
    const int64_t s = static_cast<int64_t>(c.option("n_win"));
    const double hp = double((l.height + s - 1) / s * s), wp = double((l.width + s - 1) / s * s);
    return double(c.heads) * hp * wp * c.option("topk") * (hp / double(s)) * (wp / double(s));
  };
  info.options = {
      {"n_win", OptionSpec::Kind::Integer, 7, 1, 1e6, "regions per side S (S² regions)"},
      {"topk", OptionSpec::Kind::Integer, 4, 1, 1e6, "regions each region routes to (≤ S²)"},
      {"qk_dim", OptionSpec::Kind::Integer, 0, 0, 1e6, "width of q and k (0: C)"},
      {"qk_scale", OptionSpec::Kind::Real, 0, 0, 1e6,
       "scale of both levels' logits (0: qk_dim^-0.5, the whole qk width)"},
      {"side_dwconv", OptionSpec::Kind::Integer, 3, 1, 1e6, "odd side of the LePE depthwise conv"},
      {"auto_pad", OptionSpec::Kind::Flag, 1, 0, 1,
       "pad the grid bottom/right to multiples of n_win and crop (the reference's default: 0)"},
      {"kv_downsample_mode", OptionSpec::Kind::Choice, 0, 0, 6,
       "kv pooling per region (only 'identity' is implemented)", kBiformerKvModes},
      {"kv_per_win", OptionSpec::Kind::Integer, 4, -1, 1e6,
       "ada_*pool modes' keys per region side (unused by 'identity')"},
      {"kv_downsample_ratio", OptionSpec::Kind::Integer, 4, -1, 1e6,
       "max/avgpool modes' ratio (unused by 'identity')"},
      {"kv_downsample_kernel", OptionSpec::Kind::Integer, 0, -1, 1e6,
       "stored by the reference, unused by every implemented mode"},
      {"param_attention",
       OptionSpec::Kind::Choice,
       0,
       0,
       1,
       "projections (only 'qkvo' is implemented)",
       {"qkvo", "qkv"}},
      {"param_routing", OptionSpec::Kind::Flag, 0, 0, 1, "learned router embedding (refused)"},
      {"diff_routing", OptionSpec::Kind::Flag, 0, 0, 1, "differentiable routing (refused)"},
      {"soft_routing", OptionSpec::Kind::Flag, 0, 0, 1, "kv scaled by route weights (refused)"},
  };
  ReferenceModule module;  // BiLevelRoutingAttention on the config's (B, H, W, C) input
  module.arch = "biformer_bra";
  module.fixture = "biformer_attn";
  for (const char* o :
       {"n_win", "topk", "qk_dim", "qk_scale", "side_dwconv", "auto_pad", "kv_downsample_mode",
        "kv_per_win", "kv_downsample_ratio", "kv_downsample_kernel", "param_attention",
        "param_routing", "diff_routing", "soft_routing"})
    module.args.push_back({o, o});
  module.grid = true;
  module.channels_last = true;
  // A config without auto_pad gets attnlab's default (pad): the same output wherever the
  // reference's default (no pad) runs; it only also runs the grids the reference refuses.
  info.reference_module = module;
  // The zoo's 14×14 tokens are BiFormer-T's third stage at 224: 7×7 regions of 2×2 pixels,
  // each query region routed to 16 of them, 5×5 LePE.
  info.small_model_options = {{"topk", 16}, {"side_dwconv", 5}};
  info.create = [](const MechanismConfig& c) { return std::make_shared<BiformerAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
