// Recognising a checkpoint with no config from its keys and shapes (issue 22): every
// manifest is recognised as its preset (the shared manifests and the distilled DeiTs'),
// a same-family checkpoint of other sizes gets a config read from its shapes that builds it
// exactly (and says what it assumed), and anything else is refused with the three nearest
// presets and their first differing keys. These work on key → shape tables; the CLI test
// (tests/core/recognition_cli_test.cpp) writes real .pth and safetensors files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/checkpoint_recognition.h"
#include "models/model_family.h"
#include "models/presets.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

using models::Json;
using models::ShapeMap;

// name → (shapes without BatchNorm counters, family the summary would guess).
std::map<std::string, ShapeMap> manifests() {
  std::map<std::string, ShapeMap> all;
  for (const std::string& dir :
       {shared_dir() + "/fixtures/manifests", shared_dir() + "/fixtures/manifests_dino_clip",
        std::string(ATTNLAB_SOURCE_DIR) + "/tests/data/manifests"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(e.path());
      const Json m = Json::parse(in);
      ShapeMap s;
      // A whole CLIP model is recognised as both towers under the names the loader gives
      // them (models/clip_layout.h: visual.* without the prefix, the text tower under
      // text.*; tests/models/clip_test.cpp).
      const bool clip = m["model"].get<std::string>().rfind("clip", 0) == 0;
      for (const auto& t : m["tensors"]) {
        std::string key = t[0];
        if (clip && key.rfind("visual.", 0) == 0)
          key = key.substr(7);
        else if (clip && key != "logit_scale")
          key = "text." + key;
        if (key.find("num_batches_tracked") == std::string::npos)
          s[key] = t[1].get<std::vector<int64_t>>();
      }
      all[m["model"].get<std::string>()] = s;
    }
  }
  return all;
}

// The family the key rules tell (models/model_family.h), as the loader asks it.
std::string family_of(const ShapeMap& shapes) {
  models::KeyNames names;
  for (const auto& [key, shape] : shapes) names.push_back(key);
  return models::family_of_keys(names);
}

TEST(Recognition, EveryManifestIsItsPreset) {
  const auto all = manifests();
  EXPECT_EQ(all.size(), 25u);  // 15 shared + 7 DINO/DINOv2/CLIP + 3 distilled DeiTs
  int recognised = 0;
  for (const auto& [name, shapes] : all) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(models::preset_named(name)) << "every manifest has its preset";
    const models::Recognition r = models::recognise_weights(shapes, family_of(shapes), name);
    EXPECT_TRUE(r.exact);
    EXPECT_EQ(r.preset, name);
    EXPECT_EQ(r.summary(), "recognised as " + name);
    ++recognised;
  }
  EXPECT_EQ(recognised, 25);
}

// A family the key names tell but no preset builds is named as such, not guessed.
TEST(Recognition, AFamilyNoPresetBuildsIsNamed) {
  const auto all = manifests();
  try {
    models::recognise_weights(all.at("swin_tiny_patch4_window7_224"), "xcit", "x.pth");
    FAIL() << "recognised";
  } catch (const models::RecognitionError& e) {
    EXPECT_NE(std::string(e.what()).find("its keys look like a xcit checkpoint, a family attnlab "
                                         "cannot build yet"),
              std::string::npos)
        << e.what();
  }
}

// A DeiT-tiny fine-tuned at 384 on 10 classes: everything but the heads and LayerNorm eps
// is in the shapes; the config builds the checkpoint exactly.
TEST(Recognition, ADeitOfOtherSizesGetsItsConfigFromTheShapes) {
  Json config = models::find_preset("deit_tiny_patch16_224").config;
  config["img_size"] = 384;
  config["num_classes"] = 10;
  config["depth"] = 4;
  const ShapeMap shapes = models::config_shapes(config);
  const models::Recognition r = models::recognise_weights(shapes, "vit", "ft.pth");
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.config["img_size"], 384);
  EXPECT_EQ(r.config["num_classes"], 10);
  EXPECT_EQ(r.config["depth"], 4);
  EXPECT_EQ(r.config["num_heads"], 3);  // 192 / 64
  EXPECT_EQ(models::config_shapes(r.config), shapes);
  const std::string s = r.summary();
  EXPECT_NE(s.find("img_size 384 (576 position tokens)"), std::string::npos) << s;
  EXPECT_NE(s.find("not in the weights: num_heads 3 (head dim 64, as every DeiT)"),
            std::string::npos)
      << s;
}

TEST(Recognition, HierarchicalFamiliesOfOtherDepthsAndClasses) {
  Json litv2 = models::find_preset("litv2_s").config;
  litv2["depths"] = {2, 2, 4, 2};
  litv2["num_classes"] = 100;
  const models::Recognition l =
      models::recognise_weights(models::config_shapes(litv2), "litv2", "l.pth");
  EXPECT_FALSE(l.exact);
  EXPECT_EQ(l.config["depths"], litv2["depths"]);
  EXPECT_EQ(l.config["num_classes"], 100);

  Json ravlt = models::find_preset("ravlt_s").config;
  ravlt["num_classes"] = 37;
  const models::Recognition r =
      models::recognise_weights(models::config_shapes(ravlt), "ravlt", "r.pth");
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.config["embed_dims"], ravlt["embed_dims"]);
  EXPECT_EQ(r.config["num_heads"], ravlt["num_heads"]);  // from the RoPE angle lengths
  EXPECT_TRUE(r.assumed.empty()) << r.summary();
}

TEST(Recognition, NoMatchNamesTheThreeNearestPresetsAndTheirDifferences) {
  ShapeMap shapes = models::config_shapes(models::find_preset("deit_small_patch16_224").config);
  shapes["blocks.3.attn.qkv.weight"] = {1000, 384};  // no ViT has this
  shapes["extra.weight"] = {3};
  try {
    models::recognise_weights(shapes, "vit", "odd.pth");
    FAIL() << "recognised";
  } catch (const models::RecognitionError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("odd.pth: no preset has these weights' keys and shapes", 0), 0u) << m;
    EXPECT_NE(m.find("\n  deit_small_patch16_224: 2 keys differ, first "
                     "blocks.3.attn.qkv.weight (1000, 384) here, (1152, 384) in the preset; "
                     "extra.weight unexpected"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("--preset NAME or --config JSON"), std::string::npos) << m;
    size_t listed = 0;
    for (size_t at = m.find("\n  "); at != std::string::npos; at = m.find("\n  ", at + 1)) ++listed;
    EXPECT_EQ(listed, 3u) << m;
  }
}

}  // namespace
}  // namespace attnlab::testing
