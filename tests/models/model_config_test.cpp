// Model configs from JSON files and safetensors metadata; the backbone registry's refusals.
#include <gtest/gtest.h>

#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

TEST(ModelConfig, FixtureConfigFilesAndMetadataAgree) {
  for (const auto& name : parity_names()) {
    const auto from_file = models::config_from_file(parity_dir() + "/" + name + ".config.json");
    std::map<std::string, std::string> meta;
    for (const auto& [k, v] : from_file.items()) meta[k] = v.dump();
    EXPECT_EQ(models::config_from_metadata(meta), from_file) << name;
  }
}

TEST(ModelConfig, TypedGettersNameTheKeyAndFamily) {
  const auto c = models::Json::parse(R"({"arch": "vit", "depth": "twelve", "dims": [1, 2.5]})");
  try {
    models::get_int(c, "depth", "vit");
    FAIL();
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("vit config: 'depth' must be an integer"),
              std::string::npos);
  }
  EXPECT_THROW(models::get_ints(c, "dims", "vit"), models::ModelError);
  EXPECT_THROW(models::get_int(c, "missing", "vit"), models::ModelError);
  EXPECT_EQ(models::get_int(c, "missing", "vit", 7), 7);
  EXPECT_THROW(models::config_from_metadata({{"depth", "2"}}), models::ModelError);
}

TEST(ModelConfig, BrokenConfigFilesAreRefused) {
  const std::string path = unique_temp_path("bad_config.json");
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("{\"arch\": ", f);
    std::fclose(f);
  }
  EXPECT_THROW(models::config_from_file(path), models::ModelError);
  std::remove(path.c_str());
  EXPECT_THROW(models::config_from_file(path), models::ModelError);
}

TEST(ModelRegistry, UnknownArchIsRefusedWithTheKnownOnes) {
  try {
    models::make_backbone(models::Json::parse(R"({"arch": "resnet50"})"));
    FAIL();
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos);
  }
}

}  // namespace
}  // namespace attnlab::testing
