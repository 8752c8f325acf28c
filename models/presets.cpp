// The preset table. Model configs come from each family's `<family>_official_config(name)`
// (the sizes of the released checkpoints, checked against the manifests by the tests);
// preprocessing from SPEC §2: DeiT-style models resize the short side to
// floor(224 / 0.9) = 248 (timm's crop_pct 0.9), LITv2 and RAVLT to 256; all bicubic, center
// crop 224, ImageNet mean/std.
#include "models/presets.h"

#include "core/io/text.h"
#include "models/backbone.h"

namespace attnlab::models {

Json vit_official_config(const std::string& name);
Json litv2_official_config(const std::string& name);
Json ravlt_official_config(const std::string& name);

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

image::Preprocessing default_preprocessing(const Json& config) {
  if (config.contains("preprocessing"))
    return preprocessing_from_config(config.at("preprocessing"));
  const std::string arch = get_string(config, "arch", "model", "");
  const int64_t size = get_int(config, "img_size", arch, 224);
  if (size <= 0 || size > 8192)
    throw ModelError("img_size " + std::to_string(size) + " is not a usable input size");
  const bool deit_style =
      arch == "vit" || arch == "anchor_deit_distilled" || arch == "castling_deit";
  // timm's DeiT eval uses crop_pct 0.9: int(224 / 0.9) = 248.
  const double resize =
      deit_style ? static_cast<double>(size) / 0.9 : static_cast<double>(size) * 256.0 / 224.0;
  return image::imagenet_eval(static_cast<int>(resize), static_cast<int>(size));
}

}  // namespace attnlab::models
