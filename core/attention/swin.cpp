// Swin window attention, W-MSA and SW-MSA (SPEC_COMPARISON "Swin window attention and
// shifted-window block"; microsoft/Swin-Transformer WindowAttention + the block's roll):
// every token attends within its w×w window, with a learned relative position bias; a
// shifted layer rolls the grid by (−s, −s) first, masks keys from other regions of the
// rolled grid (−100, as the reference) and rolls back.
//   parameters  relative_position_bias_table ((2w−1)², h); relative_position_index, a
//               persistent int64 buffer (w², w²) loaded strictly (the forward reads the loaded
//               one, as the reference); qkv: Linear(C, 3C) rows [q | k | v], head-major;
//               proj: Linear(C, C)
//   options     window w (7); shift s (0, < w); qkv_bias (1); pad (1)
//   grid        pure grid only. H, W multiples of w: exactly the reference. Otherwise pad 0
//               refuses (the reference classification model cannot run such grids; the
//               Swin backbone builds with pad 0), pad 1 zero-pads right/bottom to Hp×Wp as
//               the authors' detection backbone (Swin-Transformer-Object-Detection) does:
//               padded tokens are keys like any other (unmasked), the shift mask is built on
//               Hp×Wp, the output cropped. A grid that fits in one window (min(Hp, Wp) ≤ w)
//               runs unshifted, as the reference builds such blocks; the reference then also
//               shrinks the window (and its bias table) to min(H, W) — a parameter shape, so
//               that clamp is the Swin backbone's, when it builds the layer.
//   trace       one head group "all": q, k, v (B, h, Hp·Wp, d) on the (padded) grid in image
//               positions, not rolled, q not scaled; keys {0, Hp, Wp, cell 1} (padding keys
//               beyond the layer's grid); window = w, window_shift = the shift used.
//               reference_outputs "attn": the per-window probabilities (nW·B, h, w², w²) on
//               the rolled grid, bias and mask included — the fixtures' "attn".
//   rows        in image positions: a_i = softmax(q_i·k_j·d^-0.5 + bias + mask) over the w²
//               keys of i's (rolled) window, scattered back to where those keys sit in the
//               image, 0 elsewhere; O(w²·d) per row, no N×N. In a shifted layer the window
//               wraps round the border: the wrapped keys keep the masked weights (≈ e^-100 of
//               the others) the forward really used. On a padded grid a row's weight on
//               padding keys is not on the layer's tokens (it sums to < 1 there).
//   products    A·x, Aᵀ·y, head outputs through each row's w² keys, O(N·w²·c) (unpadded)
//   explicit    out = proj(merge(rows·v)), rows with autograd (bias table included)
#include "core/attention/swin.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "core/attention/capabilities.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/attention/head_outputs.h"
#include "core/runtime/mac_counter.h"
#include "core/nn/initial_values.h"

namespace attnlab::attention {

at::Tensor swin_relative_position_index(int64_t w) {
  const at::Tensor pos = at::arange(w * w, at::kLong);
  const at::Tensor y = pos.div(w, "floor"), x = pos.remainder(w);
  const at::Tensor dy = y.unsqueeze(1) - y.unsqueeze(0), dx = x.unsqueeze(1) - x.unsqueeze(0);
  return (dy + (w - 1)) * (2 * w - 1) + (dx + (w - 1));
}

int64_t swin_effective_shift(int64_t height, int64_t width, int64_t window, int64_t shift) {
  return std::min(height, width) <= window ? 0 : shift;
}

namespace {

// Region (0, 1, 2) of each rolled position along an axis of length n.
at::Tensor regions(int64_t n, int64_t w, int64_t s, const at::TensorOptions& o) {
  const at::Tensor r = at::arange(n, o.dtype(at::kLong));
  return r.ge(n - w).to(at::kLong) + r.ge(n - s).to(at::kLong);
}

// (B, h, H·W, c) on the image grid -> (B, h, nW, w², c) windows of the grid rolled by −s.
at::Tensor to_windows(const at::Tensor& t, int64_t height, int64_t width, int64_t w, int64_t s) {
  const int64_t b = t.size(0), h = t.size(1), c = t.size(-1);
  at::Tensor g = t.reshape({b, h, height, width, c});
  if (s > 0) g = at::roll(g, {-s, -s}, {2, 3});
  return g.reshape({b, h, height / w, w, width / w, w, c})
      .permute({0, 1, 2, 4, 3, 5, 6})
      .reshape({b, h, (height / w) * (width / w), w * w, c});
}

// The inverse of to_windows.
at::Tensor from_windows(const at::Tensor& t, int64_t height, int64_t width, int64_t w, int64_t s) {
  const int64_t b = t.size(0), h = t.size(1), c = t.size(-1);
  at::Tensor g = t.reshape({b, h, height / w, width / w, w, w, c})
                     .permute({0, 1, 2, 4, 3, 5, 6})
                     .reshape({b, h, height, width, c});
  if (s > 0) g = at::roll(g, {s, s}, {2, 3});
  return g.reshape({b, h, height * width, c});
}

}  // namespace

at::Tensor swin_shift_mask(int64_t height, int64_t width, int64_t w, int64_t s,
                           const at::TensorOptions& options) {
  const at::Tensor id = regions(height, w, s, options).unsqueeze(1) * 3 +
                        regions(width, w, s, options).unsqueeze(0);  // (H, W)
  const at::Tensor win = to_windows(id.reshape({1, 1, height * width, 1}), height, width, w, 0)
                             .reshape({-1, w * w});  // (nW, w²), windows of the rolled grid
  const at::Tensor differ = win.unsqueeze(2).ne(win.unsqueeze(1));
  // At the scores' precision (the options of the tokens): -100 and 0 are exact in bf16.
  return differ.to(options) * -100.0;
}

namespace {

class SwinTrace : public AttentionTrace {
 public:
  double scale = 1.0;
  at::Tensor bias;  // (h, w², w²): the relative position bias per head
  at::Tensor mask;  // (nW, w², w²) in a shifted layer, else undefined

  NamedTensors reference_outputs() const override {
    const HeadGroup& g = groups.front();
    const int64_t ww = window * window, nw = g.keys.size() / ww;
    // Every (padded-grid) token in window order: windows row-major on the rolled grid,
    // tokens row-major inside — the reference's (nW, w²) order.
    const at::Tensor all = at::arange(g.keys.size(), g.q.options().dtype(at::kLong));
    const at::Tensor order =
        to_windows(all.view({1, 1, -1, 1}), g.keys.key_h, g.keys.key_w, window, window_shift)
            .reshape({-1});
    std::vector<at::Tensor> images;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<at::Tensor> per_head;
      for (int64_t h = 0; h < heads; ++h)
        per_head.push_back(in_window(b, g, h, order).probs.view({nw, ww, ww}));
      images.push_back(at::stack(per_head, 1));  // (nW, h, w², w²)
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

  // Through each row's w² keys only, a chunk of rows at a time (only called when the keys
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
    at::Tensor probs;  // (n, w²): softmax over the query's window, keys in window order
    at::Tensor keys;   // (n, w²): where those keys sit on the (padded) grid, row-major
  };

  Window in_window(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& q_rows) const {
    const int64_t w = window, s = window_shift, height = g.keys.key_h, width = g.keys.key_w;
    // The query's position on the rolled grid, its window and its place inside it.
    const at::Tensor ry = (q_rows.div(width, "floor") - s).remainder(height);
    const at::Tensor rx = (q_rows.remainder(width) - s).remainder(width);
    const at::Tensor oy = ry.div(w, "floor") * w, ox = rx.div(w, "floor") * w;
    const at::Tensor inside = (ry - oy) * w + (rx - ox);
    const at::Tensor off = at::arange(w, q_rows.options());
    const at::Tensor ky = (oy.view({-1, 1, 1}) + off.view({1, w, 1}) + s).remainder(height);
    const at::Tensor kx = (ox.view({-1, 1, 1}) + off.view({1, 1, w}) + s).remainder(width);
    const at::Tensor keys = (ky * width + kx).reshape({q_rows.size(0), w * w});
    const at::Tensor k =
        g.k[b][h].index_select(0, keys.reshape({-1})).view({keys.size(0), w * w, -1});
    const at::Tensor q = g.q[b][h].index_select(0, q_rows) * scale;
    at::Tensor scores =
        at::matmul(k, q.unsqueeze(-1)).squeeze(-1) + bias[h].index_select(0, inside);
    if (mask.defined()) {
      const at::Tensor win = oy.div(w, "floor") * (width / w) + ox.div(w, "floor");
      scores = scores + mask.view({-1, w * w}).index_select(0, win * (w * w) + inside);
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
    window_ = c.int_option("window");
    shift_ = c.int_option("shift");
    pad_ = c.flag("pad");
    if (shift_ >= window_)
      throw AttentionError("swin: shift " + std::to_string(shift_) +
                           " must be smaller than the window " + std::to_string(window_));
    const int64_t side = 2 * window_ - 1;
    // Registered in the reference's order; the table as its trunc_normal(std 0.02).
    table_ = register_parameter("relative_position_bias_table",
                                nn::initial_normal({side * side, c.heads}, 0.02));
    index_ = register_buffer("relative_position_index", swin_relative_position_index(window_));
    qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), height = layout.height, width = layout.width, w = window_;
    const int64_t hp = (height + w - 1) / w * w, wp = (width + w - 1) / w * w;
    const bool padded = hp != height || wp != width;
    if (padded && !pad_)
      throw AttentionError(
          "swin: the " + std::to_string(height) + "\xC3\x97" + std::to_string(width) +
          " grid is not a multiple of the window " + std::to_string(w) +
          " in both directions (pad 0: no padding, as the " + "reference" +
          (std::min(height, width) < w ? "; a Swin model builds a smaller window for such a stage"
                                       : "") +
          ")");
    const int64_t s = swin_effective_shift(hp, wp, w, shift_);
    // Zero tokens right and bottom (after the block's norm1, as the detection backbone).
    const at::Tensor xp = padded ? at::constant_pad_nd(x.reshape({batch, height, width, -1}),
                                                       {0, 0, 0, wp - width, 0, hp - height})
                                       .reshape({batch, hp * wp, -1})
                                 : x;
    auto [q, k, v] = split_qkv((*qkv_)(xp), config().heads);
    const at::Tensor bias = relative_bias();
    const at::Tensor mask = s > 0 ? swin_shift_mask(hp, wp, w, s, x.options()) : at::Tensor();

    at::Tensor out;  // (B, h, N, d) on the layer's tokens
    std::shared_ptr<SwinTrace> trace;
    if (request) {
      trace = std::make_shared<SwinTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      trace->window = w;
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
      // As the reference: (q·scale)·kᵀ per window, + bias (h, w², w²), + mask per window.
      at::Tensor scores;
      {
        const runtime::MacGroupScope label("scores");  // for the complexity report
        scores = at::matmul(to_windows(q, hp, wp, w, s) * scale_,
                            to_windows(k, hp, wp, w, s).transpose(-2, -1));
      }
      scores = scores + bias.unsqueeze(1);
      if (mask.defined()) scores = scores + mask;
      out = from_windows(at::matmul(at::softmax(scores, -1), to_windows(v, hp, wp, w, s)), hp, wp,
                         w, s);
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
  // bias[h][i][j] = table[index[i][j]][h]; a loaded index must address the table (checked
  // once per loaded index; a meta index, in the device check of tests/support/
  // meta_device.h, has no values to check).
  at::Tensor relative_bias() {
    if (!index_.is_meta() &&
        (index_._version() != checked_version_ || index_.data_ptr() != checked_data_)) {
      const int64_t ww = window_ * window_;
      if (index_.scalar_type() != at::kLong || index_.dim() != 2 || index_.size(0) != ww ||
          index_.size(1) != ww || index_.min().item<int64_t>() < 0 ||
          index_.max().item<int64_t>() >= table_.size(0))
        throw AttentionError("swin: relative_position_index must be (w², w²) int64 rows of the " +
                             std::to_string(table_.size(0)) + "-row bias table");
      checked_version_ = index_._version();
      checked_data_ = index_.data_ptr();
    }
    const int64_t ww = window_ * window_;
    return table_.index_select(0, index_.reshape({-1})).view({ww, ww, -1}).permute({2, 0, 1});
  }

  std::shared_ptr<LinearLayer> qkv_, proj_;
  at::Tensor table_, index_;
  int64_t window_ = 7, shift_ = 0;
  bool pad_ = true;
  double scale_ = 1.0;
  int64_t checked_version_ = -1;
  const void* checked_data_ = nullptr;
};

}  // namespace

MechanismInfo swin_mechanism() {
  MechanismInfo info;
  info.name = "swin";
  info.summary = "Swin window attention (W-MSA / SW-MSA): w×w windows, relative position bias";
  info.needs_grid = true;
  info.linear_in_tokens = true;  // O(N·w²) for a fixed window
  info.capabilities = {capability::kLocalWindows};
  info.options = {
      {"window", OptionSpec::Kind::Integer, 7, 1, 1e9, "window side w"},
      {"shift", OptionSpec::Kind::Integer, 0, 0, 1e9,
       "cyclic shift s < w of the windows (SW-MSA; Swin's odd blocks use w/2)"},
      {"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the qkv projection"},
      {"pad", OptionSpec::Kind::Flag, 1, 0, 1,
       "zero-pad a grid that is no multiple of w (as Swin's detection backbone); 0: refuse"},
  };
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& l) {
    const double w = static_cast<double>(c.int_option("window"));
    return static_cast<double>(c.heads) * static_cast<double>(l.tokens()) * w * w;
  };
  // The reference WindowAttention fed (nW·B, w², C) windows: a w×w grid, B·nW images. The
  // window is read from the bias table ((2w−1)² rows), as the config's window_size is a pair.
  ReferenceModule module;
  module.arch = "swin_window_attention";
  module.fixture = "swin_attn";
  module.args = {{"qkv_bias", "qkv_bias"}};
  module.grid = true;
  module.grid_arg = "window_size";
  module.fit_to_weights = [](MechanismConfig& c, const std::map<std::string, at::Tensor>& w) {
    const auto table = w.find("relative_position_bias_table");
    if (table == w.end() || table->second.dim() != 2) return;  // the strict load says what lacks
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(double(table->second.size(0)))));
    if (side * side == table->second.size(0) && side % 2 == 1)
      c.options["window"] = double((side + 1) / 2);
  };
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<SwinAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
