// See clip_visual.h.
#include "models/clip_visual.h"

#include <cmath>
#include <utility>

#include "core/attention/registry.h"
#include "core/nn/initial_values.h"
#include "core/nn/state_loading.h"
#include "models/pre_norm_block.h"

namespace attnlab::models {

attention::TokenLayout ClipVisualSpec::layout() const {
  attention::TokenLayout l = attention::grid_layout(grid(), grid(), /*stage=*/0);
  l.prefix.push_back("cls");
  return l;
}

void check_clip_visual_spec(const ClipVisualSpec& s, const std::string& who) {
  auto refuse = [&](const std::string& what) { throw ModelError(who + ": " + what); };
  const std::pair<const char*, int64_t> sizes[] = {
      {"resolution", s.resolution}, {"patch size", s.patch}, {"width", s.width},
      {"layers", s.layers},         {"head count", s.heads}, {"output dim", s.output_dim}};
  for (const auto& [name, v] : sizes)
    if (v < 1)
      refuse(std::string("the image tower's ") + name + " must be at least 1 (got " +
             std::to_string(v) + ")");
  if (s.resolution % s.patch != 0)
    refuse("the patch size must divide the input resolution (" + std::to_string(s.patch) + " vs " +
           std::to_string(s.resolution) + ")");
  if (s.width % s.heads != 0)
    refuse("the image tower's head count must divide its width (" + std::to_string(s.heads) +
           " vs " + std::to_string(s.width) + ")");
  if (!(s.ln_eps > 0)) refuse("ln_eps must be positive");
}

ClipMlp::ClipMlp(int64_t width, int64_t hidden)
    : c_fc_(attention::add_layer<attention::LinearLayer>(*this, "c_fc", width, hidden, true)),
      c_proj_(attention::add_layer<attention::LinearLayer>(*this, "c_proj", hidden, width, true)) {}

at::Tensor ClipMlp::operator()(const at::Tensor& x) const {
  const at::Tensor h = (*c_fc_)(x);
  return (*c_proj_)(h * at::sigmoid(1.702 * h));
}

// ResidualAttentionBlock: attn, ln_1, mlp, ln_2 (the reference's registration order).
// nn.MultiheadAttention is softmax attention: the registered mechanism in its
// packed-projection layout (option mha_layout).
class ClipVisual::Block : public torch::nn::Module {
 public:
  explicit Block(const ClipVisualSpec& s) {
    attention::MechanismConfig mc;
    mc.dim = s.width;
    mc.heads = s.heads;
    mc.options = {{"qkv_bias", 1.0}, {"mha_layout", 1.0}};
    attn_ =
        register_module("attn", attention::make_mechanism(attention::kPlainSoftmaxMechanism, mc));
    ln_1_ = register_module("ln_1", std::make_shared<LayerNormLayer>(s.width, s.ln_eps));
    mlp_ = register_module("mlp", std::make_shared<ClipMlp>(s.width, 4 * s.width));
    ln_2_ = register_module("ln_2", std::make_shared<LayerNormLayer>(s.width, s.ln_eps));
  }
  at::Tensor forward(const at::Tensor& x, const attention::TokenLayout& layout,
                     const std::string& path, ForwardRecorder& recorder) {
    return pre_norm_block_forward(x, layout, path, recorder, "ln_1", *ln_1_, attn_.get(), *ln_2_,
                                  [this](const at::Tensor& t) { return (*mlp_)(t); });
  }

 private:
  std::shared_ptr<attention::AttentionMechanism> attn_;
  std::shared_ptr<LayerNormLayer> ln_1_, ln_2_;
  std::shared_ptr<ClipMlp> mlp_;
};

ClipVisual::ClipVisual(ClipVisualSpec spec, std::string arch)
    : spec_(spec), arch_(std::move(arch)) {
  const int64_t c = spec_.width, tokens = spec_.layout().tokens();
  // Own parameters first, as the reference's state dict lists them; CLIP initialises
  // them at scale width^-0.5 (loaded over).
  const double scale = 1.0 / std::sqrt(static_cast<double>(c));
  class_embedding_ = register_parameter("class_embedding", nn::initial_normal({c}, scale));
  positional_embedding_ =
      register_parameter("positional_embedding", nn::initial_normal({tokens, c}, scale));
  proj_ = register_parameter("proj", nn::initial_normal({c, spec_.output_dim}, scale));
  attention::Conv2dLayer::Shape conv;
  conv.in = 3;
  conv.out = c;
  conv.kernel = {spec_.patch, spec_.patch};
  conv.stride = {spec_.patch, spec_.patch};
  conv.bias = false;
  conv1_ = attention::add_layer<attention::Conv2dLayer>(*this, "conv1", conv);
  ln_pre_ = register_module("ln_pre", std::make_shared<LayerNormLayer>(c, spec_.ln_eps));
  auto transformer = std::make_shared<torch::nn::Module>();
  auto resblocks = std::make_shared<torch::nn::Module>();
  for (int64_t i = 0; i < spec_.layers; ++i)
    blocks_.push_back(
        resblocks->register_module(std::to_string(i), std::make_shared<Block>(spec_)));
  transformer->register_module("resblocks", resblocks);
  register_module("transformer", transformer);
  ln_post_ = register_module("ln_post", std::make_shared<LayerNormLayer>(c, spec_.ln_eps));
}

at::Tensor ClipVisual::readout_features(const at::Tensor& tokens) const {
  if (tokens.dim() != 3 || tokens.size(2) != spec_.width)
    throw ModelError(arch_ + ": a block output is (B, N, " + std::to_string(spec_.width) +
                     "), got " + nn::shape_string(tokens.sizes()));
  return tokens.select(1, 0);
}

at::Tensor ClipVisual::readout_logits(const at::Tensor&) const {
  throw ModelError(embedding_output_note("reading a block out through the classifier", 0, arch_));
}

std::vector<Backbone::StageShape> ClipVisual::stage_shapes(int64_t, int64_t) const {
  return {{spec_.layout(), spec_.width}};
}

at::Tensor ClipVisual::project_tokens(const at::Tensor& tokens) const {
  if (tokens.dim() != 3 || tokens.size(2) != spec_.width)
    throw ModelError(arch_ + ": tokens to project are (B, N, " + std::to_string(spec_.width) +
                     "), got " + nn::shape_string(tokens.sizes()));
  return at::matmul((*ln_post_)(tokens), proj_);
}

ForwardResult ClipVisual::forward_images(const at::Tensor& images, const ForwardOptions& options) {
  const int64_t r = spec_.resolution;
  if (images.dim() != 4 || images.size(1) != 3 || images.size(2) != r || images.size(3) != r)
    throw ModelError(arch_ + ": expected images (B, 3, " + std::to_string(r) + ", " +
                     std::to_string(r) + ") (CLIP runs at its input_resolution only)");
  ForwardResult result;
  ForwardRecorder recorder(options, result);
  at::Tensor x;
  if (!recorder.skipping()) {
    const int64_t batch = images.size(0);
    const at::Tensor grid = (*conv1_)(images);
    recorder.output("out", "conv1", grid);
    const at::Tensor patches = grid.flatten(2).transpose(1, 2);
    const at::Tensor cls = class_embedding_.view({1, 1, -1}).expand({batch, 1, -1});
    x = (*ln_pre_)(at::cat({cls, patches}, 1) + positional_embedding_);
    recorder.output("out", "ln_pre", x);
  }
  const attention::TokenLayout layout = spec_.layout();
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const std::string path = "transformer.resblocks." + std::to_string(i);
    if (recorder.enter_block(path, x)) x = blocks_[i]->forward(x, layout, path, recorder);
  }
  recorder.check_resumed();
  const at::Tensor pooled = (*ln_post_)(x.select(1, 0));
  recorder.output("out", "ln_post", pooled);
  result.logits = at::matmul(pooled, proj_);
  return result;
}

}  // namespace attnlab::models
