// Swin blocks: each module registers its children in the reference's order, so that
// named_parameters() + named_buffers() are exactly the reference state-dict keys.
#include "models/swin_blocks.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/attention/registry.h"
#include "core/attention/swin.h"
#include "models/pre_norm_block.h"

namespace attnlab::models::swin {
PatchEmbed::PatchEmbed(int64_t patch, int64_t dim, bool norm, double eps) {
  attention::Conv2dLayer::Shape s;
  s.in = 3;
  s.out = dim;
  s.kernel = {patch, patch};
  s.stride = {patch, patch};
  proj_ = attention::add_layer<attention::Conv2dLayer>(*this, "proj", s);
  if (norm) norm_ = attention::add_layer<LayerNormLayer>(*this, "norm", dim, eps);
}

at::Tensor PatchEmbed::operator()(const at::Tensor& images) const {
  at::Tensor x = (*proj_)(images).flatten(2).transpose(1, 2);
  return norm_ ? (*norm_)(x) : x;
}

Block::Block(const BlockShape& s) : height_(s.height), width_(s.width) {
  // The reference's SwinTransformerBlock.__init__: a grid that fits in one window gets the
  // window min(H, W) and no shift.
  window_ = s.window;
  shift_ = s.shift;
  if (std::min(s.height, s.width) <= s.window) {
    window_ = std::min(s.height, s.width);
    shift_ = 0;
  }
  // state_dict order: the block's own buffer first, then norm1, attn, norm2, mlp.
  if (shift_ > 0)
    attn_mask_ = register_buffer(
        "attn_mask", attention::swin_shift_mask(s.height, s.width, window_, shift_, at::kFloat));
  norm1_ = register_module("norm1", std::make_shared<LayerNormLayer>(s.dim, s.ln_eps));
  attention::MechanismConfig c;
  c.dim = s.dim;
  c.heads = s.heads;
  c.options = {{"window", static_cast<double>(window_)},
               {"shift", static_cast<double>(shift_)},
               {"qkv_bias", s.qkv_bias ? 1.0 : 0.0},
               {"pad", 0.0}};  // the reference classification model never pads
  attn_ = register_module("attn", attention::make_mechanism("swin", c));
  norm2_ = register_module("norm2", std::make_shared<LayerNormLayer>(s.dim, s.ln_eps));
  mlp_ = register_module("mlp", std::make_shared<vit::Mlp>(s.dim, s.hidden));
}

void Block::check_mask(const std::string& path) {
  if (!attn_mask_.defined() || attn_mask_.is_meta()) return;  // meta: the device check, no values
  if (attn_mask_._version() == checked_version_ && attn_mask_.data_ptr() == checked_data_) return;
  const at::Tensor want =
      attention::swin_shift_mask(height_, width_, window_, shift_, attn_mask_.options());
  // Both hold only the constants 0 and −100: any difference is a different mask.
  if (!attn_mask_.sizes().equals(want.sizes()) || !at::equal(attn_mask_.detach(), want))
    throw ModelError("swin: " + path + ".attn_mask differs from the shifted-window mask of a " +
                     std::to_string(height_) + "x" + std::to_string(width_) + " grid (window " +
                     std::to_string(window_) + ", shift " + std::to_string(shift_) +
                     ") that the attention builds; a checkpoint with another mask cannot run "
                     "correctly here");
  checked_version_ = attn_mask_._version();
  checked_data_ = attn_mask_.data_ptr();
}

at::Tensor Block::forward(const at::Tensor& x, const attention::TokenLayout& layout,
                          const std::string& path, ForwardRecorder& recorder) {
  check_mask(path);
  return pre_norm_block_forward(x, layout, path, recorder, "norm1", *norm1_, attn_.get(), *norm2_,
                                [this](const at::Tensor& t) { return (*mlp_)(t); });
}

PatchMerging::PatchMerging(int64_t dim, double eps) {
  reduction_ =
      attention::add_layer<attention::LinearLayer>(*this, "reduction", 4 * dim, 2 * dim, false);
  norm_ = attention::add_layer<LayerNormLayer>(*this, "norm", 4 * dim, eps);
}

at::Tensor PatchMerging::operator()(const at::Tensor& x, int64_t& height, int64_t& width) const {
  const int64_t b = x.size(0), c = x.size(2);
  // (B, H, W, C) -> (B, H/2, 2 [row offset], W/2, 2 [column offset], C); the reference's
  // order x0 (0,0), x1 (1,0), x2 (0,1), x3 (1,1) puts the column offset outermost.
  const at::Tensor g = x.reshape({b, height / 2, 2, width / 2, 2, c})
                           .permute({0, 1, 3, 4, 2, 5})
                           .reshape({b, (height / 2) * (width / 2), 4 * c});
  height /= 2;
  width /= 2;
  return (*reduction_)((*norm_)(g));
}

}  // namespace attnlab::models::swin
