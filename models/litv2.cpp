// LITv2 backbone: config reading and checking, the model (stem, four stages of blocks with
// DTM downsamples between them, LayerNorm, token mean, head), the official full-size configs
// and the Lo-Fi head counts read off a checkpoint. Blocks are in litv2_blocks.cpp.
#include "models/litv2.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <utility>

#include "core/attention/registry.h"
#include "core/io/text.h"
#include "models/litv2_blocks.h"
#include "models/model_family.h"
#include "models/size_table.h"
#include "models/stage_runner.h"

namespace attnlab::models {
namespace {

const char* const kLitv2Family = "litv2";

[[noreturn]] void litv2_fail(const std::string& message) {
  throw ModelError(std::string(kLitv2Family) + " config: " + message);
}

struct Litv2Config {
  int64_t img_size = 224, patch_size = 4, embed_dim = 0, num_classes = 1000;
  std::vector<int64_t> depths, num_heads, local_ws, lofi_heads;
  double mlp_ratio = 4.0, alpha = 0.9, ln_eps = 1e-5;
  bool qkv_bias = true;
  std::string attention = "hilo";  // the stages' mechanism (LITv2 with attention X)
  std::vector<std::map<std::string, double>> attention_options;  // per stage

  int64_t stages() const { return static_cast<int64_t>(depths.size()); }
  int64_t dim(int64_t stage) const { return embed_dim << stage; }
};

std::vector<int64_t> ints_or(const Json& c, const std::string& key, std::vector<int64_t> fallback) {
  return c.contains(key) ? get_ints(c, key, kLitv2Family) : fallback;
}

Litv2Config read_litv2_config(const Json& c) {
  if (!c.is_object()) litv2_fail("expected a JSON object");
  if (c.contains("arch") && get_string(c, "arch", kLitv2Family, "") != "litv2")
    litv2_fail("'arch' is '" + get_string(c, "arch", kLitv2Family, "") + "', expected 'litv2'");
  Litv2Config k;
  k.img_size = get_int(c, "img_size", kLitv2Family, 224);
  k.patch_size = get_int(c, "patch_size", kLitv2Family, 4);
  k.embed_dim = get_int(c, "embed_dim", kLitv2Family);
  k.depths = get_ints(c, "depths", kLitv2Family);
  k.num_heads = get_ints(c, "num_heads", kLitv2Family);
  k.mlp_ratio = get_real(c, "mlp_ratio", kLitv2Family, 4.0);
  k.qkv_bias = get_bool(c, "qkv_bias", kLitv2Family, true);
  k.alpha = get_real(c, "alpha", kLitv2Family, 0.9);
  k.local_ws = ints_or(c, "local_ws", {0, 0, 2, 1});
  k.num_classes = get_int(c, "num_classes", kLitv2Family, 1000);
  k.ln_eps = get_real(c, "ln_eps", kLitv2Family, 1e-5);
  k.lofi_heads = ints_or(c, "lofi_heads", std::vector<int64_t>(k.depths.size(), -1));
  k.attention = get_string(c, "attention", kLitv2Family, "hilo");
  if (!attention::find_mechanism(k.attention))
    litv2_fail("'attention' '" + k.attention + "' is not a registered mechanism (attnlab " +
               "mechanisms lists them)");
  k.attention_options = get_stage_attention_options(c, k.attention, kLitv2Family, k.depths.size());
  if (k.attention == "hilo" && c.contains("attention_options"))
    litv2_fail(
        "'attention_options' is for another attention; HiLo's are alpha, local_ws and "
        "lofi_heads");

  if (k.img_size <= 0) litv2_fail("'img_size' must be positive");
  if (k.patch_size <= 0) litv2_fail("'patch_size' must be positive");
  if (k.embed_dim <= 0) litv2_fail("'embed_dim' must be positive");
  if (k.depths.empty()) litv2_fail("'depths' must list at least one stage");
  if (k.stages() > 8)
    litv2_fail("'depths' lists " + std::to_string(k.stages()) + " stages (at most 8)");
  const auto n = std::to_string(k.stages());
  const std::pair<const char*, const std::vector<int64_t>*> per_stage[] = {
      {"num_heads", &k.num_heads}, {"local_ws", &k.local_ws}, {"lofi_heads", &k.lofi_heads}};
  for (const auto& [key, values] : per_stage)
    if (static_cast<int64_t>(values->size()) != k.stages())
      litv2_fail("'" + std::string(key) + "' has " + std::to_string(values->size()) +
                 " entries but 'depths' has " + n);
  if (!(k.mlp_ratio > 0)) litv2_fail("'mlp_ratio' must be positive");
  if (!(k.alpha >= 0 && k.alpha <= 1)) litv2_fail("'alpha' must be in [0, 1]");
  if (!(k.ln_eps > 0)) litv2_fail("'ln_eps' must be positive");
  if (k.num_classes < 0) litv2_fail("'num_classes' must be >= 0 (0: no head)");
  for (int64_t i = 0; i < k.stages(); ++i) {
    const auto stage = "stage " + std::to_string(i) + ": ";
    if (k.depths[i] <= 0) litv2_fail(stage + "'depths' entries must be positive");
    if (k.local_ws[i] < 0) litv2_fail(stage + "'local_ws' entries must be >= 0 (0: no attention)");
    if (k.local_ws[i] == 0) continue;
    if (k.num_heads[i] <= 0 || k.dim(i) % k.num_heads[i] != 0)
      litv2_fail(stage + "'num_heads' " + std::to_string(k.num_heads[i]) +
                 " must be positive and divide the stage width " + std::to_string(k.dim(i)));
    if (k.lofi_heads[i] < -1 || k.lofi_heads[i] > k.num_heads[i])
      litv2_fail(stage + "'lofi_heads' " + std::to_string(k.lofi_heads[i]) + " must be -1 or 0.." +
                 std::to_string(k.num_heads[i]));
    if (k.local_ws[i] == 1 && k.lofi_heads[i] >= 0 && k.lofi_heads[i] != k.num_heads[i])
      litv2_fail(stage + "'local_ws' 1 makes all heads Lo-Fi, but 'lofi_heads' is " +
                 std::to_string(k.lofi_heads[i]));
  }
  return k;
}

class Litv2 : public Backbone {
 public:
  explicit Litv2(const Litv2Config& k) : config_(k) {
    patch_embed_ = register_module(
        "patch_embed", std::make_shared<litv2::PatchEmbed>(k.patch_size, k.embed_dim, k.ln_eps));
    auto layers = register_module("layers", std::make_shared<torch::nn::Module>());
    for (int64_t i = 0; i < k.stages(); ++i) {
      auto stage =
          layers->register_module(std::to_string(i), std::make_shared<torch::nn::Module>());
      auto blocks = stage->register_module("blocks", std::make_shared<torch::nn::Module>());
      litv2::BlockShape s;
      s.dim = k.dim(i);
      s.heads = k.num_heads[i];
      s.hidden = static_cast<int64_t>(static_cast<double>(s.dim) * k.mlp_ratio);
      s.window = k.local_ws[i];
      s.alpha = k.alpha;
      s.lofi_heads = k.lofi_heads[i];
      s.qkv_bias = k.qkv_bias;
      s.ln_eps = k.ln_eps;
      s.attention = k.attention;
      s.attention_options = k.attention_options[static_cast<size_t>(i)];
      std::vector<std::shared_ptr<litv2::Block>> stage_blocks;
      for (int64_t j = 0; j < k.depths[i]; ++j) {
        try {
          stage_blocks.push_back(
              blocks->register_module(std::to_string(j), std::make_shared<litv2::Block>(s)));
        } catch (const attention::AttentionError& e) {
          litv2_fail("stage " + std::to_string(i) + ": " + e.what());
        }
      }
      blocks_.push_back(std::move(stage_blocks));
      downsamples_.push_back(
          i + 1 < k.stages()
              ? stage->register_module("downsample",
                                       std::make_shared<litv2::Downsample>(s.dim, k.dim(i + 1)))
              : nullptr);
    }
    const int64_t features = k.dim(k.stages() - 1);
    norm_ = register_module("norm", std::make_shared<LayerNormLayer>(features, k.ln_eps));
    if (k.num_classes > 0)
      head_ = attention::add_layer<attention::LinearLayer>(*this, "head", features, k.num_classes,
                                                           true);
  }

  std::string arch() const override { return "litv2"; }
  // patch_embed: a p×p stride-p conv; each downsample a 2×2 stride-2 conv (no padding).
  std::vector<StageShape> stage_shapes(int64_t height, int64_t width) const override {
    std::vector<StageShape> out;
    for (int64_t i = 0; i < config_.stages(); ++i)
      out.push_back({attention::grid_layout(height / config_.patch_size >> i,
                                            width / config_.patch_size >> i, static_cast<int>(i)),
                     config_.dim(i)});
    return out;
  }

  ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) override {
    // Every stage after the stem halves the grid; the last stage needs at least one token.
    const int64_t min_side = config_.patch_size << (config_.stages() - 1);
    if (images.dim() != 4 || images.size(1) != 3 || images.size(2) < min_side ||
        images.size(3) < min_side)
      throw ModelError("litv2: expected images (B, 3, H, W) with H, W >= " +
                       std::to_string(min_side) + ", got " + nn::shape_string(images.sizes()));
    ForwardResult result;
    ForwardRecorder recorder(options, result);
    int64_t height = 0, width = 0;
    at::Tensor x;
    if (!recorder.skipping()) {
      x = (*patch_embed_)(images, height, width);
      recorder.output("out", "patch_embed", x);
    }
    x = run_stages(x, height, width, blocks_, downsamples_, recorder);
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
  Litv2Config config_;
  std::shared_ptr<litv2::PatchEmbed> patch_embed_;
  std::vector<std::vector<std::shared_ptr<litv2::Block>>> blocks_;
  std::vector<std::shared_ptr<litv2::Downsample>> downsamples_;
  std::shared_ptr<LayerNormLayer> norm_;
  std::shared_ptr<attention::LinearLayer> head_;
};

}  // namespace

std::shared_ptr<Backbone> make_litv2(const Json& config) {
  return std::make_shared<Litv2>(read_litv2_config(config));
}

namespace {

// The released sizes (SPEC §2.2): head dim 32 everywhere, α 0.9, HiLo windows [–, –, 2, 1].
struct Litv2Size {
  const char* name;
  const char* label;
  int64_t embed_dim;
  std::vector<int64_t> depths, num_heads;
};

const std::vector<Litv2Size>& litv2_sizes() {
  static const std::vector<Litv2Size> sizes = {
      {"litv2_s", "LITv2-s", 96, {2, 2, 6, 2}, {3, 6, 12, 24}},
      {"litv2_m", "LITv2-m", 96, {2, 2, 18, 2}, {3, 6, 12, 24}},
      {"litv2_b", "LITv2-b", 128, {2, 2, 18, 2}, {4, 8, 16, 32}},
  };
  return sizes;
}

}  // namespace

std::vector<std::string> litv2_official_names() {
  return size_names(litv2_sizes());
}

Json litv2_official_config(const std::string& name) {
  const auto& size = size_named(litv2_sizes(), name, "litv2");
  return {{"arch", "litv2"},       {"img_size", 224},
          {"patch_size", 4},       {"embed_dim", size.embed_dim},
          {"depths", size.depths}, {"num_heads", size.num_heads},
          {"mlp_ratio", 4.0},      {"qkv_bias", true},
          {"alpha", 0.9},          {"local_ws", {0, 0, 2, 1}},
          {"num_classes", 1000},   {"ln_eps", 1e-5}};
}

Json litv2_config_for_weights(Json config, const nn::TensorMap& weights) {
  Litv2Config k = read_litv2_config(config);
  std::vector<int64_t> lofi(k.depths.size(), -1);
  for (int64_t i = 0; i < k.stages(); ++i) {
    if (k.local_ws[i] == 0) continue;
    const int64_t head_dim = k.dim(i) / k.num_heads[i];
    for (int64_t j = 0; j < k.depths[i]; ++j) {
      const std::string p =
          "layers." + std::to_string(i) + ".blocks." + std::to_string(j) + ".attn.";
      int64_t l = -1;
      if (auto it = weights.find(p + "l_q.weight"); it != weights.end()) {
        const int64_t rows = it->second.dim() == 2 ? it->second.size(0) : -1;
        if (rows <= 0 || rows % head_dim != 0)
          litv2_fail("weights: " + p + "l_q.weight has shape " +
                     nn::shape_string(it->second.sizes()) + ", not (l·" + std::to_string(head_dim) +
                     ", C)");
        l = rows / head_dim;
      } else if (weights.count(p + "h_qkv.weight")) {
        l = 0;  // an all-Hi-Fi layer (alpha 0)
      } else {
        litv2_fail("weights: stage " + std::to_string(i) + " has attention (local_ws " +
                   std::to_string(k.local_ws[i]) + ") but neither " + p + "l_q.weight nor " + p +
                   "h_qkv.weight is present");
      }
      if (j > 0 && l != lofi[i])
        litv2_fail("weights: the blocks of stage " + std::to_string(i) +
                   " have different Lo-Fi head counts (" + std::to_string(lofi[i]) + " and " +
                   std::to_string(l) + ")");
      lofi[i] = l;
    }
  }
  config["lofi_heads"] = lofi;
  return config;
}

namespace {

// A config read off a LITv2 checkpoint's shapes: width and patch (the stem), stages and
// their depths, classes, MLP ratio; heads (head dim 32) and HiLo windows are assumed.
Derivation derive_litv2(const ShapeMap& w) {
  Derivation d = Derivation::from_preset("litv2_s");
  const auto& patch = need_shape(w, "patch_embed.proj.weight", 4);
  const int64_t c = patch[0], stages = count_indices(w, "layers.");
  if (stages < 1) throw CannotDerive{};
  std::vector<int64_t> depths, heads;
  for (int64_t i = 0; i < stages; ++i) {
    depths.push_back(count_indices(w, "layers." + std::to_string(i) + ".blocks."));
    heads.push_back(std::max<int64_t>((c << i) / 32, 1));
  }
  d.set("embed_dim", c, "patch_embed.proj.weight");
  d.set("patch_size", patch[2], "patch_embed.proj.weight");
  d.set("depths", depths, "layers.i.blocks.N");
  d.set("num_classes", leading_size(w, "head.weight"), "head.weight");
  d.set("mlp_ratio",
        static_cast<double>(need_shape(w, "layers.0.blocks.0.mlp.fc1.weight", 2)[0]) / c,
        "mlp.fc1.weight");
  d.assume("num_heads", heads, "head dim 32, as every LITv2");
  d.assume("local_ws", d.r.config["local_ws"], "HiLo windows of " + d.r.preset);
  return d;
}

std::vector<PresetEntry> litv2_presets() {
  std::vector<PresetEntry> p;
  for (const auto& size : litv2_sizes())
    p.push_back({size.name, std::string(size.label) + ", HiLo attention in stages 3-4",
                 litv2_official_config(size.name),
                 "the LITv2 release " + std::string(size.name) + ".pth ({'model': ...})"});
  return p;
}

// Any size the strides allow: both sides at least patch · 2^(stages − 1).
Json litv2_at_size(Json config, int64_t height, int64_t width, const std::string&) {
  const int64_t patch = get_int(config, "patch_size", kLitv2Family, 4);
  const auto stages = static_cast<int64_t>(get_ints(config, "depths", kLitv2Family).size());
  const int64_t min_side = patch << std::max<int64_t>(stages - 1, 0);
  if (height < min_side || width < min_side)
    throw ModelError("--img-size " + std::to_string(height) + "x" + std::to_string(width) +
                     ": litv2 needs both sides at least " + std::to_string(min_side) + " (patch " +
                     std::to_string(patch) + ", " + std::to_string(stages) + " stages)");
  config["input_size"] = {height, width};
  return config;
}

std::string litv2_mechanism(const Json& c) {
  // Every LITv2 attention layer is HiLo (its last stage with alpha 0), or the config's own.
  return c.contains("attention") && c["attention"].is_string() ? c["attention"].get<std::string>()
                                                               : "hilo";
}

}  // namespace

ModelFamily litv2_family() {
  ModelFamily f;
  f.name = kLitv2Family;
  f.archs = {kLitv2Family};
  f.make = make_litv2;
  f.mechanism = litv2_mechanism;
  f.presets = litv2_presets;
  // Stages of blocks (layers.i.blocks.j) with HiLo's Lo-Fi query or Hi-Fi qkv.
  f.key_rules.push_back(
      staged_key_rule(kLitv2Family, {".attn.h_qkv.", ".attn.l_q."}, derive_litv2));
  // The official eval: resize 256 for 224 (crop_pct 0.875), bicubic, ImageNet mean/std.
  f.preprocessing = imagenet_crop_0875;
  f.at_size = litv2_at_size;
  f.fit_to_weights = litv2_config_for_weights;
  return f;
}

}  // namespace attnlab::models
