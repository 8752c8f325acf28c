// The model-family registry (models/model_family.h): every arch has one family, every
// preset is of the family that declares it, each family's key rules tell its checkpoints
// (the manifests of the released layouts) from the others by their key names alone, and
// each rule reads its own presets back from their shapes into a config that builds the
// same keys and shapes. A family added without these fails here, whatever its own tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "models/checkpoint_recognition.h"
#include "models/model_family.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

using models::Json;
using models::ModelFamily;

TEST(ModelFamilies, EveryArchHasExactlyOneFamily) {
  std::set<std::string> seen;
  for (const ModelFamily& f : models::model_families()) {
    SCOPED_TRACE(f.name);
    EXPECT_FALSE(f.archs.empty());
    EXPECT_TRUE(f.make && f.mechanism && f.presets && f.preprocessing) << "a hook is missing";
    for (const auto& arch : f.archs) {
      EXPECT_TRUE(seen.insert(arch).second) << arch << " is built by two families";
      EXPECT_EQ(models::family_for_arch(arch), &f) << arch;
    }
  }
  const std::vector<std::string> known = models::known_archs();
  EXPECT_EQ(seen, std::set<std::string>(known.begin(), known.end()));
  EXPECT_EQ(models::family_for_arch("resnet"), nullptr);
  EXPECT_THROW(models::make_backbone({{"arch", "resnet"}}), models::ModelError);
}

TEST(ModelFamilies, KeyRulesNameTheirOwnArchsOnce) {
  std::set<std::string> rule_names, rule_archs;
  for (const ModelFamily& f : models::model_families())
    for (const auto& rule : f.key_rules) {
      SCOPED_TRACE(rule.family);
      EXPECT_TRUE(rule_names.insert(rule.family).second) << "two rules report " << rule.family;
      EXPECT_TRUE(rule.matches) << "a rule with no key-name test";
      for (const auto& arch : rule.archs) {
        EXPECT_EQ(models::family_for_arch(arch), &f) << arch << " is not of " << f.name;
        EXPECT_TRUE(rule_archs.insert(arch).second) << arch << " is in two rules";
        EXPECT_EQ(models::key_family_of_arch(arch), rule.family);
      }
      EXPECT_EQ(models::key_rule_named(rule.family), &rule);
    }
  EXPECT_EQ(models::key_rule_named("xcit"), nullptr);
  EXPECT_EQ(models::key_family_of_arch("xcit"), "xcit");  // no rule: its own name
}

TEST(ModelFamilies, EveryPresetIsOfTheFamilyDeclaringItAndUniquelyNamed) {
  std::set<std::string> names;
  size_t declared = 0;
  for (const ModelFamily& f : models::model_families())
    for (const auto& e : f.presets()) {
      SCOPED_TRACE(e.name);
      ++declared;
      EXPECT_TRUE(names.insert(e.name).second) << "two presets named " << e.name;
      EXPECT_EQ(models::family_for_config(e.config), &f);
      const models::Preset* p = models::preset_named(e.name);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(p->config, e.config);
      // Its preprocessing is its family's at the size it runs at, not one typed beside it.
      const int64_t side = e.config.contains("input_size")
                               ? e.config["input_size"][0].get<int64_t>()
                               : e.config.value("img_size", int64_t{224});
      const auto want = f.preprocessing(e.config, side);
      EXPECT_EQ(p->preprocessing.resize_short, want.resize_short);
      EXPECT_EQ(p->preprocessing.crop, want.crop);
    }
  EXPECT_EQ(declared, models::presets().size());
}

// name → key names of a released layout (the shared manifests and the distilled DeiTs').
std::map<std::string, models::KeyNames> family_test_manifest_keys() {
  std::map<std::string, models::KeyNames> all;
  for (const std::string& dir :
       {shared_dir() + "/fixtures/manifests", shared_dir() + "/fixtures/manifests_dino_clip",
        std::string(ATTNLAB_SOURCE_DIR) + "/tests/data/manifests"})
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(e.path());
      const Json m = Json::parse(in);
      models::KeyNames keys;
      for (const auto& t : m["tensors"]) keys.push_back(t[0].get<std::string>());
      all[m["model"].get<std::string>()] = keys;
    }
  return all;
}

TEST(ModelFamilies, TheKeyRulesTellEveryManifestsFamilyFromItsKeyNames) {
  const auto all = family_test_manifest_keys();
  ASSERT_EQ(all.size(), 25u);  // 15 + 7 shared (DINO, DINOv2, CLIP) + 3 distilled DeiTs
  for (const auto& [name, keys] : all) {
    SCOPED_TRACE(name);
    const models::Preset* p = models::preset_named(name);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(models::family_of_keys(keys),
              models::key_family_of_arch(p->config.at("arch").get<std::string>()));
  }
  EXPECT_EQ(models::family_of_keys({"encoder.weight", "decoder.bias"}), "unknown");
}

// "DeiT with attention X" (the zoo's models) keeps the DeiT skeleton whatever attention
// keys its blocks carry: a vit, not the family whose attention it borrows.
TEST(ModelFamilies, ADeitSkeletonWithAnotherFamilysAttentionIsAVit) {
  for (const std::string attn : {"qkvo", "l_q", "h_qkv", "relative_position_bias_table"})
    EXPECT_EQ(models::family_of_keys({"cls_token", "pos_embed", "patch_embed.proj.weight",
                                      "blocks.0.attn." + attn + ".weight", "head.weight"}),
              "vit")
        << attn;
}

TEST(ModelFamilies, EachRuleReadsItsPresetsBackFromTheirShapes) {
  for (const auto& p : models::presets()) {
    SCOPED_TRACE(p.name);
    const std::string family = models::key_family_of_arch(p.config.at("arch").get<std::string>());
    const models::KeyRule* rule = models::key_rule_named(family);
    ASSERT_NE(rule, nullptr) << "no key rule for " << family;
    ASSERT_TRUE(rule->derive);
    const models::ShapeMap shapes = models::config_shapes(p.config);
    models::Derivation d;
    try {
      d = rule->derive(shapes);
    } catch (const models::CannotDerive&) {
      FAIL() << "the rule cannot read its own preset's shapes";
    }
    EXPECT_EQ(models::config_shapes(d.r.config), shapes) << d.r.summary();
  }
}

}  // namespace
}  // namespace attnlab::testing
