// LITv2 configs and training: Lo-Fi head counts read off a checkpoint (α-ablation
// layouts load), refusals of inconsistent weights and bad configs naming the key, and
// training mode (batch-statistics BatchNorm with running-stat updates, gradients reaching
// the deformable offsets).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <utility>
#include <vector>

#include "models/checkpoint_loading.h"
#include "models/deform_conv.h"
#include "models/litv2.h"
#include "models/model_registry.h"
#include "tests/models/litv2_test_util.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

using litv2_test::fixture;
using litv2_test::Json;
using litv2_test::mini_config;
using litv2_test::relative;
using litv2_test::state_of;

TEST(Litv2LofiHeads, ReadFromTheCheckpointSoThatAlphaAblationsLoad) {
  // The fixture: stage 3 has 1 Lo-Fi head of 2, stage 4 (window 1) all 4.
  const auto fixture_weights = models::read_checkpoint_weights(fixture(".safetensors")).tensors;
  EXPECT_EQ(models::litv2_config_for_weights(mini_config(), fixture_weights)["lofi_heads"],
            Json({-1, -1, 1, 4}));

  // A synthetic ablation: stage 3 with 4 heads, of which 1 (not floor(4·0.9) = 3) or 0 Lo-Fi.
  for (int64_t lofi : {1, 0}) {
    Json plain = mini_config();
    plain["num_heads"] = {1, 1, 4, 4};
    Json ablated = plain;
    ablated["lofi_heads"] = {-1, -1, lofi, -1};
    at::manual_seed(3);
    auto source = models::make_backbone(ablated);
    const auto weights = state_of(*source);
    EXPECT_EQ(weights.count("layers.2.blocks.0.attn.l_q.weight"), lofi > 0 ? 1u : 0u);

    const Json derived = models::litv2_config_for_weights(plain, weights);
    EXPECT_EQ(derived["lofi_heads"], Json({-1, -1, lofi, 4})) << "lofi " << lofi;
    auto loaded = models::make_backbone(derived);
    nn::load_state(*loaded, weights);
    EXPECT_THROW(nn::load_state(*models::make_backbone(plain), weights), nn::StateLoadError);

    source->eval();
    loaded->eval();
    at::NoGradGuard no_grad;
    at::Tensor images = at::randn({2, 3, 96, 80});  // stage-3 grid 6×5: HiLo pads
    // Two module instances holding the same weights: the same ops, but two runs of them
    // (oneDNN's convolutions need not repeat bit for bit), so up to reordering.
    EXPECT_TRUE(agree_up_to_reordering(loaded->run(images).logits, source->run(images).logits));
  }
}

TEST(Litv2LofiHeads, InconsistentOrMissingAttentionWeightsAreRefused) {
  auto weights = models::read_checkpoint_weights(fixture(".safetensors")).tensors;
  auto disagreeing = weights;
  disagreeing["layers.2.blocks.1.attn.l_q.weight"] = at::zeros({64, 64});
  EXPECT_THROW(models::litv2_config_for_weights(mini_config(), disagreeing), models::ModelError);
  auto ragged = weights;
  ragged["layers.2.blocks.0.attn.l_q.weight"] = at::zeros({40, 64});
  EXPECT_THROW(models::litv2_config_for_weights(mini_config(), ragged), models::ModelError);
  auto missing = weights;
  missing.erase("layers.3.blocks.0.attn.l_q.weight");
  try {
    models::litv2_config_for_weights(mini_config(), missing);
    FAIL();
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("layers.3.blocks.0.attn"), std::string::npos) << e.what();
  }
}

TEST(Litv2Config, BadConfigsAreRefusedNamingTheKey) {
  const std::vector<std::pair<std::string, std::function<void(Json&)>>> cases = {
      {"embed_dim", [](Json& c) { c.erase("embed_dim"); }},
      {"embed_dim", [](Json& c) { c["embed_dim"] = 0; }},
      {"depths", [](Json& c) { c["depths"] = Json::array(); }},
      {"num_heads",
       [](Json& c) {
         c["num_heads"] = {1, 1, 2};
       }},
      {"num_heads",
       [](Json& c) {
         c["num_heads"] = {1, 1, 3, 4};
       }},
      {"local_ws",
       [](Json& c) {
         c["local_ws"] = {0, 0, -2, 1};
       }},
      {"lofi_heads",
       [](Json& c) {
         c["lofi_heads"] = {-1, -1, 1};
       }},
      {"lofi_heads",
       [](Json& c) {
         c["lofi_heads"] = {-1, -1, 3, -1};
       }},
      {"lofi_heads",
       [](Json& c) {
         c["lofi_heads"] = {-1, -1, 1, 2};
       }},
      {"alpha", [](Json& c) { c["alpha"] = 1.5; }},
      {"mlp_ratio", [](Json& c) { c["mlp_ratio"] = "four"; }},
      {"qkv_bias", [](Json& c) { c["qkv_bias"] = "yes"; }},
      {"num_classes", [](Json& c) { c["num_classes"] = -1; }},
      {"arch", [](Json& c) { c["arch"] = "vit"; }},
  };
  for (const auto& [key, mutate] : cases) {
    Json c = mini_config();
    mutate(c);
    try {
      models::make_litv2(c);
      ADD_FAILURE() << "accepted a bad '" << key << "': " << c.dump();
    } catch (const models::ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  auto model = models::make_backbone(mini_config());
  EXPECT_THROW(model->run(at::zeros({1, 3, 16, 64})), models::ModelError);  // stage 4 empty
  EXPECT_THROW(model->run(at::zeros({1, 1, 64, 64})), models::ModelError);
}

TEST(Litv2Training, BatchNormUsesBatchStatisticsAndOffsetsGetGradients) {
  auto model = models::make_backbone(mini_config());
  models::load_checkpoint(*model, fixture(".safetensors"));
  const auto w = state_of(*model);
  const at::Tensor input = nn::read_tensor_map(fixture(".expected.safetensors")).at("input");
  model->train();
  models::ForwardOptions options;
  options.record_outputs = true;
  const auto r = model->run(at::cat({input, input.flip(3)}), options);

  // Stage 1's DTM, recomputed with batch statistics from the stage's last block output.
  const std::string p = "layers.0.downsample.";
  at::Tensor tokens = r.outputs.at("out.layers.0.blocks.0");
  at::Tensor grid = tokens.transpose(1, 2).reshape({2, 16, 56, 56});
  at::Tensor offset =
      at::conv2d(grid, w.at(p + "dconv.conv_offset.weight"), w.at(p + "dconv.conv_offset.bias"), 2);
  models::DeformConvGeometry g;
  g.stride = {2, 2};
  at::Tensor y =
      models::deform_conv2d(grid, offset, w.at(p + "dconv.weight"), w.at(p + "dconv.bias"), g);
  at::Tensor mean = y.mean({0, 2, 3}), var = y.var({0, 2, 3}, /*unbiased=*/false);
  at::Tensor norm = (y - mean.view({1, -1, 1, 1})) / (var.view({1, -1, 1, 1}) + 1e-5).sqrt();
  at::Tensor want = at::gelu(norm * w.at(p + "norm_layer.weight").view({1, -1, 1, 1}) +
                             w.at(p + "norm_layer.bias").view({1, -1, 1, 1}));
  const double rel =
      relative(r.outputs.at("out.layers.0.downsample"), want.flatten(2).transpose(1, 2));
  std::cout << "[litv2] training-mode DTM |delta|/|ref| = " << rel << "\n";
  EXPECT_LE(rel, 1e-5);

  // Running statistics moved with momentum 0.1 (the variance unbiased, as PyTorch).
  const auto after = state_of(*model);
  const double n = static_cast<double>(y.numel() / y.size(1));
  EXPECT_TRUE(at::allclose(after.at(p + "norm_layer.running_mean"),
                           0.9 * w.at(p + "norm_layer.running_mean") + 0.1 * mean, 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(after.at(p + "norm_layer.running_var"),
                           0.9 * w.at(p + "norm_layer.running_var") + 0.1 * var * n / (n - 1), 1e-5,
                           1e-6));

  // The trained offsets matter, so they must get gradients.
  r.logits.sum().backward();
  const auto params = model->named_parameters();
  for (int i = 0; i < 3; ++i) {
    const at::Tensor grad =
        params["layers." + std::to_string(i) + ".downsample.dconv.conv_offset.weight"].grad();
    ASSERT_TRUE(grad.defined()) << i;
    EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << i;
  }
  EXPECT_TRUE(params["layers.2.blocks.0.attn.l_q.weight"].grad().defined());
}

}  // namespace
}  // namespace attnlab::testing
