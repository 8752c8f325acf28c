// The preset table. Model configs come from each family's `<family>_official_config(name)`
// (the sizes of the released checkpoints, checked against the manifests by the tests);
// preprocessing from SPEC §2: DeiT-style models resize the short side to
// floor(224 / 0.9) = 248 (timm's crop_pct 0.9), LITv2, RAVLT and Swin (the official repo's
// eval) to 256; all bicubic, center crop 224, ImageNet mean/std.
#include "models/presets.h"

#include <algorithm>

#include "core/io/text.h"
#include "models/backbone.h"

namespace attnlab::models {

Json vit_official_config(const std::string& name);
Json litv2_official_config(const std::string& name);
Json ravlt_official_config(const std::string& name);
Json swin_official_config(const std::string& name);

namespace {

Preset make(const std::string& name, const std::string& description, Json config, int resize_short,
            const std::string& weights) {
  return {name, description, std::move(config), image::imagenet_eval(resize_short, 224), weights};
}

std::vector<Preset> build_presets() {
  std::vector<Preset> p;
  for (const char* size : {"tiny", "small", "base"}) {
    const std::string name = std::string("deit_") + size + "_patch16_224";
    p.push_back(make(name, std::string("DeiT-") + size + ", softmax ViT (timm layout)",
                     vit_official_config(name), 248,
                     "timm model.safetensors (flat) or the DeiT release .pth ({'model': ...})"));
  }
  for (const char* size : {"tiny", "small", "base"}) {
    const std::string name = std::string("deit_") + size + "_distilled_patch16_224";
    p.push_back(make(name,
                     std::string("DeiT-") + size +
                         " distilled, softmax ViT with cls + dist tokens (timm layout)",
                     vit_official_config(name), 248,
                     "timm model.safetensors (flat) or the DeiT release .pth ({'model': ...})"));
  }
  for (const char* size : {"s", "m", "b"}) {
    const std::string name = std::string("litv2_") + size;
    p.push_back(make(name, std::string("LITv2-") + size + ", HiLo attention in stages 3-4",
                     litv2_official_config(name), 256,
                     "the LITv2 release " + name + ".pth ({'model': ...})"));
  }
  for (const char* size : {"t", "s", "b", "l"}) {
    const std::string name = std::string("ravlt_") + size;
    p.push_back(make(name,
                     std::string("RAVLT-") + size + ", RALA in stages 1-2, RoPE softmax in 3-4",
                     ravlt_official_config(name), 256,
                     "the RALA release RAVLT_" + std::string(1, char(toupper(size[0]))) +
                         ".pth ({'model', 'model_ema'})"));
  }
  for (const char* size : {"tiny", "small"}) {
    const std::string name = std::string("anchor_deit_") + size + "_distilled_patch16_224";
    p.push_back(make(name,
                     std::string("AnchorFormer DeiT-") + size + ", anchor attention, cls + dist",
                     vit_official_config(name), 248, "none released (train your own)"));
  }
  p.push_back(
      make("castling_deit_tiny", "Castling-DeiT-tiny (our layout), linear-angular attention",
           vit_official_config("castling_deit_tiny"), 248, "none released (train your own)"));
  for (const char* size : {"tiny", "small", "base"}) {
    // The official repo's eval: resize int(256 / 224 · 224) = 256 (crop 0.875), bicubic.
    const std::string name = std::string("swin_") + size + "_patch4_window7_224";
    p.push_back(make(
        name, std::string("Swin-") + char(toupper(size[0])) + ", shifted-window attention",
        swin_official_config(name), 256, "the Swin release " + name + ".pth ({'model': ...})"));
  }
  return p;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = build_presets();
  return all;
}

const Preset* preset_named(const std::string& name) {
  for (const auto& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

const Preset& find_preset(const std::string& name) {
  if (const Preset* p = preset_named(name)) return *p;
  std::vector<std::string> known;
  for (const auto& p : presets()) known.push_back(p.name);
  throw ModelError("unknown preset '" + name + "' (known: " + text::join(known) + ")");
}

namespace {

// A config's own "preprocessing": {"resize": 28, "crop": 28, "filter": "bilinear",
// "mean": [m, m, m], "std": [s, s, s]} (models trained here record theirs).
image::Preprocessing preprocessing_from_config(const Json& j) {
  auto bad = [](const std::string& what) -> ModelError {
    return ModelError("config 'preprocessing': " + what);
  };
  if (!j.is_object()) throw bad("must be an object");
  image::Preprocessing p;
  p.resize_short = static_cast<int>(get_int(j, "resize", "preprocessing", 0));
  p.crop = static_cast<int>(get_int(j, "crop", "preprocessing", 0));
  if (p.resize_short < 0 || p.resize_short > 8192 || p.crop < 0 || p.crop > 8192)
    throw bad("resize and crop must be between 0 and 8192");
  const std::string filter = get_string(j, "filter", "preprocessing", "bicubic");
  if (filter != "bicubic" && filter != "bilinear")
    throw bad("filter must be bicubic or bilinear (got '" + filter + "')");
  p.filter = filter == "bicubic" ? image::Filter::Bicubic : image::Filter::Bilinear;
  for (const char* key : {"mean", "std"}) {
    if (!j.contains(key)) continue;
    const Json& v = j.at(key);
    if (!v.is_array() || v.size() != 3) throw bad(std::string(key) + " must be 3 numbers");
    auto& dst = std::string(key) == "mean" ? p.mean : p.std;
    for (size_t i = 0; i < 3; ++i) {
      if (!v[i].is_number()) throw bad(std::string(key) + " must be 3 numbers");
      dst[i] = v[i].get<float>();
    }
  }
  for (float s : p.std)
    if (!(s > 0)) throw bad("std must be positive");
  return p;
}

}  // namespace

namespace {

bool deit_style(const Json& config) {
  const std::string arch = get_string(config, "arch", "model", "");
  return arch == "vit" || arch == "anchor_deit_distilled" || arch == "castling_deit";
}

// timm's DeiT eval uses crop_pct 0.9: int(224 / 0.9) = 248; LITv2 and RAVLT 224 / 256.
int resized_short_side(const Json& config, int64_t size) {
  const double s = static_cast<double>(size);
  return static_cast<int>(deit_style(config) ? s / 0.9 : s * 256.0 / 224.0);
}

}  // namespace

image::Preprocessing default_preprocessing(const Json& config) {
  if (config.contains("preprocessing"))
    return preprocessing_from_config(config.at("preprocessing"));
  const std::string arch = get_string(config, "arch", "model", "");
  const int64_t size = get_int(config, "img_size", arch, 224);
  if (size <= 0 || size > 8192)
    throw ModelError("img_size " + std::to_string(size) + " is not a usable input size");
  return image::imagenet_eval(resized_short_side(config, size), static_cast<int>(size));
}

image::Preprocessing preprocessing_at_size(const Json& config, const image::Preprocessing& base,
                                           int64_t height, int64_t width) {
  image::Preprocessing p = base;
  const int64_t side = std::max(height, width);
  if (config.contains("preprocessing") && base.crop > 0)
    p.resize_short = static_cast<int>(side * base.resize_short / base.crop);
  else
    p.resize_short = resized_short_side(config, side);
  p.crop = static_cast<int>(height);
  p.crop_width = height == width ? 0 : static_cast<int>(width);
  return p;
}

Json config_at_size(Json config, int64_t height, int64_t width, const std::string& interpolation) {
  const std::string size = std::to_string(height) + "x" + std::to_string(width);
  if (height < 1 || width < 1 || height > 4096 || width > 4096)
    throw ModelError("--img-size " + size + ": sizes run from 1 to 4096");
  if (interpolation != "bicubic" && interpolation != "bicubic_antialias")
    throw ModelError("--pos-interpolation must be bicubic or bicubic_antialias (got '" +
                     interpolation + "')");
  const std::string arch = get_string(config, "arch", "model", "");
  if (deit_style(config)) {
    const int64_t patch = get_int(config, "patch_size", arch, 16);
    if (height % patch != 0 || width % patch != 0)
      throw ModelError("--img-size " + size + ": a " + arch + " with patch_size " +
                       std::to_string(patch) + " needs sizes that are multiples of " +
                       std::to_string(patch));
    config["input_size"] = {height, width};
    config["pos_embed_interpolation"] = interpolation;
  } else if (arch == "litv2") {
    const int64_t patch = get_int(config, "patch_size", arch, 4);
    const auto stages = static_cast<int64_t>(get_ints(config, "depths", arch).size());
    const int64_t min_side = patch << std::max<int64_t>(stages - 1, 0);
    if (height < min_side || width < min_side)
      throw ModelError("--img-size " + size + ": litv2 needs both sides at least " +
                       std::to_string(min_side) + " (patch " + std::to_string(patch) + ", " +
                       std::to_string(stages) + " stages)");
    config["input_size"] = {height, width};
  } else if (arch == "ravlt") {
    config["input_hw"] = {height, width};
  } else {
    throw ModelError("--img-size: a " + arch + " model runs at its own size only");
  }
  return config;
}

}  // namespace attnlab::models
