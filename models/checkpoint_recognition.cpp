// recognise_weights: see checkpoint_recognition.h. The per-family readers below only read
// shapes; whatever they get wrong is caught by building the config and comparing every key
// and shape with the checkpoint, so a derived config is never used unverified.
#include "models/checkpoint_recognition.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

#include "core/io/text.h"
#include "core/nn/initial_values.h"
#include "models/backbone.h"
#include "models/model_registry.h"
#include "models/presets.h"

namespace attnlab::models {

ShapeMap shapes_of(const nn::TensorMap& tensors) {
  ShapeMap s;
  for (const auto& [name, t] : tensors) s[name] = t.sizes().vec();
  return s;
}

ShapeMap config_shapes(const Json& config) {
  static std::mutex mutex;
  static std::map<std::string, ShapeMap> cache;
  const std::string id = config.dump();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(id); it != cache.end()) return it->second;
  }
  at::NoGradGuard no_grad;
  ShapeMap s;
  const nn::WeightsToBeLoaded shapes_only;  // only the shapes are read: no random values
  const auto model = make_backbone(config);
  for (const auto& p : model->named_parameters()) s[p.key()] = p.value().sizes().vec();
  for (const auto& b : model->named_buffers()) s[b.key()] = b.value().sizes().vec();
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(id, std::move(s)).first->second;
}

std::string Recognition::summary() const {
  if (exact) return "recognised as " + preset;
  std::string s = "recognised as a " + get_string(config, "arch", "model", "model") + " like " +
                  preset + ", read from its shapes: " + text::join(derived);
  if (!assumed.empty()) s += "; not in the weights: " + text::join(assumed);
  return s;
}

namespace {

struct CannotDerive {};  // a key the family reader needs is missing or odd

const std::vector<int64_t>& need_shape(const ShapeMap& w, const std::string& key, size_t dims) {
  const auto it = w.find(key);
  if (it == w.end() || it->second.size() != dims) throw CannotDerive{};
  return it->second;
}

// The leading size of a weight of any rank (a linear's out features, a conv's out channels).
int64_t rows(const ShapeMap& w, const std::string& key) {
  const auto it = w.find(key);
  if (it == w.end() || it->second.empty()) throw CannotDerive{};
  return it->second[0];
}

// How many consecutive indices i have keys starting with prefix + "i.".
int64_t count_indices(const ShapeMap& w, const std::string& prefix) {
  int64_t n = 0;
  while (true) {
    const std::string p = prefix + std::to_string(n) + ".";
    const auto it = w.lower_bound(p);
    if (it == w.end() || it->first.compare(0, p.size(), p) != 0) return n;
    ++n;
  }
}

struct Derivation {
  Recognition r;
  std::vector<std::string> keys;  // config keys read from the shapes (compared to presets)
  void set(const std::string& key, const Json& value, const std::string& from) {
    r.config[key] = value;
    keys.push_back(key);
    r.derived.push_back(key + " " + value.dump() + " (" + from + ")");
  }
  void assume(const std::string& key, const Json& value, const std::string& why) {
    r.config[key] = value;
    r.assumed.push_back(key + " " + value.dump() + " (" + why + ")");
  }
};

Derivation start(const std::string& preset) {
  Derivation d;
  d.r.preset = preset;
  d.r.config = find_preset(preset).config;
  return d;
}

Derivation derive_vit(const ShapeMap& w, const std::string& family) {
  const bool dist = w.count("dist_token") > 0;
  Derivation d = start(family == "anchor_deit"     ? "anchor_deit_tiny_distilled_patch16_224"
                       : family == "castling_deit" ? "castling_deit_tiny"
                       : dist                      ? "deit_tiny_distilled_patch16_224"
                                                   : "deit_tiny_patch16_224");
  const int64_t c = need_shape(w, "cls_token", 3)[2];
  const auto& patch = need_shape(w, "patch_embed.proj.weight", 4);
  if (patch[2] != patch[3]) throw CannotDerive{};
  const int64_t prefix = dist ? 2 : 1, tokens = need_shape(w, "pos_embed", 3)[1] - prefix;
  const auto grid = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(tokens))));
  if (grid < 1 || grid * grid != tokens) throw CannotDerive{};
  d.set("embed_dim", c, "cls_token");
  d.set("depth", count_indices(w, "blocks."), "blocks.N");
  d.set("patch_size", patch[2], "patch_embed.proj.weight");
  d.set("img_size", grid * patch[2], std::to_string(tokens) + " position tokens");
  d.set("num_classes", rows(w, "head.weight"), "head.weight");
  d.set("mlp_ratio", static_cast<double>(need_shape(w, "blocks.0.mlp.fc1.weight", 2)[0]) / c,
        "blocks.0.mlp.fc1.weight");
  if (family == "vit") d.set("qkv_bias", w.count("blocks.0.attn.qkv.bias") > 0, "qkv.bias");
  if (c % 64 == 0)
    d.assume("num_heads", c / 64, "head dim 64, as every DeiT");
  else
    d.assume("num_heads", d.r.config["num_heads"], "from " + d.r.preset);
  d.assume("ln_eps", 1e-6, "timm's");
  return d;
}

Derivation derive_litv2(const ShapeMap& w) {
  Derivation d = start("litv2_s");
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
  d.set("num_classes", rows(w, "head.weight"), "head.weight");
  d.set("mlp_ratio",
        static_cast<double>(need_shape(w, "layers.0.blocks.0.mlp.fc1.weight", 2)[0]) / c,
        "mlp.fc1.weight");
  d.assume("num_heads", heads, "head dim 32, as every LITv2");
  d.assume("local_ws", d.r.config["local_ws"], "HiLo windows of " + d.r.preset);
  return d;
}

Derivation derive_ravlt(const ShapeMap& w) {
  Derivation d = start("ravlt_t");
  const int64_t stages = count_indices(w, "layers.");
  if (stages < 1) throw CannotDerive{};
  std::vector<int64_t> dims, depths, heads;
  for (int64_t i = 0; i < stages; ++i) {
    const std::string s = "layers." + std::to_string(i) + ".";
    const int64_t dim = need_shape(w, s + "blocks.0.norm1.norm.weight", 1)[0];
    const int64_t half_head = need_shape(w, s + "RoPE.angle", 1)[0];  // RoPE angles: head dim / 2
    if (half_head < 1 || dim % (2 * half_head) != 0) throw CannotDerive{};
    dims.push_back(dim);
    depths.push_back(count_indices(w, s + "blocks."));
    heads.push_back(dim / (2 * half_head));
  }
  d.set("embed_dims", dims, "norm1 widths");
  d.set("depths", depths, "layers.i.blocks.N");
  d.set("num_heads", heads, "RoPE.angle lengths");
  d.set("projection", rows(w, "proj.weight"), "proj.weight");
  d.set("num_classes", rows(w, "head.weight"), "head.weight");
  d.set("mlp_ratio",
        static_cast<double>(need_shape(w, "layers.0.blocks.0.ffn.fc1.weight", 4)[0]) / dims[0],
        "ffn.fc1.weight");
  return d;
}

// Swin: widths, depths, heads (the bias tables' columns), windows (their (2w − 1)² rows),
// and the grid from a shifted block's attn_mask ((G/w)² windows) or a clamped stage (G = w).
Derivation derive_swin(const ShapeMap& w) {
  Derivation d = start("swin_tiny_patch4_window7_224");
  const auto& patch = need_shape(w, "patch_embed.proj.weight", 4);
  const int64_t c = patch[0], stages = count_indices(w, "layers.");
  if (stages < 1 || patch[2] != patch[3]) throw CannotDerive{};
  auto side_of = [](int64_t square) {  // the integer root of a square, or CannotDerive
    const auto r = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(square))));
    if (r < 1 || r * r != square) throw CannotDerive{};
    return r;
  };
  std::vector<int64_t> depths, heads, windows;
  int64_t grid = 0;  // stage 0's grid side, once some stage tells it
  for (int64_t i = 0; i < stages; ++i) {
    const std::string s = "layers." + std::to_string(i) + ".blocks.";
    depths.push_back(count_indices(w, s));
    const auto& table = need_shape(w, s + "0.attn.relative_position_bias_table", 2);
    heads.push_back(table[1]);
    windows.push_back((side_of(table[0]) + 1) / 2);
    if (const auto mask = w.find(s + "1.attn_mask"); grid == 0 && mask != w.end()) {
      if (mask->second.size() != 3) throw CannotDerive{};
      grid = (side_of(mask->second[0]) * windows.back()) << i;
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
  d.set("num_classes", rows(w, "head.weight"), "head.weight");
  d.set("mlp_ratio",
        static_cast<double>(need_shape(w, "layers.0.blocks.0.mlp.fc1.weight", 2)[0]) / c,
        "mlp.fc1.weight");
  d.set("qkv_bias", w.count("layers.0.blocks.0.attn.qkv.bias") > 0, "qkv.bias");
  d.set("ape", w.count("absolute_pos_embed") > 0, "absolute_pos_embed");
  d.set("patch_norm", w.count("patch_embed.norm.weight") > 0, "patch_embed.norm");
  return d;
}

std::string family_of_arch(const std::string& arch) {
  return arch == "anchor_deit_distilled" ? "anchor_deit" : arch;
}

// Missing, unexpected and mis-shaped keys of `weights` against `model`.
struct Difference {
  std::string preset;
  size_t count = 0;
  std::vector<std::string> first;
};

Difference difference(const std::string& preset, const ShapeMap& weights, const ShapeMap& model) {
  Difference d{preset, 0, {}};
  auto note = [&](const std::string& line) {
    ++d.count;
    if (d.first.size() < 3) d.first.push_back(line);
  };
  for (const auto& [key, shape] : model) {
    const auto it = weights.find(key);
    if (it == weights.end())
      note(key + " missing");
    else if (it->second != shape)
      note(key + " " + nn::shape_string(it->second) + " here, " + nn::shape_string(shape) +
           " in the preset");
  }
  for (const auto& [key, shape] : weights)
    if (!model.count(key)) note(key + " unexpected");
  return d;
}

// `buildable`: some preset is of `family` (else the key names tell a family, or nothing,
// that no backbone here builds).
[[noreturn]] void no_match(const ShapeMap& weights, const std::string& family, bool buildable,
                           const std::string& what) {
  std::vector<Difference> all;
  for (const auto& p : presets())
    all.push_back(difference(p.name, weights, config_shapes(p.config)));
  std::stable_sort(all.begin(), all.end(),
                   [](const Difference& a, const Difference& b) { return a.count < b.count; });
  std::string msg = what + ": no preset has these weights' keys and shapes";
  if (family == "unknown")
    ;                   // the key names tell no family
  else if (!buildable)  // a family the key names tell, with no backbone here
    msg += " (its keys look like a " + family + " checkpoint, a family attnlab cannot build yet)";
  else
    msg += ", and no " + family + " config built from their shapes does either";
  msg += ". Nearest presets:";
  for (size_t i = 0; i < std::min<size_t>(3, all.size()); ++i)
    msg += "\n  " + all[i].preset + ": " + std::to_string(all[i].count) + " keys differ, first " +
           text::join(all[i].first, "; ");
  msg += "\nGive --preset NAME or --config JSON to say what the model is.";
  throw RecognitionError(msg);
}

}  // namespace

Recognition recognise_weights(const ShapeMap& weights, const std::string& family,
                              const std::string& what) {
  Derivation d;
  bool derived = false;
  try {
    if (family == "vit" || family == "anchor_deit" || family == "castling_deit") {
      d = derive_vit(weights, family);
      derived = true;
    } else if (family == "litv2") {
      d = derive_litv2(weights);
      derived = true;
    } else if (family == "ravlt") {
      d = derive_ravlt(weights);
      derived = true;
    } else if (family == "swin") {
      d = derive_swin(weights);
      derived = true;
    }
  } catch (const CannotDerive&) {
  } catch (const ModelError&) {
  }
  // An exact preset: of the family, agreeing with every value read from the shapes.
  bool buildable = false;
  for (const auto& p : presets()) {
    if (family_of_arch(get_string(p.config, "arch", "model", "")) != family) continue;
    buildable = true;
    bool agrees = true;
    for (const auto& key : d.keys)
      agrees = agrees && p.config.value(key, Json()) == d.r.config[key];
    if (agrees && config_shapes(p.config) == weights) {
      Recognition r;
      r.config = p.config;
      r.preset = p.name;
      r.exact = true;
      return r;
    }
  }
  if (derived) {
    try {
      if (config_shapes(d.r.config) == weights) return d.r;
    } catch (const ModelError&) {
    }
  }
  no_match(weights, family, buildable, what);
}

}  // namespace attnlab::models
