// The fixtures' single-module archs run through models::run_attention_module (what
// `attnlab infer` uses for them) reproduce the reference outputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/attention/registry.h"
#include "models/attention_module.h"
#include "models/backbone.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

// Every mechanism that declares a reference module with a fixture: the module arch built
// from the fixture's config reproduces every output the fixture records (≤ 1e-5, the
// parity tolerance of a single float32 layer), and names no output the fixture lacks.
// Intermediate tensors the fixtures also hold (normalised q, k, ...) are checked by each
// mechanism's own test in tests/attention/.
TEST(AttentionModuleArchs, EveryDeclaredFixtureReproducesItsExpectedOutputs) {
  size_t fixtures = 0;
  for (const auto& info : attention::mechanisms()) {
    if (!info.reference_module || info.reference_module->fixture.empty()) continue;
    const std::string name = info.reference_module->fixture;
    SCOPED_TRACE(info.name + " / " + name);
    const auto config = models::config_from_file(parity_dir() + "/" + name + ".config.json");
    ASSERT_TRUE(models::is_attention_module_arch(config["arch"].get<std::string>()));
    const auto weights = nn::read_tensor_map(parity_dir() + "/" + name + ".safetensors");
    const auto expected = nn::read_tensor_map(parity_dir() + "/" + name + ".expected.safetensors");
    const auto outputs = models::run_attention_module(config, weights, expected.at("input"));
    for (const auto& [key, value] : outputs) {
      ASSERT_TRUE(expected.count(key)) << "the fixture has no " << key;
      EXPECT_LE(max_abs_diff(value, expected.at(key)), 1e-5) << key;
    }
    ++fixtures;
  }
  // castling_attn, hilo_padded and hydra_attn at least (the comparison mechanisms add theirs).
  EXPECT_GE(fixtures, 3u);
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
