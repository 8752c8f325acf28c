// Presets: every official preset builds exactly the keys, shapes and parameter count of
// its manifest (../shared/fixtures/manifests/<name>.json, or for timm's distilled DeiTs,
// which the shared fixtures lack, tests/data/manifests/<name>.json written by
// scripts/make_distilled_manifests.py; num_batches_tracked entries are BatchNorm counters
// our loader ignores), carries the preprocessing of SPEC §2, and an unknown name is
// refused with the list of known ones.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/image/preprocess.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

std::string manifest_path(const std::string& name) {
  const std::string shared = shared_dir() + "/fixtures/manifests/" + name + ".json";
  if (std::filesystem::exists(shared)) return shared;
  return std::string(ATTNLAB_SOURCE_DIR) + "/tests/data/manifests/" + name + ".json";
}

TEST(Presets, EveryOfficialPresetBuildsItsManifestExactly) {
  int with_manifest = 0;
  for (const auto& preset : models::presets()) {
    const std::string path = manifest_path(preset.name);
    if (!std::filesystem::exists(path)) continue;
    ++with_manifest;
    std::ifstream in(path);
    const auto manifest = models::Json::parse(in);
    std::map<std::string, std::vector<int64_t>> expected;
    for (const auto& t : manifest["tensors"]) {
      const std::string key = t[0].get<std::string>();
      if (key.size() >= 19 && key.compare(key.size() - 19, 19, "num_batches_tracked") == 0)
        continue;
      expected[key] = t[1].get<std::vector<int64_t>>();
    }
    auto model = models::make_backbone(preset.config);
    std::map<std::string, std::vector<int64_t>> built;
    int64_t params = 0;
    for (const auto& p : model->named_parameters()) {
      built[p.key()] = p.value().sizes().vec();
      params += p.value().numel();
    }
    for (const auto& b : model->named_buffers()) built[b.key()] = b.value().sizes().vec();
    EXPECT_EQ(built, expected) << preset.name;
    EXPECT_EQ(params, manifest["num_params"].get<int64_t>()) << preset.name;
  }
  // deit ×3, distilled deit ×3, litv2 ×3, ravlt ×4, anchor ×2, swin ×3
  EXPECT_EQ(with_manifest, 18);
}

TEST(Presets, CarryTheirPapersPreprocessing) {
  for (const auto& p : models::presets()) {
    // DINO and DINOv2 evaluate with resize 256, crop 224 (their eval transforms); CLIP
    // resizes to its resolution and normalises with its own mean and std.
    const bool deit_style = p.name.rfind("deit", 0) == 0 || p.name.rfind("anchor_deit", 0) == 0 ||
                            p.name.rfind("castling_deit", 0) == 0;
    const bool clip = p.name.rfind("clip", 0) == 0;
    EXPECT_EQ(p.preprocessing.resize_short, deit_style ? 248 : clip ? 224 : 256) << p.name;
    EXPECT_EQ(p.preprocessing.crop, 224) << p.name;
    EXPECT_EQ(p.preprocessing.filter, image::Filter::Bicubic) << p.name;
    EXPECT_FLOAT_EQ(p.preprocessing.mean[0], clip ? 0.48145466f : 0.485f) << p.name;
    EXPECT_FLOAT_EQ(p.preprocessing.std[2], clip ? 0.27577711f : 0.225f) << p.name;
    EXPECT_FALSE(p.description.empty()) << p.name;
  }
  // 3 + 3 distilled + 2 anchor + 1 castling + 3 DINO + 3 DINOv2 (vit family), 3 LITv2,
  // 4 RAVLT, 3 Swin, 2 CLIP (the whole model and its image tower)
  EXPECT_EQ(models::presets().size(), 27u);
}

TEST(Presets, EachPresetPreprocessesASyntheticImageToTheHandComputedTensor) {
  // A 320×250 image, constant (10, 128, 250) except one saturated pixel at its centre.
  // Every preset resizes it (short side 250 → 248 or 256) and crops 224: away from the
  // centre the result is exactly (c / 255 − mean) / std; the centre stays the image's peak.
  io::RgbImage im;
  im.width = 320;
  im.height = 250;
  for (int i = 0; i < 320 * 250; ++i) im.rgb.insert(im.rgb.end(), {10, 128, 250});
  for (int c = 0; c < 3; ++c) im.rgb[(125 * 320 + 160) * 3 + c] = 255;
  for (const auto& p : models::presets()) {
    const at::Tensor t = image::preprocess(im, p.preprocessing);
    ASSERT_EQ(t.sizes(), (at::IntArrayRef{1, 3, 224, 224})) << p.name;
    const float values[3] = {10, 128, 250};
    for (int c = 0; c < 3; ++c) {
      const float expected =
          (values[c] / 255.0f - p.preprocessing.mean[c]) / p.preprocessing.std[c];
      EXPECT_FLOAT_EQ(t[0][c][0][0].item<float>(), expected) << p.name;
      EXPECT_FLOAT_EQ(t[0][c][223][223].item<float>(), expected) << p.name;
      EXPECT_EQ(t[0][c].argmax().item<int64_t>() / 224, 112) << p.name << ": the peak row";
    }
  }
}

TEST(Presets, UnknownNameListsTheKnownOnes) {
  try {
    models::find_preset("deit_huge");
    FAIL();
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("ravlt_t"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnlab::testing

namespace attnlab::testing {
namespace {

// --img-size: each family's constraint, and the preprocessing scaled as the paper code's
// crop_pct says (DeiT 0.9, LITv2/RAVLT 224/256), the crop H×W.
TEST(PresetsAtSize, PreprocessingScalesTheFamilysCropPct) {
  const auto& deit = models::find_preset("deit_small_patch16_224");
  const auto p384 = models::preprocessing_at_size(deit.config, deit.preprocessing, 384, 384);
  EXPECT_EQ(p384.resize_short, 426);  // int(384 / 0.9), timm's
  EXPECT_EQ(p384.crop, 384);
  EXPECT_EQ(p384.crop_width, 0);
  const auto wide = models::preprocessing_at_size(deit.config, deit.preprocessing, 224, 320);
  EXPECT_EQ(wide.resize_short, 355);  // max(H, W) / 0.9
  EXPECT_EQ(wide.crop, 224);
  EXPECT_EQ(wide.crop_width, 320);
  EXPECT_EQ(wide.describe(), "bicubic resize 355, center crop 224x320, ImageNet mean/std");
  const auto& ravlt = models::find_preset("ravlt_t");
  EXPECT_EQ(models::preprocessing_at_size(ravlt.config, ravlt.preprocessing, 64, 96).resize_short,
            109);  // 96 · 256 / 224
}

TEST(PresetsAtSize, EachFamilyRunsAtSizesItsStridesAllowAndRefusesOthers) {
  auto refused = [](const models::Json& c, int64_t h, int64_t w, const std::string& says) {
    try {
      models::config_at_size(c, h, w, "bicubic");
      ADD_FAILURE() << h << "x" << w << " accepted";
    } catch (const models::ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  const auto deit = models::find_preset("deit_tiny_patch16_224").config;
  refused(deit, 250, 224, "multiples of 16");
  refused(deit, 0, 224, "sizes run from 1 to 4096");
  EXPECT_THROW(models::config_at_size(deit, 224, 224, "nearest"), models::ModelError);
  const auto litv2 = models::find_preset("litv2_s").config;
  refused(litv2, 16, 64, "at least 32");  // patch 4, 4 stages: 4 · 2³
  // LITv2 and RAVLT run at a non-square size their strides allow (the mini fixtures' sizes).
  for (const std::string name : {"litv2_mini", "ravlt_mini"}) {
    const models::Json c = models::config_at_size(
        models::config_from_file(parity_dir() + "/" + name + ".config.json"), 72, 104, "bicubic");
    auto model = models::make_backbone(c);
    model->eval();
    at::NoGradGuard no_grad;
    const at::Tensor logits = model->run(at::randn({1, 3, 72, 104})).logits;
    EXPECT_EQ(logits.sizes(), (at::IntArrayRef{1, 10})) << name;
    EXPECT_TRUE(at::isfinite(logits).all().item<bool>()) << name;
  }
}

}  // namespace
}  // namespace attnlab::testing
