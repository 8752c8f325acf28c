// RAVLT's building blocks (see ravlt_blocks.h): parameter registration in the reference
// order and names, and the NCHW forwards. The attention modules are the registered
// mechanisms ("rala", "softmax_rope"), which take tokens (B, N, C); the block converts its
// normalised NCHW input to tokens and the result back.
#include "models/ravlt_blocks.h"

#include <ATen/ATen.h>

#include "core/attention/registry.h"
#include "core/attention/rope.h"
#include "core/attention/token_layout.h"
#include "models/gelu.h"

namespace attnlab::models::ravlt {
namespace {

using attention::Conv2dLayer;

std::shared_ptr<Conv2dLayer> add_conv(torch::nn::Module& parent, const std::string& name,
                                      int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                      int64_t groups = 1) {
  Conv2dLayer::Shape s;
  s.in = in;
  s.out = out;
  s.kernel = {kernel, kernel};
  s.stride = {stride, stride};
  s.padding = {kernel / 2, kernel / 2};
  s.groups = groups;
  return attention::add_layer<Conv2dLayer>(parent, name, s);
}

}  // namespace

ChannelLayerNorm::ChannelLayerNorm(int64_t channels) {
  // The reference wraps nn.LayerNorm(C, eps 1e-6) as the child "norm".
  auto norm = register_module("norm", std::make_shared<LayerNormLayer>(channels, 1e-6));
  weight_ = norm->weight;
  bias_ = norm->bias;
}

at::Tensor ChannelLayerNorm::operator()(const at::Tensor& x) const {
  const at::Tensor channels_last = x.permute({0, 2, 3, 1});
  return at::layer_norm(channels_last, {x.size(1)}, weight_, bias_, 1e-6).permute({0, 3, 1, 2});
}

Stem::Stem(int64_t dim) {
  auto proj = register_module("proj", std::make_shared<torch::nn::Module>());
  const int64_t half = dim / 2;
  // (index, in, out, stride) of the four convs; each is followed by BatchNorm at index+1.
  const int64_t layers[4][4] = {
      {0, 3, half, 2}, {3, half, half, 1}, {6, half, half, 1}, {9, half, dim, 2}};
  for (const auto& l : layers) {
    convs_.push_back(add_conv(*proj, std::to_string(l[0]), l[1], l[2], 3, l[3]));
    norms_.push_back(
        proj->register_module(std::to_string(l[0] + 1), std::make_shared<BatchNorm2dLayer>(l[2])));
  }
}

at::Tensor Stem::operator()(const at::Tensor& images) {
  at::Tensor x = images;
  for (size_t i = 0; i < convs_.size(); ++i) {
    x = (*norms_[i])((*convs_[i])(x));
    if (i + 1 < convs_.size()) x = models::gelu(x);
  }
  return x;
}

ConvFfn::ConvFfn(int64_t dim, int64_t hidden) {
  fc1_ = add_conv(*this, "fc1", dim, hidden, 1, 1);
  fc2_ = add_conv(*this, "fc2", hidden, dim, 1, 1);
  dwconv_ = add_conv(*this, "dwconv", hidden, hidden, 3, 1, hidden);
}

at::Tensor ConvFfn::operator()(const at::Tensor& x) const {
  at::Tensor h = models::gelu((*fc1_)(x));
  h = h + (*dwconv_)(h);
  return (*fc2_)(h);
}

Block::Block(const BlockShape& s) {
  if (s.layerscale) {
    gamma_1_ = register_parameter("gamma_1", at::ones({1, s.dim, 1, 1}));
    gamma_2_ = register_parameter("gamma_2", at::ones({1, s.dim, 1, 1}));
  }
  norm1_ = register_module("norm1", std::make_shared<ChannelLayerNorm>(s.dim));
  attention::MechanismConfig config;
  config.dim = s.dim;
  config.heads = s.heads;
  attn_ = register_module("attn", attention::make_mechanism(s.mechanism, config));
  norm2_ = register_module("norm2", std::make_shared<ChannelLayerNorm>(s.dim));
  ffn_ = register_module("ffn", std::make_shared<ConvFfn>(s.dim, s.hidden));
  pos_ = add_conv(*this, "pos", s.dim, s.dim, 3, 1, s.dim);
}

at::Tensor Block::operator()(const at::Tensor& input, const std::string& path, int stage,
                             ForwardRecorder& recorder) {
  at::Tensor x = input + (*pos_)(input);
  const int64_t batch = x.size(0), dim = x.size(1), height = x.size(2), width = x.size(3);
  const at::Tensor tokens = (*norm1_)(x).flatten(2).transpose(1, 2);
  const at::Tensor mixed =
      recorder.attend(*attn_, path + ".attn", tokens, attention::grid_layout(height, width, stage));
  const at::Tensor attended = mixed.transpose(1, 2).reshape({batch, dim, height, width});
  recorder.output("out", path + ".attn", attended);
  x = x + (gamma_1_.defined() ? gamma_1_ * attended : attended);
  const at::Tensor fed = (*ffn_)((*norm2_)(x));
  x = x + (gamma_2_.defined() ? gamma_2_ * fed : fed);
  recorder.output("out", path, x);
  return recorder.tap(path, x);
}

Stage::Stage(const StageShape& s) : head_dim_(s.block.dim / s.block.heads) {
  auto rope = register_module("RoPE", std::make_shared<torch::nn::Module>());
  angle_ = rope->register_buffer("angle", attention::rope_angle(head_dim_));
  auto blocks = register_module("blocks", std::make_shared<torch::nn::Module>());
  for (int64_t j = 0; j < s.depth; ++j)
    blocks_.push_back(blocks->register_module(std::to_string(j), std::make_shared<Block>(s.block)));
  if (s.out_dim > 0) {
    auto down = register_module("downsample", std::make_shared<torch::nn::Module>());
    reduction_ = add_conv(*down, "reduction", s.block.dim, s.out_dim, 3, 2);
    reduction_norm_ = down->register_module("norm", std::make_shared<BatchNorm2dLayer>(s.out_dim));
  }
}

void Stage::check_rope_angle(int index) {
  if (angle_.is_meta()) return;  // the device check (tests/support/meta_device.h): no values
  if (angle_._version() == checked_version_ && angle_.data_ptr() == checked_data_) return;
  // At the buffer's precision: a model run at --dtype bf16 holds the angles rounded to it.
  const at::Tensor expected = attention::rope_angle(head_dim_).to(angle_.scalar_type());
  const std::string key = "layers." + std::to_string(index) + ".RoPE.angle";
  if (!angle_.sizes().equals(expected.sizes()))
    throw ModelError("ravlt: " + key + " has " + std::to_string(angle_.numel()) +
                     " entries, but head dim " + std::to_string(head_dim_) + " needs " +
                     std::to_string(expected.numel()));
  const double diff = (angle_.detach().to(at::kCPU, at::kDouble) - expected.to(at::kDouble))
                          .abs()
                          .max()
                          .item<double>();
  if (!(diff <= 1e-6))
    throw ModelError("ravlt: " + key +
                     " differs from the RoPE angles 10000^-linspace(0, 1, d/4) "
                     "(each repeated twice) for head dim " +
                     std::to_string(head_dim_) + " by up to " + std::to_string(diff) +
                     "; the attention layers compute their own tables, so a checkpoint "
                     "trained with other angles cannot run correctly here");
  checked_version_ = angle_._version();
  checked_data_ = angle_.data_ptr();
}

at::Tensor Stage::operator()(const at::Tensor& input, int index, ForwardRecorder& recorder) {
  check_rope_angle(index);
  const std::string path = "layers." + std::to_string(index);
  at::Tensor x = input;
  for (size_t j = 0; j < blocks_.size(); ++j) {
    const std::string block = path + ".blocks." + std::to_string(j);
    if (recorder.enter_block(block, x)) x = (*blocks_[j])(x, block, index, recorder);
  }
  if (recorder.skipping()) return x;  // a resumed forward starts at a later stage
  if (reduction_) {
    x = (*reduction_norm_)((*reduction_)(x));
    recorder.output("out", path + ".downsample", x);
  }
  recorder.output("out", path, x);
  return recorder.tap(path, x);
}

}  // namespace attnlab::models::ravlt
