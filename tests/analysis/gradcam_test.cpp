// Grad-CAM: the map's formula on a constructed layer, gradients of the class score with
// respect to the target activation against finite differences, and the grid of the
// default target of isotropic and hierarchical backbones (from the trace, prefix tokens
// left out, non-square inputs).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/analysis/gradcam.h"
#include "models/gradcam_run.h"
#include "models/model_registry.h"

using attnlab::attention::grid_layout;
using attnlab::attention::TokenLayout;

namespace {

std::shared_ptr<attnlab::models::Backbone> gradcam_tiny(const attnlab::models::Json& config) {
  at::manual_seed(0);
  auto m = attnlab::models::make_backbone(config);
  m->eval();
  return m;
}

const attnlab::models::Json kTinyVit = {{"arch", "vit"},   {"img_size", 32}, {"patch_size", 8},
                                        {"embed_dim", 16}, {"depth", 2},     {"num_heads", 2},
                                        {"num_classes", 5}};

}  // namespace

TEST(GradCam, IsTheReluOfActivationsWeightedByMeanGradientsOverTheGrid) {
  TokenLayout layout = grid_layout(2, 3);
  layout.prefix = {"cls"};
  const at::Tensor a = at::rand({7, 4}, at::kDouble) - 0.5;
  const at::Tensor g = at::rand({7, 4}, at::kDouble) - 0.5;
  const at::Tensor map = attnlab::analysis::grad_cam(a, g, layout);
  ASSERT_EQ(map.sizes(), (at::IntArrayRef{2, 3}));
  const at::Tensor w = g.slice(0, 1).mean(0);
  for (int64_t y = 0; y < 2; ++y)
    for (int64_t x = 0; x < 3; ++x) {
      const double expect = std::max(0.0, (a[1 + y * 3 + x] * w).sum().item<double>());
      EXPECT_NEAR(map[y][x].item<double>(), expect, 1e-6);
    }
  // The cls token takes no part: changing it changes nothing.
  at::Tensor a2 = a.clone(), g2 = g.clone();
  a2[0].fill_(100.0);
  g2[0].fill_(-100.0);
  EXPECT_TRUE(at::allclose(attnlab::analysis::grad_cam(a2, g2, layout), map));
  // Without the ReLU the signed map shows where the evidence argues against the class.
  attnlab::analysis::GradCamOptions signed_map;
  signed_map.relu = false;
  EXPECT_TRUE(at::allclose(at::relu(attnlab::analysis::grad_cam(a, g, layout, signed_map)), map));
  EXPECT_THROW(attnlab::analysis::grad_cam(a.slice(0, 1), g.slice(0, 1), layout),
               std::invalid_argument);
}

TEST(GradCam, GradientsAgreeWithFiniteDifferences) {
  auto model = gradcam_tiny(kTinyVit);
  model->to(at::kDouble);
  const at::Tensor image = at::randn({1, 3, 32, 32}, at::kDouble);
  const auto r = attnlab::models::run_grad_cam(*model, image);
  EXPECT_EQ(r.target, "blocks.1.norm1");
  ASSERT_EQ(r.gradient.sizes(), (at::IntArrayRef{17, 16}));  // cls + 4x4 grid, 16 channels
  ASSERT_GT(r.gradient.abs().max().item<double>(), 1e-4);    // not vacuously zero
  const double h = 1e-5;
  double worst = 0;
  for (int64_t token : {0, 3, 9, 16})
    for (int64_t c : {0, 5, 15}) {
      attnlab::models::GradCamRequest q;
      q.cls = r.cls;
      q.target_offset = at::zeros({1, 17, 16}, at::kDouble);
      q.target_offset[0][token][c] = h;
      const double up = attnlab::models::run_grad_cam(*model, image, q).score;
      q.target_offset[0][token][c] = -h;
      const double down = attnlab::models::run_grad_cam(*model, image, q).score;
      const double fd = (up - down) / (2 * h), ad = r.gradient[token][c].item<double>();
      worst = std::max(worst, std::abs(fd - ad) / std::max(1e-6, std::abs(fd)));
    }
  EXPECT_LE(worst, 1e-3);
}

TEST(GradCam, IsotropicMapsLeaveThePrefixTokensOut) {
  auto model = gradcam_tiny(kTinyVit);
  const auto r = attnlab::models::run_grad_cam(*model, at::randn({1, 3, 32, 32}));
  EXPECT_EQ(r.layout.prefix, std::vector<std::string>{"cls"});
  EXPECT_EQ(r.map.sizes(), (at::IntArrayRef{4, 4}));
  EXPECT_GE(r.map.min().item<float>(), 0.0f);
  // Any class, and any module output by its path.
  attnlab::models::GradCamRequest q;
  q.cls = 3;
  q.target = "blocks.0";
  const auto other = attnlab::models::run_grad_cam(*model, at::randn({1, 3, 32, 32}), q);
  EXPECT_EQ(other.cls, 3);
  EXPECT_EQ(other.map.sizes(), (at::IntArrayRef{4, 4}));
  q.target = "blocks.7";
  EXPECT_THROW(attnlab::models::run_grad_cam(*model, at::randn({1, 3, 32, 32}), q),
               attnlab::models::ModelError);
  q.target = "";
  q.cls = 5;
  EXPECT_THROW(attnlab::models::run_grad_cam(*model, at::randn({1, 3, 32, 32}), q),
               attnlab::models::ModelError);
}

TEST(GradCam, HierarchicalModelsExplainTheLastStageOnItsGridForNonSquareInputs) {
  const attnlab::models::Json litv2 = {{"arch", "litv2"},          {"img_size", 64},
                                       {"patch_size", 4},          {"embed_dim", 8},
                                       {"depths", {1, 1, 1, 1}},   {"num_heads", {1, 1, 2, 2}},
                                       {"local_ws", {0, 0, 2, 1}}, {"num_classes", 4}};
  auto model = gradcam_tiny(litv2);
  const auto r = attnlab::models::run_grad_cam(*model, at::randn({1, 3, 64, 96}));
  EXPECT_EQ(r.target, "layers.3");
  EXPECT_TRUE(r.layout.prefix.empty());
  EXPECT_EQ(r.map.sizes(), (at::IntArrayRef{2, 3}));  // 64x96 / 32
}
