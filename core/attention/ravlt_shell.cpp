// RavltShell: RAVLT's qkvo / lepe / proj convolutions around its two attention forms.
#include "core/attention/ravlt_shell.h"

#include <ATen/ATen.h>

namespace attnlab::attention {
namespace {

Conv2dLayer::Shape conv(int64_t in, int64_t out, int64_t kernel, int64_t groups) {
  Conv2dLayer::Shape s;
  s.in = in;
  s.out = out;
  s.kernel = {kernel, kernel};
  s.padding = {kernel / 2, kernel / 2};
  s.groups = groups;
  return s;
}

}  // namespace

at::Tensor RavltParts::per_head(const at::Tensor& image) const {
  return image.reshape({batch, heads, dim / heads, height * width}).transpose(-2, -1);
}

at::Tensor RavltParts::to_image(const at::Tensor& per_head_features) const {
  return per_head_features.transpose(-2, -1).reshape({batch, dim, height, width});
}

RavltShell::RavltShell(torch::nn::Module& owner, const MechanismConfig& c, const std::string& name)
    : heads_(c.heads) {
  if (c.head_dim() % 4 != 0)
    throw AttentionError(name + ": head dim " + std::to_string(c.head_dim()) +
                         " must be a multiple of 4 for its 2-D RoPE");
  qkvo_ = add_layer<Conv2dLayer>(owner, "qkvo", conv(c.dim, 4 * c.dim, 1, 1));
  lepe_ = add_layer<Conv2dLayer>(owner, "lepe", conv(c.dim, c.dim, 5, c.dim));
  proj_ = add_layer<Conv2dLayer>(owner, "proj", conv(c.dim, c.dim, 1, 1));
}

RavltParts RavltShell::split(const at::Tensor& x, const TokenLayout& layout) const {
  RavltParts p;
  p.batch = x.size(0);
  p.dim = x.size(2);
  p.heads = heads_;
  p.height = layout.height;
  p.width = layout.width;
  const int64_t dim = p.dim;
  const at::Tensor qkvo = (*qkvo_)(x.transpose(1, 2).reshape({p.batch, dim, p.height, p.width}));
  const at::Tensor v_img = qkvo.slice(1, 2 * dim, 3 * dim);
  p.q = p.per_head(qkvo.slice(1, 0, dim));
  p.k = p.per_head(qkvo.slice(1, dim, 2 * dim));
  p.v = p.per_head(v_img);
  p.o_img = qkvo.slice(1, 3 * dim, 4 * dim);
  p.lepe_img = (*lepe_)(v_img);
  return p;
}

at::Tensor RavltShell::project(const RavltParts& parts, const at::Tensor& mixed_image) const {
  const at::Tensor out = (*proj_)(mixed_image);
  return out.reshape({parts.batch, parts.dim, parts.height * parts.width}).transpose(1, 2);
}

}  // namespace attnlab::attention
