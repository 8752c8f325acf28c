// Swin window attention, W-MSA and SW-MSA (SPEC_COMPARISON "Swin window attention and
// shifted-window block"; microsoft/Swin-Transformer WindowAttention + the block's roll):
// every token attends within its Wh×Ww window (rows × columns; square w×w unless window_w
// is set), with a learned relative position bias; a shifted layer rolls the grid by
// (−s, −s) first, masks keys from other regions of the rolled grid (−100, as the
// reference) and rolls back.
//   parameters  relative_position_bias_table ((2Wh−1)(2Ww−1), h); relative_position_index, a
//               persistent int64 buffer (Wh·Ww, Wh·Ww) loaded strictly (the forward reads the
//               loaded one, as the reference); qkv: Linear(C, 3C) rows [q | k | v],
//               head-major; proj: Linear(C, C)
//   options     window Wh (7); window_w Ww (0: = Wh, square); shift s (0, < min(Wh, Ww),
//               on both axes); qkv_bias (1); pad (1)
//   grid        pure grid only. H a multiple of Wh, W of Ww: exactly the reference.
//               Otherwise pad 0 refuses (the reference classification model cannot run such
//               grids; the Swin backbone builds with pad 0), pad 1 zero-pads right/bottom to
//               Hp×Wp as the authors' detection backbone (Swin-Transformer-Object-Detection)
//               does: padded tokens are keys like any other (unmasked), the shift mask is
//               built on Hp×Wp, the output cropped. A grid that fits in the window along
//               either axis (Hp ≤ Wh or Wp ≤ Ww) runs unshifted, as the reference builds such
//               blocks; the reference then also shrinks the window (and its bias table) —
//               a parameter shape, so that clamp is the model's, when it builds the layer
//               (swin_fitted_window; the square backbone keeps the reference's min(H, W)).
//   trace       one head group "all": q, k, v (B, h, Hp·Wp, d) on the (padded) grid in image
//               positions, not rolled, q not scaled; keys {0, Hp, Wp, cell 1} (padding keys
//               beyond the layer's grid); window = Wh, window_w = Ww, window_shift = the
//               shift used. reference_outputs "attn": the per-window probabilities
//               (nW·B, h, Wh·Ww, Wh·Ww) on the rolled grid, bias and mask included — the
//               fixtures' "attn".
//   rows        in image positions: a_i = softmax(q_i·k_j·d^-0.5 + bias + mask) over the
//               Wh·Ww keys of i's (rolled) window, scattered back to where those keys sit in
//               the image, 0 elsewhere; O(Wh·Ww·d) per row, no N×N. In a shifted layer the
//               window wraps round the border: the wrapped keys keep the masked weights
//               (≈ e^-100 of the others) the forward really used. On a padded grid a row's
//               weight on padding keys is not on the layer's tokens (it sums to < 1 there).
//   products    A·x, Aᵀ·y, head outputs through each row's Wh·Ww keys, O(N·Wh·Ww·c)
//               (unpadded)
//   explicit    out = proj(merge(rows·v)), rows with autograd (bias table included)
#include "core/attention/swin.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "core/attention/capabilities.h"
#include "core/attention/fused_attention.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/nn/initial_values.h"

namespace attnlab::attention {

namespace {

class SwinTrace : public AttentionTrace {
 public:
  double scale = 1.0;
  at::Tensor bias;  // (h, Wh·Ww, Wh·Ww): the relative position bias per head
  at::Tensor mask;  // (nW, Wh·Ww, Wh·Ww) in a shifted layer, else undefined

  NamedTensors reference_outputs() const override {
    const HeadGroup& g = groups.front();
    const int64_t ww = window * window_cols(), nw = g.keys.size() / ww;
    // Every (padded-grid) token in window order: windows row-major on the rolled grid,
    // tokens row-major inside — the reference's (nW, Wh·Ww) order.
    const at::Tensor all = at::arange(g.keys.size(), g.q.options().dtype(at::kLong));
    const at::Tensor order = swin_to_windows(all.view({1, 1, -1, 1}), g.keys.key_h, g.keys.key_w,
                                             window, window_cols(), window_shift)
                                 .reshape({-1});
    std::vector<at::Tensor> images;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<at::Tensor> per_head;
      for (int64_t h = 0; h < heads; ++h)
        per_head.push_back(in_window(b, g, h, order).probs.view({nw, ww, ww}));
      images.push_back(at::stack(per_head, 1));  // (nW, h, Wh·Ww, Wh·Ww)
    }
    return {{"attn", at::cat(images, 0)}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const Window r = in_window(b, g, h, q_rows);
    return at::zeros({q_rows.size(0), g.keys.size()}, r.probs.options())
        .scatter(1, r.keys, r.probs);
  }

  // Through each row's Wh·Ww keys only, a chunk of rows at a time (only called when the keys
  // are the layer's tokens: no padding).
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const int64_t n = layout.tokens(), c = x.size(1);
    at::Tensor out = at::zeros({n, c}, x.options());
    for (int64_t t0 = 0; t0 < n; t0 += kChunk) {
      const at::Tensor q = at::arange(t0, std::min(n, t0 + kChunk), out.options().dtype(at::kLong));
      const Window r = in_window(b, g, h, q);
      if (transposed)  // Aᵀy: every row i gives a_ij·y_i to each of its keys j
        out.index_add_(
            0, r.keys.reshape({-1}),
            (r.probs.unsqueeze(-1) * x.index_select(0, q).unsqueeze(1)).reshape({-1, c}));
      else
        out.index_copy_(0, q,
                        at::matmul(r.probs.unsqueeze(1),
                                   x.index_select(0, r.keys.reshape({-1})).view({q.size(0), -1, c}))
                            .squeeze(1));
    }
    return out;
  }

 private:
  static constexpr int64_t kChunk = 1024;
  struct Window {
    at::Tensor probs;  // (n, Wh·Ww): softmax over the query's window, keys in window order
    at::Tensor keys;   // (n, Wh·Ww): where those keys sit on the (padded) grid, row-major
  };

  Window in_window(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& q_rows) const {
    const int64_t wh = window, ww = window_cols(), n = wh * ww, s = window_shift;
    const int64_t height = g.keys.key_h, width = g.keys.key_w;
    // The query's position on the rolled grid, its window's corner and its place inside it.
    const at::Tensor ry = (q_rows.div(width, "floor") - s).remainder(height);
    const at::Tensor rx = (q_rows.remainder(width) - s).remainder(width);
    const at::Tensor oy = ry.div(wh, "floor") * wh, ox = rx.div(ww, "floor") * ww;
    const at::Tensor inside = (ry - oy) * ww + (rx - ox);
    const at::Tensor dy = at::arange(wh, q_rows.options()), dx = at::arange(ww, q_rows.options());
    // The window's keys, rolled back (+s) to where they sit in the image.
    const at::Tensor ky = (oy.view({-1, 1, 1}) + dy.view({1, wh, 1}) + s).remainder(height);
    const at::Tensor kx = (ox.view({-1, 1, 1}) + dx.view({1, 1, ww}) + s).remainder(width);
    const at::Tensor keys = (ky * width + kx).reshape({q_rows.size(0), n});
    const at::Tensor k = g.k[b][h].index_select(0, keys.reshape({-1})).view({keys.size(0), n, -1});
    const at::Tensor q = g.q[b][h].index_select(0, q_rows) * scale;
    at::Tensor scores =
        at::matmul(k, q.unsqueeze(-1)).squeeze(-1) + bias[h].index_select(0, inside);
    if (mask.defined()) {
      const at::Tensor win = oy.div(wh, "floor") * (width / ww) + ox.div(ww, "floor");
      scores = scores + mask.view({-1, n}).index_select(0, win * n + inside);
    }
    return {at::softmax(scores, -1), keys};
  }
};

class SwinAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit SwinAttention(const MechanismConfig& c) : AttentionMechanism("swin", c) {
    wh_ = c.int_option("window");
    ww_ = c.int_option("window_w") > 0 ? c.int_option("window_w") : wh_;  // 0: square
    shift_ = c.int_option("shift");
    pad_ = c.flag("pad");
    // One shift on both axes: it must stay inside the window along each.
    if (shift_ >= std::min(wh_, ww_))
      throw AttentionError("swin: shift " + std::to_string(shift_) +
                           " must be smaller than the window " + window_text() +
                           (wh_ != ww_ ? " on both axes" : ""));
    const int64_t rows = (2 * wh_ - 1) * (2 * ww_ - 1);
    // Registered in the reference's order; the table as its trunc_normal(std 0.02).
    table_ = register_parameter("relative_position_bias_table",
                                nn::initial_normal({rows, c.heads}, 0.02));
    index_ = register_buffer("relative_position_index", swin_relative_position_index(wh_, ww_));
    qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), height = layout.height, width = layout.width;
    const int64_t wh = wh_, ww = ww_;
    const int64_t hp = (height + wh - 1) / wh * wh, wp = (width + ww - 1) / ww * ww;
    const bool padded = hp != height || wp != width;
    if (padded && !pad_) throw AttentionError(unpadded_refusal(height, width));
    const int64_t s = swin_effective_shift(hp, wp, wh, ww, shift_);
    // Zero tokens right and bottom (after the block's norm1, as the detection backbone).
    const at::Tensor xp = padded ? at::constant_pad_nd(x.reshape({batch, height, width, -1}),
                                                       {0, 0, 0, wp - width, 0, hp - height})
                                       .reshape({batch, hp * wp, -1})
                                 : x;
    auto [q, k, v] = split_qkv((*qkv_)(xp), config().heads);
    const at::Tensor bias = relative_bias();
    const at::Tensor mask = s > 0 ? swin_shift_mask(hp, wp, wh, ww, s, x.options()) : at::Tensor();

    at::Tensor out;  // (B, h, N, d) on the layer's tokens
    std::shared_ptr<SwinTrace> trace;
    if (request) {
      trace = std::make_shared<SwinTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      trace->window = wh;
      trace->window_w = ww == wh ? 0 : ww;  // 0: square, as every square trace says
      trace->window_shift = s;
      trace->bias = trace->keep(bias);
      trace->mask = mask;
      HeadGroup g = all_heads_group(*trace, config().heads, q, k, v);
      g.keys = {0, hp, wp, 1};
      g.query_grid_w = wp;
      trace->groups.push_back(std::move(g));
    }
    if (wants_explicit(request)) {
      out = explicit_mix(*trace);
    } else {
      // As the reference: (q·scale)·kᵀ per window, + bias (h, Wh·Ww, Wh·Ww), + mask per window.
      ScoreForm form;
      form.scale_queries = true;
      form.biases.push_back(bias.unsqueeze(1));
      if (mask.defined()) form.biases.push_back(mask);
      out =
          swin_from_windows(softmax_attention(swin_to_windows(q, hp, wp, wh, ww, s),
                                              swin_to_windows(k, hp, wp, wh, ww, s),
                                              swin_to_windows(v, hp, wp, wh, ww, s), scale_, form),
                            hp, wp, wh, ww, s);
      if (padded)
        out = out.reshape({batch, -1, hp, wp, out.size(-1)})
                  .slice(2, 0, height)
                  .slice(3, 0, width)
                  .reshape({batch, -1, height * width, out.size(-1)});
    }
    if (request) request->trace = std::move(trace);
    return (*proj_)(merge_heads(out));
  }

 private:
  // "7" for a square window, "2×3" (rows × columns) otherwise.
  std::string window_text() const {
    return wh_ == ww_ ? std::to_string(wh_)
                      : std::to_string(wh_) + "\xC3\x97" + std::to_string(ww_);
  }

  // Why pad 0 refuses an H×W grid that is no multiple of the window.
  std::string unpadded_refusal(int64_t height, int64_t width) const {
    std::string why = "swin: the " + std::to_string(height) + "\xC3\x97" + std::to_string(width) +
                      " grid is not a multiple of the window " + window_text() +
                      " in both directions (pad 0: no padding, as the reference";
    if (height < wh_ || width < ww_) {
      // The reference would build a smaller window (and bias table) for such a grid.
      const auto [fh, fw] = swin_fitted_window(height, width, wh_, ww_);
      why += wh_ == ww_ ? "; a Swin model builds a smaller window for such a stage"
                        : "; a smaller window fits it: window " + std::to_string(fh) +
                              ", window_w " + std::to_string(fw);
    }
    return why + ")";
  }

  // bias[h][i][j] = table[index[i][j]][h]; a loaded index must address the table (checked
  // once per loaded index; a meta index, in the device check of tests/support/
  // meta_device.h, has no values to check).
  at::Tensor relative_bias() {
    const int64_t n = wh_ * ww_;
    if (!index_.is_meta() &&
        (index_._version() != checked_version_ || index_.data_ptr() != checked_data_)) {
      if (index_.scalar_type() != at::kLong || index_.dim() != 2 || index_.size(0) != n ||
          index_.size(1) != n || index_.min().item<int64_t>() < 0 ||
          index_.max().item<int64_t>() >= table_.size(0))
        throw AttentionError(
            "swin: relative_position_index must be (Wh·Ww, Wh·Ww) int64 rows of the " +
            std::to_string(table_.size(0)) + "-row bias table");
      checked_version_ = index_._version();
      checked_data_ = index_.data_ptr();
    }
    return table_.index_select(0, index_.reshape({-1})).view({n, n, -1}).permute({2, 0, 1});
  }

  std::shared_ptr<LinearLayer> qkv_, proj_;
  at::Tensor table_, index_;
  int64_t wh_ = 7, ww_ = 7, shift_ = 0;
  bool pad_ = true;
  double scale_ = 1.0;
  int64_t checked_version_ = -1;
  const void* checked_data_ = nullptr;
};

// The window of a reference WindowAttention state dict alone (the module arch then sets
// both options from its config's window_size pair, grid_options, which decides what the
// weights cannot). The shapes are symmetric in Wh, Ww (index (Wh·Ww)², table
// (2Wh−1)(2Ww−1) rows), so the index's values decide which side is the height: the first
// (Wh, Ww), Wh ascending, whose shapes fit and whose formula gives the loaded index exactly
// (integers; a meta index has no values, so only a square window fits it). A 1 × n and an
// n × 1 window have the same index (i − j + n − 1): 1 × n. Otherwise a square table
// ((2w−1)² rows) gives w, as before rectangular windows (a loaded index that does not
// address the table is then refused by the forward). Nothing fits: the options stay, and
// the strict load names the mismatching shapes.
void fit_window_to_weights(MechanismConfig& c, const std::map<std::string, at::Tensor>& w) {
  const auto table = w.find("relative_position_bias_table");
  if (table == w.end() || table->second.dim() != 2) return;  // the strict load says what lacks
  const int64_t rows = table->second.size(0);
  const auto index = w.find("relative_position_index");
  if (index != w.end() && index->second.dim() == 2 &&
      index->second.size(0) == index->second.size(1)) {
    const at::Tensor& idx = index->second;
    const int64_t n = idx.size(0);
    for (int64_t wh = 1; wh <= n; ++wh) {
      const int64_t ww = n / wh;
      if (wh * ww != n || (2 * wh - 1) * (2 * ww - 1) != rows) continue;
      if (wh != ww && (idx.is_meta() || idx.scalar_type() != at::kLong ||
                       !at::equal(idx.cpu(), swin_relative_position_index(wh, ww))))
        continue;
      c.options["window"] = double(wh);
      c.options["window_w"] = wh == ww ? 0.0 : double(ww);
      return;
    }
  }
  const auto side = static_cast<int64_t>(std::llround(std::sqrt(double(rows))));
  if (side * side == rows && side % 2 == 1) c.options["window"] = double((side + 1) / 2);
}

}  // namespace

MechanismInfo swin_mechanism() {
  MechanismInfo info;
  info.name = "swin";
  info.summary = "Swin window attention (W-MSA / SW-MSA): Wh×Ww windows, relative position bias";
  info.needs_grid = true;
  info.linear_in_tokens = true;  // O(N·Wh·Ww) for a fixed window
  info.capabilities = {capability::kLocalWindows};
  info.options = {
      {"window", OptionSpec::Kind::Integer, 7, 1, 1e9,
       "window side w; with window_w, the window height Wh (rows)"},
      {"window_w", OptionSpec::Kind::Integer, 0, 0, 1e9,
       "window width Ww (columns) of a rectangular Wh×Ww window; 0: square, = window"},
      {"shift", OptionSpec::Kind::Integer, 0, 0, 1e9,
       "cyclic shift s < min(Wh, Ww) of the windows on both axes (SW-MSA; Swin's odd blocks use "
       "w/2)"},
      {"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the qkv projection"},
      {"pad", OptionSpec::Kind::Flag, 1, 0, 1,
       "zero-pad a grid that is no multiple of the window (as Swin's detection backbone); 0: "
       "refuse"},
  };
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& l) {
    const double wh = static_cast<double>(c.int_option("window"));
    const double ww =
        c.int_option("window_w") > 0 ? static_cast<double>(c.int_option("window_w")) : wh;
    return static_cast<double>(c.heads) * static_cast<double>(l.tokens()) * wh * ww;
  };
  // The reference WindowAttention fed (nW·B, Wh·Ww, C) windows: a Wh×Ww grid (the config's
  // window_size pair, which is also the window), B·nW images.
  ReferenceModule module;
  module.arch = "swin_window_attention";
  module.fixture = "swin_attn";
  module.args = {{"qkv_bias", "qkv_bias"}};
  module.grid = true;
  module.grid_arg = "window_size";
  module.grid_options = {"window", "window_w"};
  module.fit_to_weights = fit_window_to_weights;
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<SwinAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
