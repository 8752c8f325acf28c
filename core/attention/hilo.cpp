// HiLo attention (LITv2, SPEC §1.5): l Lo-Fi heads attend from every position to an
// s×s average-pooled copy of the map; h − l Hi-Fi heads attend inside non-overlapping s×s
// windows. Output channels are [Hi-Fi | Lo-Fi]; there is no shared output projection.
//   parameters  Lo-Fi (only when l > 0): l_q: Linear(C, l·d); l_kv: Linear(C, 2·l·d) rows
//               [k | v]; l_proj: Linear(l·d, l·d). Hi-Fi (only when h − l > 0):
//               h_qkv: Linear(C, 3·(h−l)·d) rows [q | k | v]; h_proj: Linear((h−l)·d, (h−l)·d).
//               All head-major; qkv_bias applies to l_q, l_kv, h_qkv; projections have bias.
//   options     window s (default 2); alpha (default 0.9); qkv_bias (default 1);
//               lofi_heads (default -1: l = floor(h·alpha), as the reference's int(h·alpha);
//               a value >= 0 overrides alpha, so a loader can set l from the l_q shape).
//               window 1 makes every head Lo-Fi (l = h); an explicit lofi_heads != h is then
//               refused rather than silently ignored.
//   grid        pure grid only. H, W not multiples of s: zero-pad right/bottom (only then),
//               run both branches on the padded Hp×Wp map, crop [:H, :W] from each branch.
//   trace       groups "hifi" (heads 0..h−l−1, listed first as its channels come first) and
//               "lofi" (heads h−l..h−1); a group with no heads is left out. Both have their
//               queries on the padded grid (query_grid_w = Wp): q (B, heads, Hp·Wp, d),
//               row-major, as projected (not scaled).
//               hifi: keys = the padded grid {0, Hp, Wp, cell 1}; k, v (B, h−l, Hp·Wp, d).
//               lofi: keys = the pooled grid {0, Hp/s, Wp/s, cell s}; k, v (B, l, M, d),
//               M = (Hp/s)(Wp/s).
//   internals   "hilo.hifi_out" (B, H, W, (h−l)·d): the Hi-Fi branch after h_proj and crop;
//               "hilo.lofi_out" (B, H, W, l·d): the Lo-Fi branch after l_proj and crop (the
//               tensors the spectrum analysis transforms); "hilo.pooled" (B, M, C): the
//               pooled input P that l_kv projects (the padded map itself when s = 1). Each
//               exists only when its branch has heads.
//   rows        Hi-Fi: softmax(q_i·kᵀ·d^-0.5) over the s² keys of the query's window (padding
//               positions included), zero elsewhere, so a row sums to 1 over padded keys.
//               Lo-Fi: softmax(q_i·kᵀ·d^-0.5) over the M pooled keys.
//   explicit    per branch, proj(merge(rows·v)) on the H×W tokens (v over the padded or
//               pooled keys), then [Hi-Fi | Lo-Fi] as the forward.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/attention/capabilities.h"
#include "core/attention/fused_attention.h"
#include "core/attention/head_outputs.h"
#include "core/attention/kernels.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

// l: the number of Lo-Fi heads the config asks for (after checking it is possible).
int64_t lofi_head_count(const MechanismConfig& c) {
  const int64_t heads = c.heads;
  const int64_t asked = c.int_option("lofi_heads");
  if (asked > heads)
    throw AttentionError("hilo: lofi_heads = " + std::to_string(asked) + " exceeds the " +
                         std::to_string(heads) + " heads");
  if (c.int_option("window") == 1) {
    if (asked >= 0 && asked != heads)
      throw AttentionError("hilo: window 1 makes all " + std::to_string(heads) +
                           " heads Lo-Fi, but lofi_heads = " + std::to_string(asked));
    return heads;
  }
  if (asked >= 0) return asked;
  return static_cast<int64_t>(std::floor(static_cast<double>(heads) * c.option("alpha")));
}

class HiLoTrace : public AttentionTrace {
 public:
  double scale = 1.0;  // the window side is the base class's `window`

  // Each branch's output on the grid, (B, H, W, C_branch), when the branch ran.
  NamedTensors branch_outputs() const override {
    NamedTensors out;
    for (const char* branch : {"hifi", "lofi"}) {
      const std::string name = std::string("hilo.") + branch + "_out";
      if (has_internal(name)) out.emplace_back(branch, internal(name));
    }
    return out;
  }
  // The reference implementation's hooks record the two branch outputs.
  NamedTensors reference_outputs() const override { return branch_outputs(); }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    at::Tensor q = g.q[b][h].index_select(0, q_rows);
    if (g.name == "lofi") return softmax_scores(q, g.k[b][h], scale);
    return window_rows(q, q_rows, g.k[b][h], g.keys.key_w);
  }

 private:
  // Only the s² in-window scores per query are computed, then scattered into (n, Hp·Wp).
  at::Tensor window_rows(const at::Tensor& q, const at::Tensor& q_rows, const at::Tensor& k,
                         int64_t padded_w) const {
    const int64_t s = window, n = q.size(0);
    at::Tensor top = q_rows.div(padded_w, "floor").div(s, "floor") * s;
    at::Tensor left = q_rows.remainder(padded_w).div(s, "floor") * s;
    at::Tensor off = at::arange(s, q_rows.options());
    at::Tensor keys = ((top.view({-1, 1, 1}) + off.view({1, s, 1})) * padded_w +
                       left.view({-1, 1, 1}) + off.view({1, 1, s}))
                          .reshape({n, s * s});
    at::Tensor k_win = k.index_select(0, keys.reshape({-1})).view({n, s * s, k.size(1)});
    at::Tensor probs = at::softmax(at::matmul(k_win, q.unsqueeze(-1)).squeeze(-1) * scale, -1);
    return at::zeros({n, k.size(0)}, q.options()).scatter_(1, keys, probs);
  }
};

class HiLoAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    // The trace numbers the Hi-Fi heads first, then the Lo-Fi heads; each branch merges
    // its own heads head-major into its own projection.
    const int64_t d = config().head_dim();
    std::vector<HeadColumns> out = head_major_columns("h_proj.weight", hifi_heads_, d);
    for (const auto& c : head_major_columns("l_proj.weight", lofi_heads_, d)) out.push_back(c);
    return out;
  }
  explicit HiLoAttention(const MechanismConfig& c) : AttentionMechanism("hilo", c) {
    window_ = c.int_option("window");
    lofi_heads_ = lofi_head_count(c);
    hifi_heads_ = c.heads - lofi_heads_;
    const int64_t d = c.head_dim(), l_dim = lofi_heads_ * d, h_dim = hifi_heads_ * d;
    const bool bias = c.flag("qkv_bias");
    // Registered in the reference's order; a branch with no heads has no modules.
    if (lofi_heads_ > 0) {
      l_q_ = add_layer<LinearLayer>(*this, "l_q", c.dim, l_dim, bias);
      l_kv_ = add_layer<LinearLayer>(*this, "l_kv", c.dim, 2 * l_dim, bias);
      l_proj_ = add_layer<LinearLayer>(*this, "l_proj", l_dim, l_dim, true);
    }
    if (hifi_heads_ > 0) {
      h_qkv_ = add_layer<LinearLayer>(*this, "h_qkv", c.dim, 3 * h_dim, bias);
      h_proj_ = add_layer<LinearLayer>(*this, "h_proj", h_dim, h_dim, true);
    }
    scale_ = 1.0 / std::sqrt(static_cast<double>(d));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), height = layout.height, width = layout.width;
    const int64_t s = window_;
    const int64_t padded_h = (height + s - 1) / s * s, padded_w = (width + s - 1) / s * s;
    const bool padded = padded_h != height || padded_w != width;
    at::Tensor grid = x.reshape({batch, height, width, x.size(2)});
    if (padded) grid = at::constant_pad_nd(grid, {0, 0, 0, padded_w - width, 0, padded_h - height});

    std::shared_ptr<HiLoTrace> trace;
    if (request) {
      trace = std::make_shared<HiLoTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      trace->window = s;
    }
    auto crop = [&](const at::Tensor& t) {
      return padded ? t.slice(1, 0, height).slice(2, 0, width) : t;
    };
    // The explicit form computes the branches from the matrices (below), so the branches
    // then only record their q, k, v: mixing them as well would be thrown away.
    const bool mix = !wants_explicit(request);
    std::vector<at::Tensor> branches;  // [Hi-Fi][Lo-Fi], each (B, H, W, heads·d)
    if (hifi_heads_ > 0) branches.push_back(hifi(grid, trace.get(), mix));
    if (lofi_heads_ > 0) branches.push_back(lofi(grid, trace.get(), mix));
    if (mix)
      for (auto& b : branches) b = crop(b);
    else
      branches = explicit_branches(*trace, batch, height, width);
    if (trace) {
      if (hifi_heads_ > 0) trace->internals["hilo.hifi_out"] = trace->keep(branches.front());
      if (lofi_heads_ > 0) trace->internals["hilo.lofi_out"] = trace->keep(branches.back());
      request->trace = std::move(trace);
    }
    at::Tensor out = branches.size() == 1 ? branches[0] : at::cat(branches, -1);
    return out.reshape({batch, height * width, x.size(2)});
  }

 private:
  // The explicit form: each branch's rows·v on the layer's (cropped) tokens, through the
  // branch's own projection, as the ordinary forward ends.
  std::vector<at::Tensor> explicit_branches(HiLoTrace& trace, int64_t batch, int64_t height,
                                            int64_t width) const {
    const at::Tensor mixed = explicit_mix(trace);  // (B, h, N, d), Hi-Fi heads first
    auto branch = [&](int64_t first, int64_t count, const LinearLayer& proj) {
      return proj(merge_heads(mixed.slice(1, first, first + count))
                      .reshape({batch, height, width, count * config().head_dim()}));
    };
    std::vector<at::Tensor> out;
    if (hifi_heads_ > 0) out.push_back(branch(0, hifi_heads_, *h_proj_));
    if (lofi_heads_ > 0) out.push_back(branch(hifi_heads_, lofi_heads_, *l_proj_));
    return out;
  }

  // Hi-Fi on the padded map (B, Hp, Wp, C) -> (B, Hp, Wp, (h−l)·d) after h_proj; without
  // `mix`, only the trace's group (undefined result).
  at::Tensor hifi(const at::Tensor& xp, HiLoTrace* trace, bool mix) const {
    const int64_t batch = xp.size(0), hp = xp.size(1), wp = xp.size(2), s = window_;
    const int64_t gh = hp / s, gw = wp / s, n = hifi_heads_, d = config().head_dim();
    at::Tensor qkv = (*h_qkv_)(xp);  // (B, Hp, Wp, 3·n·d), channels [part][head][d]
    // Windows: (3, B, n, G, s², d), window g = gy·gw + gx, in-window token i·s + j.
    at::Tensor win = qkv.reshape({batch, gh, s, gw, s, 3, n, d})
                         .permute({5, 0, 6, 1, 3, 2, 4, 7})
                         .reshape({3, batch, n, gh * gw, s * s, d});
    at::Tensor out;
    if (mix)  // tokens put back: (B, n, gh, gw, s, s, d) -> (B, Hp, Wp, n·d), head-major
      out = softmax_attention(win[0], win[1], win[2], scale_)
                .reshape({batch, n, gh, gw, s, s, d})
                .permute({0, 2, 4, 3, 5, 1, 6})
                .reshape({batch, hp, wp, n * d});
    if (trace) {
      // The same projections in row-major order over the padded grid.
      at::Tensor flat = qkv.reshape({batch, hp * wp, 3, n, d}).permute({2, 0, 3, 1, 4});
      HeadGroup g;
      g.name = "hifi";
      g.first_head = 0;
      g.num_heads = n;
      g.keys = {0, hp, wp, 1};
      g.query_grid_w = wp;
      g.q = trace->keep(flat[0]);
      g.k = trace->keep(flat[1]);
      g.v = trace->keep(flat[2]);
      trace->groups.push_back(std::move(g));
    }
    return mix ? (*h_proj_)(out) : at::Tensor();
  }

  // Lo-Fi on the padded map (B, Hp, Wp, C) -> (B, Hp, Wp, l·d) after l_proj; without `mix`,
  // only the trace's group (undefined result).
  at::Tensor lofi(const at::Tensor& xp, HiLoTrace* trace, bool mix) const {
    const int64_t batch = xp.size(0), hp = xp.size(1), wp = xp.size(2), s = window_;
    const int64_t n = lofi_heads_;
    at::Tensor q = split_heads((*l_q_)(xp).reshape({batch, hp * wp, -1}), n);
    // P = AvgPool(s, stride s) over the padded map (zeros included), flattened row-major.
    at::Tensor pooled =
        s > 1 ? at::avg_pool2d(xp.permute({0, 3, 1, 2}), {s, s}, {s, s}).flatten(2).transpose(1, 2)
              : xp.reshape({batch, hp * wp, xp.size(3)});
    auto kv = (*l_kv_)(pooled).chunk(2, -1);
    at::Tensor k = split_heads(kv[0], n), v = split_heads(kv[1], n);
    const at::Tensor out = mix ? merge_heads(softmax_attention(q, k, v, scale_)) : at::Tensor();
    if (trace) {
      HeadGroup g;
      g.name = "lofi";
      g.first_head = hifi_heads_;
      g.num_heads = n;
      g.keys = {0, hp / s, wp / s, s};
      g.query_grid_w = wp;
      g.q = trace->keep(q);
      g.k = trace->keep(k);
      g.v = trace->keep(v);
      trace->groups.push_back(std::move(g));
      trace->internals["hilo.pooled"] = trace->keep(pooled);
    }
    return mix ? (*l_proj_)(out.reshape({batch, hp, wp, -1})) : at::Tensor();
  }

  std::shared_ptr<LinearLayer> l_q_, l_kv_, l_proj_, h_qkv_, h_proj_;
  int64_t window_ = 2, lofi_heads_ = 0, hifi_heads_ = 0;
  double scale_ = 1.0;
};

}  // namespace

MechanismInfo hilo_mechanism() {
  MechanismInfo info;
  info.name = "hilo";
  info.summary = "HiLo attention (LITv2): windowed Hi-Fi heads + pooled-key Lo-Fi heads";
  info.needs_grid = true;
  info.capabilities = {capability::kBranchOutputs, capability::kLocalWindows};
  info.options = {
      {"window", OptionSpec::Kind::Integer, 2, 1, 1e9, "window / pooling size s"},
      {"alpha", OptionSpec::Kind::Real, 0.9, 0, 1, "share of Lo-Fi heads: l = floor(h·alpha)"},
      {"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on l_q, l_kv and h_qkv"},
      {"lofi_heads", OptionSpec::Kind::Integer, -1, -1, 1e9,
       "Lo-Fi head count l, overriding alpha (-1: from alpha)"},
  };
  // An even split of heads keeps both branches on 2-head models (0.9 would leave Hi-Fi
  // none); the window, the default 2, is written out so the zoo's configs state it.
  info.small_model_options = {{"window", 2}, {"alpha", 0.5}};
  // The reference HiLo module on the config's H x W grid. The Lo-Fi head count is read
  // from the weights (l_q's rows / head dim; none without l_q), so α-ablation modules
  // load whatever alpha their config claims.
  ReferenceModule module;
  module.fixture = "hilo_padded";
  module.args = {{"qkv_bias", "qkv_bias"}, {"alpha", "alpha"}, {"window_size", "window"}};
  module.grid = true;
  module.fit_to_weights = [](MechanismConfig& c, const std::map<std::string, at::Tensor>& w) {
    const auto lq = w.find("l_q.weight");
    c.options["lofi_heads"] =
        lq == w.end()
            ? 0.0
            : static_cast<double>(lq->second.size(0) / std::max<int64_t>(1, c.head_dim()));
  };
  info.reference_module = module;
  // Lo-Fi heads: every query against the s×s-pooled keys; Hi-Fi heads: s² keys per query.
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& l) {
    const int64_t s = c.int_option("window"), given = c.int_option("lofi_heads");
    const int64_t lofi =
        given >= 0 ? std::min(given, c.heads) : static_cast<int64_t>(c.heads * c.option("alpha"));
    const double n = static_cast<double>(l.tokens());
    const double pooled = static_cast<double>(((l.height + s - 1) / s) * ((l.width + s - 1) / s));
    return n * (static_cast<double>(lofi) * pooled + static_cast<double>(c.heads - lofi) * s * s);
  };
  info.create = [](const MechanismConfig& c) { return std::make_shared<HiLoAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
