// Class-specific explanations on backbones: Grad-CAM and gradient-weighted rollout
// concentrate where a constructed model's class score can look, both run on every
// backbone and attention mechanism, hierarchical and non-square inputs give maps on the
// right grid, prefix tokens are left out, and layers above the explicit-form limit are
// refused with a message that names them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "core/analysis/grad_rollout.h"
#include "core/attention/capabilities.h"
#include "core/attention/registry.h"
#include "models/grad_rollout_run.h"
#include "models/gradcam_run.h"
#include "models/model_registry.h"

namespace {

using attnlab::models::Json;

std::shared_ptr<attnlab::models::Backbone> build(const Json& config) {
  at::manual_seed(0);
  auto m = attnlab::models::make_backbone(config);
  m->eval();
  return m;
}

Json grad_rollout_vit_with(const std::string& mech) {
  const bool grid_only = attnlab::attention::mechanism_info(mech).needs_grid;
  return {{"arch", "vit"},    {"img_size", 32},    {"patch_size", 8},
          {"embed_dim", 16},  {"depth", 2},        {"num_heads", 2},
          {"num_classes", 5}, {"attention", mech}, {"class_token", !grid_only}};
}

void expect_sound(const at::Tensor& map, int64_t h, int64_t w) {
  ASSERT_EQ(map.sizes(), (at::IntArrayRef{h, w}));
  EXPECT_TRUE(at::isfinite(map).all().item<bool>());
  EXPECT_GE(map.min().item<float>(), 0.0f);
  EXPECT_GT(map.sum().item<float>(), 0.0f);
}

}  // namespace

// A one-block DeiT with zero biases and positional embeddings, shown an image that is zero
// outside its top-left quarter: every token outside the quarter is the zero vector, so
// its value vector is zero and the class score can use nothing from it. Both explanations
// must put all their weight inside the quarter.
TEST(ClassExplanations, ConcentrateWhereTheClassScoreLooks) {
  Json c = grad_rollout_vit_with("softmax");
  c["depth"] = 1;
  auto model = build(c);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->named_parameters())
      if (p.key() == "pos_embed" ||
          (p.key().size() > 5 && p.key().rfind(".bias") == p.key().size() - 5))
        p.value().zero_();
  }
  at::Tensor image = at::zeros({1, 3, 32, 32});
  image.slice(2, 0, 16).slice(3, 0, 16).copy_(at::randn({1, 3, 16, 16}));
  at::Tensor inside = at::zeros({4, 4}, at::kBool);
  inside.slice(0, 0, 2).slice(1, 0, 2).fill_(true);

  for (int64_t cls = 0; cls < 5; ++cls) {
    SCOPED_TRACE("class " + std::to_string(cls));
    attnlab::models::GradCamRequest cam;
    cam.cls = cls;
    cam.cam.relu = false;  // the signed map: nothing at all outside, of either sign
    const at::Tensor cam_map = attnlab::models::run_grad_cam(*model, image, cam).map;
    EXPECT_EQ(cam_map.masked_select(~inside).abs().max().item<float>(), 0.0f);
    EXPECT_GT(cam_map.masked_select(inside).abs().sum().item<float>(), 1e-4f);

    attnlab::models::GradRolloutRequest roll;
    roll.cls = cls;
    const auto r = attnlab::models::run_grad_rollout(*model, image, roll);
    EXPECT_EQ(r.readout, "the cls row");
    EXPECT_EQ(r.map.masked_select(~inside).abs().max().item<float>(), 0.0f);
    EXPECT_GT(r.map.masked_select(inside).sum().item<float>(), 1e-4f);
  }
}

// The same DeiT skeleton with every registered mechanism: the explicit form runs for each,
// and both maps lie on the 4x4 grid with the cls token (when there is one) left out.
TEST(ClassExplanations, RunForEveryMechanism) {
  for (const auto& mech : attnlab::attention::mechanism_names()) {
    SCOPED_TRACE(mech);
    auto model = build(grad_rollout_vit_with(mech));
    const at::Tensor image = at::randn({1, 3, 32, 32});
    const auto r = attnlab::models::run_grad_rollout(*model, image);
    const auto& info = attnlab::attention::mechanism_info(mech);
    if (std::find(info.capabilities.begin(), info.capabilities.end(),
                  attnlab::attention::capability::kChannelMap) != info.capabilities.end()) {
      // XCA mixes channels, not tokens: its token rows are the identity, so the cls row's
      // rollout never leaves the cls token and the map on the grid is exactly zero.
      ASSERT_EQ(r.map.sizes(), (at::IntArrayRef{4, 4}));
      EXPECT_EQ(r.map.abs().sum().item<float>(), 0.0f);
    } else {
      expect_sound(r.map, 4, 4);
    }
    EXPECT_EQ(r.layers, 2);
    const bool pooled = attnlab::attention::mechanism_info(mech).needs_grid;
    EXPECT_EQ(r.readout,
              pooled ? "mean of all rows (the classifier pools every token)" : "the cls row");
    const auto cam = attnlab::models::run_grad_cam(*model, image);
    EXPECT_EQ(cam.map.sizes(), (at::IntArrayRef{4, 4}));
    EXPECT_EQ(cam.cls, r.cls);  // both explain the top-1 class by default
  }
}

TEST(ClassExplanations, FamiliesWithTheirOwnSkeletons) {
  for (const std::string arch : {"anchor_deit_distilled", "castling_deit"}) {
    SCOPED_TRACE(arch);
    Json c = grad_rollout_vit_with("softmax");
    c["arch"] = arch;
    c.erase("attention");
    if (arch == "anchor_deit_distilled") c["num_anchors"] = 5;
    auto model = build(c);
    const at::Tensor image = at::randn({1, 3, 32, 32});
    const auto r = attnlab::models::run_grad_rollout(*model, image);
    expect_sound(r.map, 4, 4);
    if (arch == "anchor_deit_distilled") {
      EXPECT_EQ(r.readout, "mean of the cls and dist rows");
    }
    EXPECT_EQ(attnlab::models::run_grad_cam(*model, image).map.sizes(), (at::IntArrayRef{4, 4}));
  }
}

// Hierarchical backbones on a non-square input: the rollout crosses the stages by area and
// lands on the first stage's grid; Grad-CAM explains the last stage on its own grid.
TEST(ClassExplanations, HierarchicalNonSquareInputs) {
  const Json litv2 = {{"arch", "litv2"},          {"img_size", 64},
                      {"patch_size", 4},          {"embed_dim", 8},
                      {"depths", {1, 1, 1, 1}},   {"num_heads", {1, 1, 2, 2}},
                      {"local_ws", {0, 0, 2, 1}}, {"num_classes", 4}};
  const Json ravlt = {{"arch", "ravlt"},
                      {"embed_dims", {16, 16, 32, 32}},
                      {"depths", {1, 1, 1, 1}},
                      {"num_heads", {1, 1, 2, 2}},
                      {"projection", 32},
                      {"num_classes", 4},
                      {"stage_attention", {"rala", "rala", "softmax", "softmax"}}};
  for (const Json& config : {litv2, ravlt}) {
    SCOPED_TRACE(config["arch"].get<std::string>());
    auto model = build(config);
    const at::Tensor image = at::randn({1, 3, 64, 96});
    const auto r = attnlab::models::run_grad_rollout(*model, image);
    EXPECT_TRUE(r.layout.prefix.empty());
    EXPECT_EQ(r.readout, "mean of all rows (the classifier pools every token)");
    const auto cam = attnlab::models::run_grad_cam(*model, image);
    EXPECT_EQ(cam.target, "layers.3");
    EXPECT_EQ(cam.map.sizes(), (at::IntArrayRef{2, 3}));  // 64x96 / 32
    // The first attention layer's grid: LITv2 has none in stages 1-2 (MLP-only blocks).
    if (config["arch"] == "litv2") {
      expect_sound(r.map, 4, 6);  // stage 3: 64x96 / 16
    } else {
      expect_sound(r.map, 16, 24);  // stage 1: 64x96 / 4
    }
  }
}

TEST(ClassExplanations, RefusesLayersAboveTheExplicitFormLimit) {
  Json c = grad_rollout_vit_with("linear");
  c["img_size"] = 520;  // 65x65 = 4225 tokens + cls
  auto model = build(c);
  try {
    attnlab::models::run_grad_rollout(*model, at::randn({1, 3, 520, 520}));
    FAIL() << "a 4226-token layer was made explicit";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("4226 tokens"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4096"), std::string::npos) << e.what();
  }
}

TEST(ClassExplanations, GradientRolloutChecksItsInputs) {
  attnlab::analysis::GradientLayer layer;
  EXPECT_THROW(attnlab::analysis::gradient_rollout({layer}, 0), std::invalid_argument);
  EXPECT_THROW(attnlab::analysis::gradient_rollout({}, 0), std::invalid_argument);
  // A trace from an ordinary forward has no explicit rows to weight.
  auto model = build(grad_rollout_vit_with("softmax"));
  attnlab::models::ForwardOptions options;
  options.trace_attention = true;
  const auto r = model->run(at::randn({1, 3, 32, 32}), options);
  layer.trace = r.traces[0].trace.get();
  try {
    attnlab::analysis::gradient_rollout({layer}, 0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("explicit form"), std::string::npos) << e.what();
  }
}
