// Issue 65 at the model level: which path a backbone's softmax-core layers take in each
// forward the session runs. The analyses' shared traced forward takes the fused path in
// every such layer where the build has it (maps come from the traces' q, k, v); gradient
// rollout, whose forward runs every layer through its explicit form (models/
// grad_rollout_run.h), and the complexity report's forward, whose operations a
// runtime::MacCounter counts, take it in none.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/fused_attention.h"
#include "core/attention/registry.h"
#include "core/runtime/mac_counter.h"
#include "models/grad_rollout_run.h"
#include "models/model_registry.h"
#include "tests/attention/attention_paths_during.h"
#include "tests/attention/fused_mechanism_cases.h"

namespace attnlab::testing {
namespace {

// A 2-block ViT skeleton on 32×32 images (4×4 tokens) with `mechanism` in every block.
models::Json vit_running(const std::string& mechanism) {
  const bool grid_only = attention::mechanism_info(mechanism).needs_grid;
  return {{"arch", "vit"},
          {"img_size", 32},
          {"patch_size", 8},
          {"embed_dim", 16},
          {"depth", 2},
          {"num_heads", 2},
          {"num_classes", 5},
          {"attention", mechanism},
          {"class_token", !grid_only}};
}

TEST(FusedPathsInModels, OnlyTheAnalysesSharedForwardIsFused) {
  const std::string unavailable = fused_path_unavailable();
  const bool fused = unavailable.empty();
  std::vector<std::pair<std::string, models::Json>> models_to_run;
  std::set<std::string> mechanisms;
  for (const FusedCase& c : fused_cases()) mechanisms.insert(c.mechanism);
  for (const auto& m : mechanisms) models_to_run.push_back({"vit with " + m, vit_running(m)});
  // The families whose own blocks call the core: LITv2's HiLo (stage 3) and RAVLT's softmax
  // with RoPE (stages 3 and 4).
  models_to_run.push_back({"litv2",
                           {{"arch", "litv2"},
                            {"img_size", 64},
                            {"patch_size", 4},
                            {"embed_dim", 8},
                            {"depths", {1, 1, 1, 1}},
                            {"num_heads", {1, 1, 2, 2}},
                            {"local_ws", {0, 0, 2, 1}},
                            {"num_classes", 4}}});
  models_to_run.push_back({"ravlt",
                           {{"arch", "ravlt"},
                            {"embed_dims", {16, 16, 32, 32}},
                            {"depths", {1, 1, 1, 1}},
                            {"num_heads", {1, 1, 2, 2}},
                            {"projection", 32},
                            {"num_classes", 4},
                            {"stage_attention", {"rala", "rala", "softmax", "softmax"}}}});
  for (const auto& [label, config] : models_to_run) {
    SCOPED_TRACE(label);
    at::manual_seed(0);
    auto model = models::make_backbone(config);
    model->eval();
    const int64_t side = config.at("arch") == "vit" ? 32 : 64;
    const at::Tensor image = at::randn({1, 3, side, side});
    models::ForwardOptions traced;
    traced.trace_attention = true;
    const auto shared = attention_paths_during([&] {
      at::NoGradGuard no_grad;
      model->run(image, traced);
    });
    EXPECT_GT(shared.fused + shared.eager, 0) << "no layer called the core";
    EXPECT_EQ(shared.eager, fused ? 0 : shared.fused + shared.eager);
    const auto rollout = attention_paths_during([&] { models::run_grad_rollout(*model, image); });
    EXPECT_EQ(rollout.fused, 0) << "gradient rollout's explicit forward took the fused path";
    const auto counted = attention_paths_during([&] {
      at::NoGradGuard no_grad;
      const runtime::MacCounter counter;
      model->run(image, models::ForwardOptions{});
    });
    EXPECT_EQ(counted.fused, 0) << "a counted forward took the fused path";
    EXPECT_EQ(counted.eager, shared.fused + shared.eager);
  }
  if (!fused)
    GTEST_SKIP() << "every forward checked, but none could take a fused path here: " << unavailable;
}

}  // namespace
}  // namespace attnlab::testing
