// RAVLT (SPEC §2.3): stem (patch_embed) → stages layers.i (RALA at stages 1–2, RoPE
// softmax at 3–4 by default, a stride-2 conv + BN downsample after all but the last) →
// head: 1×1 conv proj, BN norm, Swish, global average pool, 1×1-conv classifier `head`.
// NCHW throughout; recorded outputs are NCHW like the reference's. The config keys and
// their defaults are documented on RavltConfig (ravlt.h).
#include "models/ravlt.h"

#include <ATen/ATen.h>

#include <cctype>

#include "core/io/text.h"
#include "core/nn/state_loading.h"
#include "models/model_family.h"
#include "models/ravlt_blocks.h"
#include "models/size_table.h"

namespace attnlab::models {
namespace {

const char* const kRavltFamily = "ravlt";

[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw ModelError(std::string(kRavltFamily) + " config: '" + key + "' " + what);
}

std::string registered_mechanism(const std::string& stage_attention) {
  if (stage_attention == "rala") return "rala";
  if (stage_attention == "softmax" || stage_attention == "softmax_rope") return "softmax_rope";
  bad("stage_attention",
      "has '" + stage_attention + "'; each stage is \"rala\" or \"softmax\" (RoPE softmax)");
}

class RavltBackbone : public Backbone {
 public:
  explicit RavltBackbone(const RavltConfig& c) : embed_dims_(c.embed_dims) {
    stem_ = register_module("patch_embed", std::make_shared<ravlt::Stem>(c.embed_dims[0]));
    auto layers = register_module("layers", std::make_shared<torch::nn::Module>());
    const size_t stages = c.embed_dims.size();
    for (size_t i = 0; i < stages; ++i) {
      ravlt::StageShape s;
      s.block.dim = c.embed_dims[i];
      s.block.heads = c.num_heads[i];
      s.block.hidden = static_cast<int64_t>(c.mlp_ratio * static_cast<double>(c.embed_dims[i]));
      s.block.mechanism = registered_mechanism(c.stage_attention[i]);
      s.block.layerscale = c.layerscale;
      s.depth = c.depths[i];
      s.out_dim = i + 1 < stages ? c.embed_dims[i + 1] : 0;
      stages_.push_back(
          layers->register_module(std::to_string(i), std::make_shared<ravlt::Stage>(s)));
    }
    attention::Conv2dLayer::Shape proj;
    proj.in = c.embed_dims.back();
    proj.out = c.projection;
    proj_ = attention::add_layer<attention::Conv2dLayer>(*this, "proj", proj);
    norm_ = register_module("norm", std::make_shared<BatchNorm2dLayer>(c.projection));
    attention::Conv2dLayer::Shape head;
    head.in = c.projection;
    head.out = c.num_classes;
    head_ = attention::add_layer<attention::Conv2dLayer>(*this, "head", head);
  }

  std::string arch() const override { return kRavltFamily; }
  // The stem's stride 4, then each stage's padded stride-2 downsampling (ceil).
  std::vector<StageShape> stage_shapes(int64_t height, int64_t width) const override {
    std::vector<StageShape> out;
    int64_t h = (height + 3) / 4, w = (width + 3) / 4;
    for (size_t i = 0; i < embed_dims_.size(); ++i, h = (h + 1) / 2, w = (w + 1) / 2)
      out.push_back({attention::grid_layout(h, w, static_cast<int>(i)), embed_dims_[i]});
    return out;
  }

  ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) override {
    if (images.dim() != 4 || images.size(1) != 3)
      throw ModelError("ravlt: images must be (B, 3, H, W), got " +
                       nn::shape_string(images.sizes()));
    ForwardResult result;
    ForwardRecorder recorder(options, result);
    at::Tensor x;
    if (!recorder.skipping()) {
      x = (*stem_)(images);
      recorder.output("out", "patch_embed", x);
    }
    for (size_t i = 0; i < stages_.size(); ++i) x = (*stages_[i])(x, static_cast<int>(i), recorder);
    recorder.check_resumed();
    result.logits = tail(x, &recorder);
    return result;
  }

  // A block output is NCHW: the grid's mean per channel, before the tail.
  at::Tensor readout_features(const at::Tensor& tokens) const override {
    if (tokens.dim() != 4)
      throw ModelError("ravlt: a block output is (B, C, H, W), got " +
                       nn::shape_string(tokens.sizes()));
    return tokens.mean({2, 3});
  }
  // The tail reads the last stage's width only (no stage after it downsamples).
  at::Tensor readout_logits(const at::Tensor& tokens) const override {
    if (tokens.dim() != 4 || tokens.size(1) != embed_dims_.back())
      throw ModelError("ravlt: only the last stage's blocks (B, " +
                       std::to_string(embed_dims_.back()) +
                       ", H, W) can go through the projection, norm and head; got " +
                       nn::shape_string(tokens.sizes()));
    return tail(tokens, nullptr);
  }

 private:
  // The eval forward after the last stage (1x1 projection, BN, Swish, mean, 1x1 head),
  // which readout_logits runs on any block of the last stage; recorder null there.
  at::Tensor tail(const at::Tensor& last, ForwardRecorder* recorder) const {
    at::Tensor x = (*proj_)(last);
    if (recorder) recorder->output("out", "proj", x);
    x = (*norm_)(x);
    if (recorder) recorder->output("out", "norm", x);
    x = at::silu(x).mean({2, 3}, /*keepdim=*/true);
    return (*head_)(x).flatten(1);
  }

  std::vector<int64_t> embed_dims_;
  std::shared_ptr<ravlt::Stem> stem_;
  std::vector<std::shared_ptr<ravlt::Stage>> stages_;
  std::shared_ptr<attention::Conv2dLayer> proj_, head_;
  std::shared_ptr<BatchNorm2dLayer> norm_;
};

}  // namespace

RavltConfig parse_ravlt_config(const Json& config) {
  RavltConfig c;
  c.embed_dims = get_ints(config, "embed_dims", kRavltFamily);
  c.depths = get_ints(config, "depths", kRavltFamily);
  c.num_heads = get_ints(config, "num_heads", kRavltFamily);
  const size_t stages = c.embed_dims.size();
  if (stages == 0) bad("embed_dims", "must list at least one stage");
  const std::string count = std::to_string(stages);
  if (c.depths.size() != stages) bad("depths", "must have one entry per stage (" + count + ")");
  if (c.num_heads.size() != stages)
    bad("num_heads", "must have one entry per stage (" + count + ")");
  if (c.embed_dims[0] < 2 || c.embed_dims[0] % 2 != 0)
    bad("embed_dims", "must start with an even width (the stem's middle width is C/2)");
  for (size_t i = 0; i < stages; ++i) {
    const std::string at_stage = " at stage " + std::to_string(i);
    if (c.embed_dims[i] < 1) bad("embed_dims", "must be positive" + at_stage);
    if (c.depths[i] < 1) bad("depths", "must be at least 1" + at_stage);
    if (c.num_heads[i] < 1 || c.embed_dims[i] % c.num_heads[i] != 0 ||
        (c.embed_dims[i] / c.num_heads[i]) % 4 != 0)
      bad("num_heads", "must divide the width " + std::to_string(c.embed_dims[i]) + at_stage +
                           " into heads whose dim is a multiple of 4 (2-D RoPE)");
  }
  c.mlp_ratio = get_real(config, "mlp_ratio", kRavltFamily, 3.5);
  for (const int64_t dim : c.embed_dims)
    if (!(c.mlp_ratio > 0.0) || static_cast<int64_t>(c.mlp_ratio * static_cast<double>(dim)) < 1)
      bad("mlp_ratio", "must give a positive FFN width int(mlp_ratio · C)");
  c.projection = get_int(config, "projection", kRavltFamily, 1024);
  if (c.projection < 1) bad("projection", "must be positive");
  c.num_classes = get_int(config, "num_classes", kRavltFamily, 1000);
  if (c.num_classes < 1) bad("num_classes", "must be positive");
  if (config.contains("stage_attention")) {
    c.stage_attention = get_strings(config, "stage_attention", kRavltFamily);
    if (c.stage_attention.size() != stages)
      bad("stage_attention", "must have one entry per stage (" + count + ")");
    for (const auto& s : c.stage_attention) registered_mechanism(s);
  } else {
    // The released layout: linear attention at the two high-resolution stages only.
    for (size_t i = 0; i < stages; ++i) c.stage_attention.push_back(i < 2 ? "rala" : "softmax");
  }
  c.layerscale = get_bool(config, "layerscale", kRavltFamily, true);
  if (config.contains("input_hw")) {
    c.input_hw = get_ints(config, "input_hw", kRavltFamily);
    if (c.input_hw.size() != 2 || c.input_hw[0] < 1 || c.input_hw[1] < 1)
      bad("input_hw", "must be [H, W] with positive sizes");
  }
  return c;
}

namespace {

// The released sizes (SPEC §2.3); the head counts of B and L follow from the manifests'
// RoPE.angle lengths (d/2): head dim 96 at stages 1–2 and 64 at stages 3–4.
struct RavltSize {
  const char* name;
  std::vector<int64_t> embed_dims, depths, num_heads;
};

const std::vector<RavltSize>& ravlt_sizes() {
  static const std::vector<RavltSize> sizes = {
      {"ravlt_t", {64, 128, 256, 512}, {2, 2, 6, 2}, {1, 2, 4, 8}},
      {"ravlt_s", {64, 128, 320, 512}, {3, 5, 9, 3}, {1, 2, 5, 8}},
      {"ravlt_b", {96, 192, 384, 512}, {4, 6, 12, 6}, {1, 2, 6, 8}},
      {"ravlt_l", {96, 192, 448, 640}, {4, 7, 19, 8}, {1, 2, 7, 10}},
  };
  return sizes;
}

}  // namespace

std::vector<std::string> ravlt_official_names() {
  return size_names(ravlt_sizes());
}

Json ravlt_official_config(const std::string& name) {
  const auto& size = size_named(ravlt_sizes(), name, "ravlt");
  return {{"arch", kRavltFamily},   {"embed_dims", size.embed_dims},
          {"depths", size.depths},  {"num_heads", size.num_heads},
          {"mlp_ratio", 3.5},       {"projection", 1024},
          {"num_classes", 1000},    {"layerscale", true},
          {"input_hw", {224, 224}}, {"stage_attention", {"rala", "rala", "softmax", "softmax"}}};
}

std::shared_ptr<Backbone> make_ravlt(const Json& config) {
  return std::make_shared<RavltBackbone>(parse_ravlt_config(config));
}

namespace {

std::string ravlt_mechanism(const Json&) {
  return "rala";  // its defining mechanism (a last stage may run RoPE softmax instead)
}

// A config read off a RAVLT checkpoint's shapes: each stage's width (norm1), depth and
// heads (RoPE angles: head dim / 2), the head's projection, classes and MLP ratio.
Derivation derive_ravlt(const ShapeMap& w) {
  Derivation d = Derivation::from_preset("ravlt_t");
  const int64_t stages = count_indices(w, "layers.");
  if (stages < 1) throw CannotDerive{};
  std::vector<int64_t> dims, depths, heads;
  for (int64_t i = 0; i < stages; ++i) {
    const std::string s = "layers." + std::to_string(i) + ".";
    const int64_t dim = need_shape(w, s + "blocks.0.norm1.norm.weight", 1)[0];
    const int64_t half_head = need_shape(w, s + "RoPE.angle", 1)[0];
    if (half_head < 1 || dim % (2 * half_head) != 0) throw CannotDerive{};
    dims.push_back(dim);
    depths.push_back(count_indices(w, s + "blocks."));
    heads.push_back(dim / (2 * half_head));
  }
  d.set("embed_dims", dims, "norm1 widths");
  d.set("depths", depths, "layers.i.blocks.N");
  d.set("num_heads", heads, "RoPE.angle lengths");
  d.set("projection", leading_size(w, "proj.weight"), "proj.weight");
  d.set("num_classes", leading_size(w, "head.weight"), "head.weight");
  d.set("mlp_ratio",
        static_cast<double>(need_shape(w, "layers.0.blocks.0.ffn.fc1.weight", 4)[0]) / dims[0],
        "ffn.fc1.weight");
  return d;
}

std::vector<PresetEntry> ravlt_presets() {
  std::vector<PresetEntry> p;
  for (const auto& size : ravlt_sizes()) {
    const std::string letter(1, static_cast<char>(std::toupper(size.name[6])));  // ravlt_t → T
    p.push_back(
        {size.name,
         "RAVLT-" + std::string(1, size.name[6]) + ", RALA in stages 1-2, RoPE softmax in 3-4",
         ravlt_official_config(size.name),
         "the RALA release RAVLT_" + letter + ".pth ({'model', 'model_ema'})"});
  }
  return p;
}

// The convolutions run at any size; input_hw records it.
Json ravlt_at_size(Json config, int64_t height, int64_t width, const std::string&) {
  config["input_hw"] = {height, width};
  return config;
}

}  // namespace

ModelFamily ravlt_family() {
  ModelFamily f;
  f.name = kRavltFamily;
  f.archs = {kRavltFamily};
  f.make = make_ravlt;
  f.mechanism = ravlt_mechanism;
  f.presets = ravlt_presets;
  // Stages of blocks (layers.i.blocks.j) with RALA's fused qkvo projection.
  f.key_rules.push_back(staged_key_rule(kRavltFamily, {".attn.qkvo."}, derive_ravlt));
  // The official eval: resize 256 for 224 (crop_pct 0.875), bicubic, ImageNet mean/std.
  f.preprocessing = imagenet_crop_0875;
  f.at_size = ravlt_at_size;
  return f;
}

}  // namespace attnlab::models
