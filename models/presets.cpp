// The preset table: every family's presets (model_family.h), in registry order, each with
// its family's evaluation preprocessing at its img_size (SPEC §2: DeiT-style models resize
// the short side to floor(224 / 0.9) = 248, timm's crop_pct 0.9; LITv2, RAVLT and Swin, the
// official repos' eval, to 256; all bicubic, centre crop 224, ImageNet mean/std).
#include "models/presets.h"

#include <algorithm>
#include <utility>

#include "core/io/text.h"
#include "models/model_family.h"

namespace attnlab::models {

namespace {

std::vector<Preset> build_presets() {
  std::vector<Preset> all;
  for (const auto& family : model_families()) {
    if (!family.presets) continue;
    for (auto& e : family.presets())
      all.push_back({e.name, e.description, e.config, default_preprocessing(e.config), e.weights});
  }
  return all;
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

// The family's pipeline for a square side; a config of no known family gets the common
// crop_pct 0.875 (224 → 256).
image::Preprocessing family_preprocessing(const Json& config, int64_t side) {
  const ModelFamily* family = family_for_config(config);
  return family && family->preprocessing ? family->preprocessing(config, side)
                                         : imagenet_crop_0875(config, side);
}

}  // namespace

image::Preprocessing default_preprocessing(const Json& config) {
  if (config.contains("preprocessing"))
    return preprocessing_from_config(config.at("preprocessing"));
  const std::string arch = get_string(config, "arch", "model", "");
  // The size the model runs at: input_size where a config sets one (DINOv2's releases run
  // at 224 on a pos_embed trained at 518), else img_size.
  if (config.contains("input_size")) {
    const std::vector<int64_t> hw = get_ints(config, "input_size", arch);
    if (hw.size() != 2 || hw[0] <= 0 || hw[1] <= 0 || hw[0] > 8192 || hw[1] > 8192)
      throw ModelError("input_size must be [H, W] with sizes from 1 to 8192");
    image::Preprocessing p = family_preprocessing(config, std::max(hw[0], hw[1]));
    p.crop = static_cast<int>(hw[0]);
    p.crop_width = hw[0] == hw[1] ? 0 : static_cast<int>(hw[1]);
    return p;
  }
  const int64_t size = get_int(config, "img_size", arch, 224);
  if (size <= 0 || size > 8192)
    throw ModelError("img_size " + std::to_string(size) + " is not a usable input size");
  return family_preprocessing(config, size);
}

image::Preprocessing preprocessing_at_size(const Json& config, const image::Preprocessing& base,
                                           int64_t height, int64_t width) {
  image::Preprocessing p = base;
  const int64_t side = std::max(height, width);
  if (config.contains("preprocessing") && base.crop > 0)
    p.resize_short = static_cast<int>(side * base.resize_short / base.crop);
  else
    p.resize_short = family_preprocessing(config, side).resize_short;
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
  const ModelFamily* family = family_for_arch(arch);
  if (!family || !family->at_size)
    throw ModelError("--img-size: a " + arch + " model runs at its own size only");
  return family->at_size(std::move(config), height, width, interpolation);
}

}  // namespace attnlab::models
