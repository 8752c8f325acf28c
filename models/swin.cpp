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
    result.logits = pooled_head(x, *norm_, head_, recorder);
    return result;
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

std::string swin_mechanism(const Json&) {
  return kSwinFamily;  // (shifted) window attention, the mechanism named after the family
}

std::vector<std::string> swin_archs() {
  return {kSwinFamily};
}

std::vector<std::string> swin_official_names() {
  return {"swin_tiny_patch4_window7_224", "swin_small_patch4_window7_224",
          "swin_base_patch4_window7_224"};
}

Json swin_official_config(const std::string& name) {
  // microsoft/Swin-Transformer configs/swin/*_patch4_window7_224.yaml: T embed 96, depths
  // [2,2,6,2], heads [3,6,12,24]; S depths [2,2,18,2]; B embed 128, heads [4,8,16,32].
  Json c = {{"arch", kSwinFamily}, {"img_size", 224},  {"patch_size", 4}, {"window_size", 7},
            {"mlp_ratio", 4.0},    {"qkv_bias", true}, {"ape", false},    {"patch_norm", true},
            {"num_classes", 1000}, {"ln_eps", 1e-5}};
  if (name == "swin_tiny_patch4_window7_224") {
    c["embed_dim"] = 96;
    c["depths"] = {2, 2, 6, 2};
    c["num_heads"] = {3, 6, 12, 24};
  } else if (name == "swin_small_patch4_window7_224") {
    c["embed_dim"] = 96;
    c["depths"] = {2, 2, 18, 2};
    c["num_heads"] = {3, 6, 12, 24};
  } else if (name == "swin_base_patch4_window7_224") {
    c["embed_dim"] = 128;
    c["depths"] = {2, 2, 18, 2};
    c["num_heads"] = {4, 8, 16, 32};
  } else {
    throw ModelError("swin: unknown official model '" + name +
                     "' (known: " + text::join(swin_official_names()) + ")");
  }
  return c;
}

}  // namespace attnlab::models
