// "LITv2 with attention X" (models/litv2.h: attention, attention_options): the PVT-form
// mechanisms of 2023–25 in LITv2's pyramid, where their papers put them (a PVT-style
// four-stage model). The stages with attention run X with the stage's width and heads and
// the config's options; everything else is LITv2's own (the same state-dict keys outside the
// attention modules); the traces are X's; and bad choices are refused naming the key.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "models/config_mechanism.h"
#include "models/model_registry.h"
#include "tests/models/litv2_test_util.h"

namespace attnlab::testing {
namespace {

using litv2_test::mini_config;

std::set<std::string> keys_outside_attention(const torch::nn::Module& m) {
  std::set<std::string> out;
  for (const auto& p : m.named_parameters())
    if (p.key().find(".attn.") == std::string::npos) out.insert(p.key());
  return out;
}

TEST(Litv2AttentionX, PvtFormMechanismsRunInTheAttentionStages) {
  const Json plain_config = mini_config();
  auto plain = models::make_backbone(plain_config);
  for (const auto& [mechanism, options] :
       {std::pair<std::string, Json>{"agent_pvt",
                                     {{"agent_num", 4}, {"num_patches", {0, 0, 196, 49}}}},
        std::pair<std::string, Json>{"pola", {{"num_patches", {0, 0, 196, 49}}}},
        std::pair<std::string, Json>{"mlla", Json::object()}}) {
    Json c = plain_config;
    c["attention"] = mechanism;
    c["attention_options"] = options;
    EXPECT_EQ(models::config_mechanism(c), mechanism);
    auto model = models::make_backbone(c);
    model->eval();
    EXPECT_EQ(keys_outside_attention(*model), keys_outside_attention(*plain)) << mechanism;
    at::manual_seed(3);
    const int64_t side = plain_config.value("img_size", 224);
    models::ForwardOptions traced;
    traced.trace_attention = true;
    at::NoGradGuard no_grad;
    const auto r = model->run(at::randn({1, 3, side, side}), traced);
    ASSERT_FALSE(r.traces.empty()) << mechanism;
    for (const auto& t : r.traces) EXPECT_EQ(t.trace->mechanism, mechanism) << t.path;
    EXPECT_TRUE(at::isfinite(r.logits).all().item<bool>()) << mechanism;
  }
}

TEST(Litv2AttentionX, BadChoicesAreRefusedNamingTheKey) {
  const auto refused = [](const Json& c, const std::string& what) {
    try {
      models::make_backbone(c);
      ADD_FAILURE() << "accepted: " << c.dump();
    } catch (const models::ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Json c = mini_config();
  c["attention"] = "no_such_attention";
  refused(c, "'attention' 'no_such_attention' is not a registered mechanism");
  c = mini_config();
  c["attention_options"] = {{"agent_num", 4}};
  refused(c, "'attention_options' is for another attention");
  c["attention"] = "agent_pvt";
  c["attention_options"] = {{"agent_num", "many"}};
  refused(c, "attention_options");
  c["attention_options"] = {{"num_patches", {196, 49}}};
  refused(c, "entry 'num_patches' lists 2 values for 4 stages");
}

}  // namespace
}  // namespace attnlab::testing
