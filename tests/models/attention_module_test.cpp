// The fixtures' single-module archs run through models::run_attention_module (what
// `attnlab infer` uses for them) reproduce the reference outputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "models/attention_module.h"
#include "models/backbone.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

TEST(AttentionModuleArchs, CastlingAndHiloFixturesReproduceTheirExpectedOutputs) {
  for (const std::string name : {"castling_attn", "hilo_padded"}) {
    const auto config = models::config_from_file(parity_dir() + "/" + name + ".config.json");
    ASSERT_TRUE(models::is_attention_module_arch(config["arch"].get<std::string>()));
    const auto weights = nn::read_tensor_map(parity_dir() + "/" + name + ".safetensors");
    const auto expected = nn::read_tensor_map(parity_dir() + "/" + name + ".expected.safetensors");
    const auto outputs = models::run_attention_module(config, weights, expected.at("input"));
    size_t compared = 0;
    for (const auto& [key, value] : expected) {
      if (key == "input") continue;
      ASSERT_TRUE(outputs.count(key)) << name << " produced no " << key;
      EXPECT_LE(max_abs_diff(outputs.at(key), value), 1e-5) << name << " " << key;
      ++compared;
    }
    EXPECT_EQ(compared, outputs.size()) << name;
  }
}

// Hydra's fixture also holds the normalised q, k and the global vector (checked by
// tests/attention/hydra_test.cpp); the module arch gives its output.
TEST(AttentionModuleArchs, HydraFixtureReproducesItsOutput) {
  const auto config = models::config_from_file(parity_dir() + "/hydra_attn.config.json");
  ASSERT_TRUE(models::is_attention_module_arch("hydra_attention"));
  const auto weights = nn::read_tensor_map(parity_dir() + "/hydra_attn.safetensors");
  const auto expected = nn::read_tensor_map(parity_dir() + "/hydra_attn.expected.safetensors");
  const auto out = models::run_attention_module(config, weights, expected.at("input"));
  EXPECT_LE(max_abs_diff(out.at("out"), expected.at("out")), 1e-5);
}

TEST(AttentionModuleArchs, WrongWeightsAndUnknownArchAreRefused) {
  const auto config = models::config_from_file(parity_dir() + "/castling_attn.config.json");
  auto weights = nn::read_tensor_map(parity_dir() + "/castling_attn.safetensors");
  weights.erase("proj.bias");
  EXPECT_THROW(models::run_attention_module(config, weights, at::randn({1, 50, 64})),
               nn::StateLoadError);
  EXPECT_THROW(
      models::run_attention_module(models::Json{{"arch", "vit"}}, weights, at::randn({1, 50, 64})),
      models::ModelError);
}

}  // namespace
}  // namespace attnlab::testing
