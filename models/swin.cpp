// Swin backbone: config reading and checking, the model (patch embedding, optional absolute
// position embedding, stages of W-MSA / SW-MSA blocks with PatchMerging between them,
// LayerNorm, token mean, head) and the official configs. Blocks are in swin_blocks.cpp.
#include "models/swin.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>

#include "core/attention/layers.h"
#include "core/io/text.h"
#include "core/nn/initial_values.h"
#include "core/nn/state_loading.h"
#include "models/model_family.h"
#include "models/size_table.h"
#include "models/stage_runner.h"
#include "models/swin_blocks.h"

namespace attnlab::models {
namespace {

const char* const kSwinFamily = "swin";

[[noreturn]] void swin_fail(const std::string& message) {
  throw ModelError(std::string(kSwinFamily) + " config: " + message);
}

struct SwinConfig {
  int64_t img_size = 224, patch_size = 4, embed_dim = 0, window_size = 7, num_classes = 1000;
  std::vector<int64_t> depths, num_heads;
  double mlp_ratio = 4.0, ln_eps = 1e-5;
  bool qkv_bias = true, ape = false, patch_norm = true;

  int64_t stages() const { return static_cast<int64_t>(depths.size()); }
  int64_t dim(int64_t stage) const { return embed_dim << stage; }
  int64_t grid(int64_t stage) const { return (img_size / patch_size) >> stage; }
};

SwinConfig read_swin_config(const Json& c) {
  if (!c.is_object()) swin_fail("expected a JSON object");
  if (c.contains("arch") && get_string(c, "arch", kSwinFamily, "") != kSwinFamily)
    swin_fail("'arch' is '" + get_string(c, "arch", kSwinFamily, "") + "', expected 'swin'");
  SwinConfig k;
  if (c.contains("img_size") && c["img_size"].is_array())
    swin_fail("'img_size' must be one integer");
  k.img_size = get_int(c, "img_size", kSwinFamily, 224);
  k.patch_size = get_int(c, "patch_size", kSwinFamily, 4);
  k.embed_dim = get_int(c, "embed_dim", kSwinFamily);
  k.depths = get_ints(c, "depths", kSwinFamily);
  k.num_heads = get_ints(c, "num_heads", kSwinFamily);
  k.window_size = get_int(c, "window_size", kSwinFamily, 7);
  k.mlp_ratio = get_real(c, "mlp_ratio", kSwinFamily, 4.0);
  k.qkv_bias = get_bool(c, "qkv_bias", kSwinFamily, true);
  k.ape = get_bool(c, "ape", kSwinFamily, false);
  k.patch_norm = get_bool(c, "patch_norm", kSwinFamily, true);
  k.num_classes = get_int(c, "num_classes", kSwinFamily, 1000);
  k.ln_eps = get_real(c, "ln_eps", kSwinFamily, 1e-5);

  if (k.patch_size <= 0) swin_fail("'patch_size' must be positive");
  if (k.img_size < k.patch_size) swin_fail("'img_size' must be at least 'patch_size'");
  if (k.embed_dim <= 0) swin_fail("'embed_dim' must be positive");
  if (k.window_size <= 0) swin_fail("'window_size' must be positive");
  if (k.depths.empty()) swin_fail("'depths' must list at least one stage");
  if (k.stages() > 8)
    swin_fail("'depths' lists " + std::to_string(k.stages()) + " stages (at most 8)");
  if (static_cast<int64_t>(k.num_heads.size()) != k.stages())
    swin_fail("'num_heads' has " + std::to_string(k.num_heads.size()) +
              " entries but 'depths' has " + std::to_string(k.stages()));
  if (!(k.mlp_ratio > 0)) swin_fail("'mlp_ratio' must be positive");
  if (!(k.ln_eps > 0)) swin_fail("'ln_eps' must be positive");
  if (k.num_classes < 0) swin_fail("'num_classes' must be >= 0 (0: no head)");
  const int64_t patches = k.img_size / k.patch_size;
  for (int64_t i = 0; i < k.stages(); ++i) {
    const auto stage = "stage " + std::to_string(i) + ": ";
    if (k.depths[i] <= 0) swin_fail(stage + "'depths' entries must be positive");
    if (k.num_heads[i] <= 0 || k.dim(i) % k.num_heads[i] != 0)
      swin_fail(stage + "'num_heads' " + std::to_string(k.num_heads[i]) +
                " must be positive and divide the stage width " + std::to_string(k.dim(i)));
    if (i > 0 && (k.grid(i - 1) % 2 != 0 || k.grid(i) == 0))
      swin_fail(stage + "PatchMerging needs an even grid, but the " + std::to_string(patches) +
                "-patch side halves to " + std::to_string(k.grid(i - 1)));
    // The window a block of this stage uses (clamped to the grid, as the reference).
    const int64_t g = k.grid(i), w = std::min(g, k.window_size);
    if (g % w != 0)
      swin_fail(stage + "the " + std::to_string(g) + "x" + std::to_string(g) +
                " grid is not a multiple of the window " + std::to_string(w) +
                " (Swin does not pad)");
  }
  return k;
}

class Swin : public Backbone {
 public:
  explicit Swin(const SwinConfig& k) : config_(k) {
    patch_embed_ = register_module(
        "patch_embed",
        std::make_shared<swin::PatchEmbed>(k.patch_size, k.embed_dim, k.patch_norm, k.ln_eps));
    if (k.ape)  // trunc_normal(std 0.02) in the reference
      ape_ = register_parameter("absolute_pos_embed",
                                nn::initial_normal({1, k.grid(0) * k.grid(0), k.embed_dim}, 0.02));
    auto layers = register_module("layers", std::make_shared<torch::nn::Module>());
    for (int64_t i = 0; i < k.stages(); ++i) {
      auto stage =
          layers->register_module(std::to_string(i), std::make_shared<torch::nn::Module>());
      auto blocks = stage->register_module("blocks", std::make_shared<torch::nn::Module>());
      swin::BlockShape s;
      s.dim = k.dim(i);
      s.heads = k.num_heads[i];
      s.hidden = static_cast<int64_t>(static_cast<double>(s.dim) * k.mlp_ratio);
      s.height = s.width = k.grid(i);
      s.window = k.window_size;
      s.qkv_bias = k.qkv_bias;
      s.ln_eps = k.ln_eps;
      std::vector<std::shared_ptr<swin::Block>> stage_blocks;
      for (int64_t j = 0; j < k.depths[i]; ++j) {
        s.shift = j % 2 == 0 ? 0 : k.window_size / 2;
        try {
          stage_blocks.push_back(
              blocks->register_module(std::to_string(j), std::make_shared<swin::Block>(s)));
        } catch (const attention::AttentionError& e) {
          swin_fail("stage " + std::to_string(i) + ": " + e.what());
        }
      }
      blocks_.push_back(std::move(stage_blocks));
      downsamples_.push_back(
          i + 1 < k.stages()
              ? stage->register_module("downsample",
                                       std::make_shared<swin::PatchMerging>(s.dim, k.ln_eps))
              : nullptr);
    }
    const int64_t features = k.dim(k.stages() - 1);
    norm_ = register_module("norm", std::make_shared<LayerNormLayer>(features, k.ln_eps));
    if (k.num_classes > 0)
      head_ = attention::add_layer<attention::LinearLayer>(*this, "head", features, k.num_classes,
                                                           true);
  }

  std::string arch() const override { return kSwinFamily; }

  // Built for img_size (forward_images), whatever the size asked about.
  std::vector<StageShape> stage_shapes(int64_t, int64_t) const override {
    std::vector<StageShape> out;
    for (int64_t i = 0; i < config_.stages(); ++i)
      out.push_back({attention::grid_layout(config_.grid(i), config_.grid(i), static_cast<int>(i)),
                     config_.dim(i)});
    return out;
  }

  ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) override {
    // The attn_mask buffers and clamped windows are built for img_size (the reference
    // asserts the input size as well).
    const int64_t size = config_.img_size;
    if (images.dim() != 4 || images.size(1) != 3 || images.size(2) != size ||
        images.size(3) != size)
      throw ModelError("swin: expected images (B, 3, " + std::to_string(size) + ", " +
                       std::to_string(size) + ") (the model's img_size), got " +
                       nn::shape_string(images.sizes()));
    ForwardResult result;
    ForwardRecorder recorder(options, result);
    at::Tensor x;
    if (!recorder.skipping()) {
      x = (*patch_embed_)(images);
      recorder.output("out", "patch_embed", x);
      if (ape_.defined()) x = x + ape_;
    }
    x = run_stages(x, config_.grid(0), config_.grid(0), blocks_, downsamples_, recorder);
    result.logits = pooled_head(x, *norm_, head_, &recorder);
    return result;
  }

  at::Tensor readout_features(const at::Tensor& tokens) const override {
    return pooled_readout_features(arch(), tokens);
  }
  at::Tensor readout_logits(const at::Tensor& tokens) const override {
    return pooled_readout_logits(arch(), tokens, config_.dim(config_.stages() - 1), *norm_, head_);
  }

 private:
  SwinConfig config_;
  std::shared_ptr<swin::PatchEmbed> patch_embed_;
  at::Tensor ape_;
  std::vector<std::vector<std::shared_ptr<swin::Block>>> blocks_;
  std::vector<std::shared_ptr<swin::PatchMerging>> downsamples_;
  std::shared_ptr<LayerNormLayer> norm_;
  std::shared_ptr<attention::LinearLayer> head_;
};

}  // namespace

std::shared_ptr<Backbone> make_swin(const Json& config) {
  return std::make_shared<Swin>(read_swin_config(config));
}

namespace {

// The released ImageNet-1k sizes: microsoft/Swin-Transformer
// configs/swin/*_patch4_window7_224.yaml.
struct SwinSize {
  const char* name;
  char letter;
  int64_t embed_dim;
  std::vector<int64_t> depths, num_heads;
};

const std::vector<SwinSize>& swin_sizes() {
  static const std::vector<SwinSize> sizes = {
      {"swin_tiny_patch4_window7_224", 'T', 96, {2, 2, 6, 2}, {3, 6, 12, 24}},
      {"swin_small_patch4_window7_224", 'S', 96, {2, 2, 18, 2}, {3, 6, 12, 24}},
      {"swin_base_patch4_window7_224", 'B', 128, {2, 2, 18, 2}, {4, 8, 16, 32}},
  };
  return sizes;
}

}  // namespace

std::vector<std::string> swin_official_names() {
  return size_names(swin_sizes());
}

Json swin_official_config(const std::string& name) {
  const auto& size = size_named(swin_sizes(), name, "swin");
  return {{"arch", kSwinFamily},
          {"img_size", 224},
          {"patch_size", 4},
          {"window_size", 7},
          {"embed_dim", size.embed_dim},
          {"depths", size.depths},
          {"num_heads", size.num_heads},
          {"mlp_ratio", 4.0},
          {"qkv_bias", true},
          {"ape", false},
          {"patch_norm", true},
          {"num_classes", 1000},
          {"ln_eps", 1e-5}};
}

namespace {

std::string swin_mechanism(const Json&) {
  return kSwinFamily;  // (shifted) window attention, the mechanism named after the family
}

// A config read off a Swin checkpoint's shapes: widths, depths, heads (the bias tables'
// columns), windows (their (2w − 1)² rows), and the grid from a shifted block's attn_mask
// ((G/w)² windows) or a clamped stage (G = w).
Derivation derive_swin(const ShapeMap& w) {
  Derivation d = Derivation::from_preset("swin_tiny_patch4_window7_224");
  const auto& patch = need_shape(w, "patch_embed.proj.weight", 4);
  const int64_t c = patch[0], stages = count_indices(w, "layers.");
  if (stages < 1 || patch[2] != patch[3]) throw CannotDerive{};
  std::vector<int64_t> depths, heads, windows;
  int64_t grid = 0;  // stage 0's grid side, once some stage tells it
  for (int64_t i = 0; i < stages; ++i) {
    const std::string s = "layers." + std::to_string(i) + ".blocks.";
    depths.push_back(count_indices(w, s));
    const auto& table = need_shape(w, s + "0.attn.relative_position_bias_table", 2);
    heads.push_back(table[1]);
    windows.push_back((square_side(table[0]) + 1) / 2);
    if (const auto mask = w.find(s + "1.attn_mask"); grid == 0 && mask != w.end()) {
      if (mask->second.size() != 3) throw CannotDerive{};
      grid = (square_side(mask->second[0]) * windows.back()) << i;
    }
  }
  const int64_t window = *std::max_element(windows.begin(), windows.end());
  for (int64_t i = 0; i < stages && grid == 0; ++i)
    if (windows[i] < window) grid = windows[i] << i;  // a stage the window was clamped to
  d.set("embed_dim", c, "patch_embed.proj.weight");
  d.set("patch_size", patch[2], "patch_embed.proj.weight");
  d.set("depths", depths, "layers.i.blocks.N");
  d.set("num_heads", heads, "relative_position_bias_table columns");
  d.set("window_size", window, "relative_position_bias_table rows");
  if (grid > 0)
    d.set("img_size", grid * patch[2], "attn_mask windows");
  else
    d.assume("img_size", d.r.config["img_size"], "no shifted block tells the grid");
  d.set("num_classes", leading_size(w, "head.weight"), "head.weight");
  d.set("mlp_ratio",
        static_cast<double>(need_shape(w, "layers.0.blocks.0.mlp.fc1.weight", 2)[0]) / c,
        "mlp.fc1.weight");
  d.set("qkv_bias", w.count("layers.0.blocks.0.attn.qkv.bias") > 0, "qkv.bias");
  d.set("ape", w.count("absolute_pos_embed") > 0, "absolute_pos_embed");
  d.set("patch_norm", w.count("patch_embed.norm.weight") > 0, "patch_embed.norm");
  return d;
}

std::vector<PresetEntry> swin_presets() {
  std::vector<PresetEntry> p;
  for (const auto& size : swin_sizes())
    p.push_back({size.name, std::string("Swin-") + size.letter + ", shifted-window attention",
                 swin_official_config(size.name),
                 "the Swin release " + std::string(size.name) + ".pth ({'model': ...})"});
  return p;
}

}  // namespace

ModelFamily swin_family() {
  ModelFamily f;
  f.name = kSwinFamily;
  f.archs = {kSwinFamily};
  f.make = make_swin;
  f.mechanism = swin_mechanism;
  f.presets = swin_presets;
  // Stages of blocks (layers.i.blocks.j) with relative position bias tables.
  f.key_rules.push_back(
      staged_key_rule(kSwinFamily, {".attn.relative_position_bias_table"}, derive_swin));
  // The official eval: resize int(256 / 224 · 224) = 256 (crop 0.875), bicubic.
  f.preprocessing = imagenet_crop_0875;
  // No at_size: its attn_mask buffers and clamped windows are built for img_size.
  return f;
}

}  // namespace attnlab::models
