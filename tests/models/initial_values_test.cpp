// Initial weights (core/nn/initial_values.h): a model built to be loaded draws no random
// numbers (the generator is where it was) and, loaded, holds exactly the checkpoint's
// values; a model built for --random-init draws them as before (the same seed gives the
// same weights, and they are not all zero or uninitialised garbage).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/nn/initial_values.h"
#include "models/checkpoint_loading.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

nlohmann::json deit_mini_config() {
  return models::config_from_file(parity_dir() + "/deit_mini.config.json");
}

TEST(InitialValues, AModelToBeLoadedDrawsNoRandomNumbersAndLoadsExactly) {
  at::manual_seed(7);
  const double expected_next = at::rand({1}).item<double>();
  at::manual_seed(7);
  {
    const nn::WeightsToBeLoaded guard;
    EXPECT_TRUE(nn::weights_to_be_loaded());
    models::make_backbone(deit_mini_config());
  }
  EXPECT_FALSE(nn::weights_to_be_loaded());
  EXPECT_EQ(at::rand({1}).item<double>(), expected_next);  // nothing was drawn

  const std::string weights = parity_dir() + "/deit_mini.safetensors";
  const models::LoadedModel loaded = models::load_model(deit_mini_config(), weights, "");
  const auto file = models::read_checkpoint_weights(weights).tensors;
  size_t compared = 0;
  for (const auto& p : loaded.model->named_parameters()) {
    ASSERT_TRUE(file.count(p.key())) << p.key();
    EXPECT_TRUE(at::equal(p.value(), file.at(p.key()))) << p.key();
    ++compared;
  }
  EXPECT_GT(compared, 10u);
}

TEST(InitialValues, RandomInitialisationIsSeededAndUnchanged) {
  at::manual_seed(0);
  const auto a = models::make_backbone(deit_mini_config());
  at::manual_seed(0);
  const auto b = models::make_backbone(deit_mini_config());
  for (const auto& p : a->named_parameters()) {
    EXPECT_TRUE(at::equal(p.value(), b->named_parameters()[p.key()])) << p.key();
    if (p.key().find("weight") != std::string::npos && p.key().find("norm") == std::string::npos) {
      EXPECT_GT(p.value().abs().max().item<double>(), 0.0) << p.key();
    }
  }
}

}  // namespace
}  // namespace attnlab::testing
