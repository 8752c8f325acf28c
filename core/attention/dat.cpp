// Deformable attention (DAT, Xia et al. CVPR 2022 / DAT++; SPEC_COMPARISON "DAT deformable
// attention"), as LeapLabTHU/DAT's DAttentionBaseline computes it. Its module takes NCHW
// images; here the layer's (B, N, C) grid tokens are those images' pixels, row-major.
//   parameters  proj_q, proj_k, proj_v, proj_out: 1×1 Conv2d(C, C, bias) (weights (C, C, 1, 1),
//               applied per token); conv_offset.0: depthwise Conv2d(Cg, Cg, ksize, stride, pad
//               ksize//2, or 0 when ksize = stride, bias); conv_offset.1.norm: LayerNorm(Cg)
//               over channels; conv_offset.3: Conv2d(Cg, 2, 1, no bias); with use_pe:
//               rpe_table (h, 2·q_h − 1, 2·q_w − 1). Cg = C/G, G = n_groups, h_g = h/G.
//   options     n_groups G (1; divides the heads), stride (1), ksize (3), offset_range_factor f
//               (−1, DAT++: raw offsets, positions clamped to [−1, 1]; f ≥ 0: tanh offsets
//               times f/(Hk−1), f/(Wk−1)), use_pe (1) with q_h, q_w (7): the table's size. The
//               reference sizes it by its stage's grid but samples it at normalised
//               displacements, so any grid runs with any table (the reference's own rule,
//               exact when q_h, q_w are its q_size). ln_eps (1e-5). dwc_pe, fixed_pe, log_cpb,
//               no_off: other biases / no offsets, refused (not implemented).
//   forward     q = proj_q(x); per group, conv_offset(q) -> (dy, dx) on Hk×Wk; pos = reference
//               + offsets (y, x) in [−1, 1] units (align_corners True); x's group channels
//               bilinearly sampled at pos (zeros outside; dat_sample, grid_sampler's rule
//               as gathers) -> Ns = Hk·Wk samples; k, v =
//               proj_k, proj_v of the samples. attn = softmax_Ns(d^-½·q·kᵀ + bias), bias =
//               the head's table sampled at (q_grid − pos)/2; out = proj_out(attn·v).
//   grid        pure grid only; Hk, Wk ≥ 2 (the reference points divide by Hk − 1) and, with
//               use_pe, H, W ≥ 2 (the query grid divides by H − 1).
//   trace       one group "all" over the layer's tokens: q = proj_q(x), k = proj_k(x), v =
//               proj_v(x) per token (B, h, N, d). Internals:
//                 dat.offsets        (B, G, Hk, Wk, 2) offsets (y, x), after tanh/scaling
//                 dat.reference      (B, G, Hk, Wk, 2) reference points (y, x)
//                 dat.pos            (B, G, Hk, Wk, 2) sampling positions (y, x)
//                 dat.attn           (B·h, N, Ns) the softmax over the samples
//                 dat.bias           (B·h, N, Ns) the sampled rpe bias (use_pe)
//                 dat.k_sampled, dat.v_sampled  (B, h, Ns, d) what the softmax mixed
//                 dat.sample_index   (B, G, Ns, 4) int64 tokens at each sample's 4 corners
//                 dat.sample_weight  (B, G, Ns, 4) their bilinear weights (0 off the grid)
//                 dat.value_rest     (B, h, N, d) attn·(v_sampled − S_g·v): see rows
//   rows        sampling is linear: head h of group g reads x at group g's positions through
//               S_g (Ns × N, 4 bilinear weights per sample), so its row over the tokens is
//               attn_h·S_g (≥ 0, sums to the in-grid sampling mass, 1 when f < 0). The head's
//               output is rows·v + dat.value_rest, where value_rest = attn·(v_sampled −
//               S_g·v) holds proj_v's bias times the mass lost off the grid and, for G > 1,
//               the other groups' channels, which proj_v mixes in but which were sampled at
//               their own groups' positions. It is 0 for G = 1 with clamped offsets.
//   products    A·x = attn·(S_g x), Aᵀ·y = S_gᵀ(attnᵀ y): O(N·Ns·c), no N×N; map factors
//               attn and S_gᵀ (rank ≤ Ns).
//   explicit    out = proj_out(merge(rows·v + value_rest)).
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/capabilities.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"
#include "core/runtime/mac_counter.h"

namespace attnlab::attention {
namespace {

// (B·G, Ns, 4) corner tokens and bilinear weights of positions pos (B·G, Ns, 2) in (y, x)
// on an H×W grid, as grid_sampler's bilinear mode with align_corners True and zero padding
// weighs them (pixel = (g + 1)/2·(size − 1)); corners off the grid get weight 0. The pixel
// coordinates are computed in fp32 at least (bf16/fp16 promoted, as grid_sampler does its
// coordinates in fp32 for them) and the token indices in integers: bf16 holds integers
// exactly only up to 256, so a bf16 index y·W + x rounded past the last token (the H200 run
// of 2026-11-30: a device-side assert at 112×112) or onto a neighbour's.
std::pair<at::Tensor, at::Tensor> dat_corners(const at::Tensor& pos, int64_t height,
                                              int64_t width) {
  const bool reduced = pos.scalar_type() == at::kHalf || pos.scalar_type() == at::kBFloat16;
  const at::Tensor p = reduced ? pos.to(at::kFloat) : pos;  // float64 stays float64
  const at::Tensor iy = (p.select(-1, 0) + 1) / 2 * double(height - 1);
  const at::Tensor ix = (p.select(-1, 1) + 1) / 2 * double(width - 1);
  const at::Tensor y0 = iy.floor(), x0 = ix.floor();
  const at::Tensor dy = iy - y0, dx = ix - x0;
  std::vector<at::Tensor> index, weight;
  for (int64_t cy : {0, 1})
    for (int64_t cx : {0, 1}) {
      const at::Tensor y = y0 + double(cy), x = x0 + double(cx);
      const at::Tensor inside =
          (y >= 0) & (y <= double(height - 1)) & (x >= 0) & (x <= double(width - 1));
      const at::Tensor w = (cy ? dy : 1 - dy) * (cx ? dx : 1 - dx);
      weight.push_back((w * inside.to(w.scalar_type())).to(pos.scalar_type()));
      index.push_back(y.clamp(0, double(height - 1)).to(at::kLong) * width +
                      x.clamp(0, double(width - 1)).to(at::kLong));
    }
  return {at::stack(index, -1), at::stack(weight, -1)};
}

// Bilinear sampling of image (M, c, H, W) at pos (M, P, 2) in (y, x) -> (M, c, P): what
// grid_sampler_2d (bilinear, zeros, align_corners True) computes, written with gather so it
// also runs where that op has no kernel (LibTorch 1.13's meta device) and shares its corner
// weights with the trace's rows.
at::Tensor dat_sample(const at::Tensor& image, const at::Tensor& pos) {
  const int64_t m = image.size(0), c = image.size(1), p = pos.size(1);
  const auto corners = dat_corners(pos, image.size(2), image.size(3));
  const at::Tensor taps =
      image.reshape({m, c, -1})
          .gather(2, corners.first.reshape({m, 1, p * 4}).expand({m, c, p * 4}));
  return (taps.view({m, c, p, 4}) * corners.second.unsqueeze(1)).sum(-1);
}

class DatTrace : public AttentionTrace, public MapFactorSource {
 public:
  int64_t heads_per_group = 1;

  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const at::Tensor idx = sample_index(b, head), w = sample_weight(b, head);
    const int64_t ns = idx.size(0), n = layout.tokens();
    const at::Tensor flat = (at::arange(ns, idx.options()) * n).unsqueeze(1) + idx;
    const at::Tensor s = at::zeros({ns * n}, w.options()).index_add(0, flat.flatten(), w.flatten());
    return MapFactors{attn(b, head), s.view({ns, n}).t()};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup&, int64_t h,
                          const at::Tensor& q_rows) const override {
    const at::Tensor a = attn(b, h).index_select(0, q_rows);  // (n, Ns)
    const at::Tensor idx = sample_index(b, h), w = sample_weight(b, h);
    const at::Tensor spread = (a.unsqueeze(-1) * w).reshape({a.size(0), -1});
    return at::zeros({a.size(0), layout.tokens()}, a.options()).index_add(1, idx.flatten(), spread);
  }

  at::Tensor compute_apply(int64_t b, const HeadGroup&, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor a = attn(b, h), idx = sample_index(b, h), w = sample_weight(b, h);
    const int64_t ns = idx.size(0), c = x.size(1);
    if (transposed) {
      const at::Tensor z = at::matmul(a.t(), x);  // (Ns, c) on the samples
      return at::zeros({layout.tokens(), c}, x.options())
          .index_add(0, idx.flatten(), (z.unsqueeze(1) * w.unsqueeze(-1)).reshape({ns * 4, c}));
    }
    const at::Tensor sampled =
        (x.index_select(0, idx.flatten()).view({ns, 4, c}) * w.unsqueeze(-1)).sum(1);
    return at::matmul(a, sampled);
  }

 private:
  at::Tensor attn(int64_t b, int64_t h) const { return internal("dat.attn")[b * heads + h]; }
  at::Tensor sample_index(int64_t b, int64_t h) const {
    return internal("dat.sample_index")[b][h / heads_per_group];
  }
  at::Tensor sample_weight(int64_t b, int64_t h) const {
    return internal("dat.sample_weight")[b][h / heads_per_group];
  }
};

class DatAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj_out.weight", config().heads, config().head_dim());
  }
  explicit DatAttention(const MechanismConfig& c) : AttentionMechanism("dat", c) {
    for (const char* mode : {"dwc_pe", "fixed_pe", "log_cpb", "no_off"})
      if (c.flag(mode))
        throw AttentionError(std::string("dat: option '") + mode +
                             "' = 1 is not implemented (attnlab has the sampled rpe_table bias "
                             "and learned offsets only); refused rather than computing another "
                             "layer");
    groups_ = c.int_option("n_groups");
    if (c.heads % groups_ != 0)
      throw AttentionError("dat: n_groups = " + std::to_string(groups_) +
                           " must divide the heads (" + std::to_string(c.heads) + ")");
    stride_ = c.int_option("stride");
    ksize_ = c.int_option("ksize");
    range_ = c.option("offset_range_factor");
    use_pe_ = c.flag("use_pe");
    const int64_t dim = c.dim, cg = dim / groups_;
    for (const char* name : {"proj_q", "proj_k", "proj_v", "proj_out"}) {
      Conv2dLayer::Shape s;
      s.in = s.out = dim;
      proj_.push_back(add_layer<Conv2dLayer>(*this, name, s));
    }
    auto offset = register_module("conv_offset", std::make_shared<torch::nn::Module>());
    Conv2dLayer::Shape s;
    s.in = s.out = s.groups = cg;
    s.kernel = {ksize_, ksize_};
    s.stride = {stride_, stride_};
    const int64_t pad = ksize_ == stride_ ? 0 : ksize_ / 2;
    s.padding = {pad, pad};
    offset_conv_ = add_layer<Conv2dLayer>(*offset, "0", s);
    auto proxy = offset->register_module("1", std::make_shared<torch::nn::Module>());
    offset_norm_ = add_layer<LayerNormLayer>(*proxy, "norm", cg, c.option("ln_eps"));
    Conv2dLayer::Shape o;
    o.in = cg;
    o.out = 2;
    o.bias = false;
    offset_out_ = add_layer<Conv2dLayer>(*offset, "3", o);
    if (use_pe_)
      table_ = register_parameter("rpe_table", at::zeros({c.heads, 2 * c.int_option("q_h") - 1,
                                                          2 * c.int_option("q_w") - 1}));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), n_tok = x.size(1), dim = x.size(2);
    const int64_t height = layout.height, width = layout.width, heads = config().heads;
    const int64_t groups = groups_, cg = dim / groups, d = dim / heads;
    const auto linear = [&](size_t i, const at::Tensor& t) {  // a 1×1 conv on tokens
      return at::linear(t, proj_[i]->weight.flatten(1), proj_[i]->bias);
    };
    const at::Tensor q = linear(0, x);                 // (B, N, C)
    const auto as_groups = [&](const at::Tensor& t) {  // (B, N, C) -> (B·G, Cg, H, W)
      return t.transpose(1, 2).reshape({batch * groups, cg, height, width});
    };
    // Offsets: depthwise conv, LayerNorm over channels, exact GELU, 1×1 conv to (dy, dx).
    at::Tensor off = (*offset_conv_)(as_groups(q));
    const int64_t hk = off.size(2), wk = off.size(3), ns = hk * wk;
    check_grid(layout, hk, wk);
    off = (*offset_norm_)(off.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
    off = (*offset_out_)(at::gelu(off)).permute({0, 2, 3, 1});  // (B·G, Hk, Wk, 2)
    if (range_ >= 0) {  // tanh-bounded: at most f/(Hk − 1), f/(Wk − 1) in [−1, 1] units
      const at::Tensor t = off.tanh();
      off = at::stack({t.select(-1, 0) * (1.0 / double(hk - 1)),
                       t.select(-1, 1) * (1.0 / double(wk - 1))},
                      -1) *
            range_;
    }
    // Reference points with the reference's half-cell shift: (i + 0.5)/(Hk − 1)·2 − 1.
    const at::Tensor ry = (at::arange(hk, off.options()) + 0.5) / double(hk - 1) * 2 - 1;
    const at::Tensor rx = (at::arange(wk, off.options()) + 0.5) / double(wk - 1) * 2 - 1;
    const at::Tensor reference =
        at::stack({ry.view({hk, 1}).expand({hk, wk}), rx.view({1, wk}).expand({hk, wk})}, -1)
            .expand({batch * groups, hk, wk, 2});
    at::Tensor pos = off + reference;
    if (range_ < 0) pos = pos.clamp(-1, 1);
    const auto sample = [&](const at::Tensor& image, const at::Tensor& at_pos) {
      return dat_sample(image, at_pos.reshape({image.size(0), -1, 2}));
    };
    // Samples of the INPUT per group -> (B, Ns, C) tokens -> proj_k, proj_v.
    const at::Tensor sampled = sample(as_groups(x), pos).reshape({batch, dim, ns}).transpose(1, 2);
    const at::Tensor k = split_heads(linear(1, sampled), heads);  // (B, h, Ns, d)
    const at::Tensor v = split_heads(linear(2, sampled), heads);
    const at::Tensor qh = split_heads(q, heads);  // (B, h, N, d)
    at::Tensor scores;
    {
      const runtime::MacGroupScope label("scores");  // for the complexity report
      scores = at::matmul(qh, k.transpose(-2, -1)) * std::pow(double(d), -0.5);
    }
    at::Tensor bias;
    if (use_pe_) {
      // Displacement (q_grid − pos)/2 per query and sample, the table sampled there.
      const at::Tensor gy = at::arange(height, pos.options()) / double(height - 1) * 2 - 1;
      const at::Tensor gx = at::arange(width, pos.options()) / double(width - 1) * 2 - 1;
      const at::Tensor q_grid = at::stack({gy.view({height, 1}).expand({height, width}),
                                           gx.view({1, width}).expand({height, width})},
                                          -1)
                                    .reshape({1, n_tok, 1, 2});
      const at::Tensor disp = (q_grid - pos.reshape({batch * groups, 1, ns, 2})) * 0.5;
      const at::Tensor table =
          table_.unsqueeze(0)
              .expand({batch, -1, -1, -1})
              .reshape({batch * groups, heads / groups, table_.size(1), table_.size(2)});
      bias = sample(table, disp).reshape({batch, heads, n_tok, ns});
      scores = scores + bias;
    }
    const at::Tensor attn = at::softmax(scores, -1);  // (B, h, N, Ns)
    at::Tensor out = at::matmul(attn, v);             // (B, h, N, d)

    if (request) {
      auto trace = std::make_shared<DatTrace>();
      init_trace(*trace, x, layout, *request);
      trace->heads_per_group = heads / groups;
      const at::Tensor v_tok = linear(2, x);
      trace->groups.push_back(all_heads_group(*trace, heads, qh, split_heads(linear(1, x), heads),
                                              split_heads(v_tok, heads)));
      // Each head's own group's sampling S_g applied to the token values.
      const at::Tensor v_own = split_heads(
          sample(as_groups(v_tok), pos).reshape({batch, dim, ns}).transpose(1, 2), heads);
      const at::Tensor rest = at::matmul(attn, v - v_own);
      const auto corners = dat_corners(pos.reshape({batch * groups, ns, 2}), height, width);
      const auto by_group = [&](const at::Tensor& t) {
        return t.reshape({batch, groups, hk, wk, 2});
      };
      auto& in = trace->internals;
      in["dat.offsets"] = trace->keep(by_group(off));
      in["dat.reference"] = trace->keep(by_group(reference));
      in["dat.pos"] = trace->keep(by_group(pos));
      in["dat.attn"] = trace->keep(attn.reshape({batch * heads, n_tok, ns}));
      if (bias.defined()) in["dat.bias"] = trace->keep(bias.reshape({batch * heads, n_tok, ns}));
      in["dat.k_sampled"] = trace->keep(k);
      in["dat.v_sampled"] = trace->keep(v);
      in["dat.sample_index"] = corners.first.reshape({batch, groups, ns, 4});
      in["dat.sample_weight"] = trace->keep(corners.second.reshape({batch, groups, ns, 4}));
      in["dat.value_rest"] = trace->keep(rest);
      if (wants_explicit(request)) out = explicit_mix(*trace) + rest;
      request->trace = std::move(trace);
    }
    return linear(3, merge_heads(out));
  }

 private:
  void check_grid(const TokenLayout& layout, int64_t hk, int64_t wk) const {
    const std::string where = "the layer's grid " + layout.describe();
    if (hk < 2 || wk < 2)
      throw AttentionError("dat: stride " + std::to_string(stride_) + " and ksize " +
                           std::to_string(ksize_) + " leave a " + std::to_string(hk) + "×" +
                           std::to_string(wk) + " key grid on " + where +
                           "; the reference points need at least 2×2 (they divide by Hk − 1)");
    if (use_pe_ && (layout.height < 2 || layout.width < 2))
      throw AttentionError(
          "dat: use_pe needs a grid of at least 2×2 (its query grid divides by "
          "H − 1), but " +
          where + " is not");
  }

  std::vector<std::shared_ptr<Conv2dLayer>> proj_;  // q, k, v, out
  std::shared_ptr<Conv2dLayer> offset_conv_, offset_out_;
  std::shared_ptr<LayerNormLayer> offset_norm_;
  at::Tensor table_;
  int64_t groups_ = 1, stride_ = 1, ksize_ = 3;
  double range_ = -1;
  bool use_pe_ = true;
};

}  // namespace

MechanismInfo dat_mechanism() {
  MechanismInfo info;
  info.name = "dat";
  info.summary = "DAT deformable attention: keys and values sampled at learned offsets";
  info.needs_grid = true;
  info.capabilities = {capability::kSamplingPoints};
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& l) {
    const int64_t s = c.int_option("stride"), k = c.int_option("ksize");
    const int64_t pad = k == s ? 0 : k / 2;
    const int64_t hk = (l.height + 2 * pad - k) / s + 1, wk = (l.width + 2 * pad - k) / s + 1;
    return double(c.heads) * double(l.tokens()) *
           double(std::max<int64_t>(hk, 0) * std::max<int64_t>(wk, 0));
  };
  info.options = {
      {"n_groups", OptionSpec::Kind::Integer, 1, 1, 1e6,
       "offset groups G (each samples its C/G channels at its own positions; divides heads)"},
      {"stride", OptionSpec::Kind::Integer, 1, 1, 1e6, "stride of the offset conv (Hk = H/stride)"},
      {"ksize", OptionSpec::Kind::Integer, 3, 1, 1e6, "kernel side of the depthwise offset conv"},
      {"offset_range_factor", OptionSpec::Kind::Real, -1, -1e9, 1e9,
       "f >= 0: offsets tanh·f/(Hk−1); f < 0: raw offsets, positions clamped to [−1, 1]"},
      {"use_pe", OptionSpec::Kind::Flag, 1, 0, 1, "relative position bias from rpe_table"},
      {"q_h", OptionSpec::Kind::Integer, 7, 1, 1e6, "rpe_table rows 2·q_h − 1 (any grid runs)"},
      {"q_w", OptionSpec::Kind::Integer, 7, 1, 1e6, "rpe_table columns 2·q_w − 1"},
      {"dwc_pe", OptionSpec::Kind::Flag, 0, 0, 1, "depthwise-conv position encoding (refused)"},
      {"fixed_pe", OptionSpec::Kind::Flag, 0, 0, 1, "fixed learned bias table (refused)"},
      {"log_cpb", OptionSpec::Kind::Flag, 0, 0, 1, "log-spaced CPB MLP bias (refused)"},
      {"no_off", OptionSpec::Kind::Flag, 0, 0, 1, "no offsets, pooled keys (refused)"},
      {"ln_eps", OptionSpec::Kind::Real, 1e-5, 0, 1, "eps of the offset LayerNorm"},
  };
  ReferenceModule module;  // DAttentionBaseline on the NCHW input's grid
  module.arch = "dat_deformable_attention";
  module.fixture = "dat_attn";
  module.dim_arg = "";  // the config names n_heads × n_head_channels: C from proj_q
  module.heads_arg = "n_heads";
  module.args = {{"n_groups", "n_groups"}, {"stride", "stride"},
                 {"ksize", "ksize"},       {"offset_range_factor", "offset_range_factor"},
                 {"use_pe", "use_pe"},     {"dwc_pe", "dwc_pe"},
                 {"fixed_pe", "fixed_pe"}, {"log_cpb", "log_cpb"},
                 {"no_off", "no_off"},     {"ln_eps", "ln_eps"}};
  module.grid = true;
  module.channels_first = true;
  module.fit_to_weights = [](MechanismConfig& c, const std::map<std::string, at::Tensor>& w) {
    const auto q = w.find("proj_q.weight");
    if (c.dim == 0 && q != w.end()) c.dim = q->second.size(0);
    const auto table = w.find("rpe_table");  // (h, 2·q_h − 1, 2·q_w − 1)
    if (table != w.end()) {
      c.options["q_h"] = double((table->second.size(1) + 1) / 2);
      c.options["q_w"] = double((table->second.size(2) + 1) / 2);
    }
  };
  info.reference_module = module;
  // The zoo's 14×14 tokens are DAT++-T's third stage at 224: stride 2 (7×7 samples), 5×5
  // offset conv, the bias table sized for the stage's grid (q_size); its 4 groups need 8
  // heads, the skeleton has 2, so one group. Offsets are DAT v1's tanh-bounded ones (f = 2:
  // at most f/(Hk − 1), one reference-point spacing, per axis): with DAT++'s raw clamped offsets (f
  // = −1) the zoo's one-epoch recipe diverged at step ~300 (loss 1.24 -> 2.14) and ended at 67.94
  // %.
  info.small_model_options = {
      {"stride", 2}, {"ksize", 5}, {"q_h", 14}, {"q_w", 14}, {"offset_range_factor", 2}};
  info.create = [](const MechanismConfig& c) { return std::make_shared<DatAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
