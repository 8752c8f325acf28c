// RAVLT (models/ravlt.cpp): parity with the reference on the ravlt_mini fixture (weights
// from .safetensors and .pth, config from the JSON file and from the safetensors
// metadata), the official sizes' state-dict layouts against the shared manifests, the
// RoPE.angle check, training-mode BatchNorm, traces and layouts, and config refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/io/tensor_file.h"
#include "core/nn/state_loading.h"
#include "models/checkpoint_loading.h"
#include "models/model_registry.h"
#include "models/ravlt.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

const char* const kName = "ravlt_mini";

std::string ravlt_fixture(const std::string& suffix) {
  return parity_dir() + "/" + kName + suffix;
}

double rel_diff(const at::Tensor& ours, const at::Tensor& ref) {
  const at::Tensor a = ours.to(at::kDouble), b = ref.to(at::kDouble);
  return (a - b).norm().item<double>() / b.norm().item<double>();
}

std::shared_ptr<models::Backbone> loaded_mini(const models::Json& config,
                                              const std::string& weights) {
  auto model = models::make_backbone(config);
  models::load_checkpoint(*model, weights);
  model->eval();
  return model;
}

TEST(RavltParity, MiniMatchesTheReferenceForEveryWeightsAndConfigSource) {
  const nn::TensorMap expected = nn::read_tensor_map(ravlt_fixture(".expected.safetensors"));
  const std::map<std::string, models::Json> configs = {
      {"config.json", models::config_from_file(ravlt_fixture(".config.json"))},
      {"metadata",
       models::config_from_metadata(io::read_tensor_file(ravlt_fixture(".safetensors")).metadata)}};
  models::ForwardOptions options;
  options.record_outputs = true;
  for (const auto& [config_source, config] : configs) {
    for (const std::string weights : {".safetensors", ".pth"}) {
      SCOPED_TRACE("config from " + config_source + ", weights from " + kName + weights);
      auto model = loaded_mini(config, ravlt_fixture(weights));
      const auto result = model->run(expected.at("input"), options);
      ASSERT_EQ(result.logits.sizes(), expected.at("logits").sizes());
      const double logits_diff =
          (result.logits.to(at::kDouble) - expected.at("logits").to(at::kDouble))
              .abs()
              .max()
              .item<double>();
      std::printf("[ravlt_mini %s, %s] logits max|d| = %.3g\n", config_source.c_str(),
                  weights.c_str(), logits_diff);
      EXPECT_LE(logits_diff, 1e-4);
      int compared = 0;
      for (const auto& [name, ref] : expected) {
        if (name == "input" || name == "logits") continue;
        const auto it = result.outputs.find(name);
        if (it == result.outputs.end()) {
          ADD_FAILURE() << "no output " << name;
          continue;
        }
        ASSERT_EQ(it->second.sizes(), ref.sizes()) << name;
        const double d = rel_diff(it->second, ref);
        std::printf("  %-28s rel %.3g\n", name.c_str(), d);
        EXPECT_LE(d, 1e-4) << name;
        ++compared;
      }
      EXPECT_EQ(compared, 7);  // patch_embed, 4 stages, 2 attention modules
    }
  }
}

// Our parameters and buffers: name → shape.
std::map<std::string, std::vector<int64_t>> model_layout(const models::Backbone& model) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& p : model.named_parameters()) out[p.key()] = p.value().sizes().vec();
  for (const auto& b : model.named_buffers()) out[b.key()] = b.value().sizes().vec();
  return out;
}

TEST(RavltManifest, OfficialConfigsGiveExactlyTheManifestKeysShapesAndCounts) {
  for (const auto& name : models::ravlt_official_names()) {
    SCOPED_TRACE(name);
    std::ifstream in(shared_dir() + "/fixtures/manifests/" + name + ".json");
    ASSERT_TRUE(in) << "missing manifest";
    const models::Json manifest = models::Json::parse(in);
    std::map<std::string, std::vector<int64_t>> want;
    std::vector<std::string> order;
    for (const auto& t : manifest.at("tensors")) {
      const std::string key = t.at(0).get<std::string>();
      if (key.size() >= 19 && key.compare(key.size() - 19, 19, "num_batches_tracked") == 0)
        continue;
      want[key] = t.at(1).get<std::vector<int64_t>>();
      order.push_back(key);
    }
    auto model = models::make_backbone(models::ravlt_official_config(name));
    const auto have = model_layout(*model);
    for (const auto& [key, shape] : want) {
      const auto it = have.find(key);
      if (it == have.end())
        ADD_FAILURE() << "missing " << key;
      else
        EXPECT_EQ(it->second, shape) << key;
    }
    for (const auto& [key, shape] : have) EXPECT_TRUE(want.count(key)) << "unexpected " << key;
    // num_params counts parameters only: no BN running stats, no RoPE.angle buffers.
    int64_t params = 0, buffers = 0;
    std::vector<std::string> param_order;
    for (const auto& p : model->named_parameters()) {
      params += p.value().numel();
      param_order.push_back(p.key());
    }
    for (const auto& b : model->named_buffers()) buffers += b.value().numel();
    std::printf("[%s] %zu tensors, parameters %lld (manifest %lld), buffers %lld\n", name.c_str(),
                have.size(), static_cast<long long>(params),
                manifest.at("num_params").get<long long>(), static_cast<long long>(buffers));
    EXPECT_EQ(params, manifest.at("num_params").get<int64_t>());
    // The parameters come in the reference order (the manifest's, buffers left out).
    std::vector<std::string> manifest_params;
    for (const auto& key : order)
      if (std::find(param_order.begin(), param_order.end(), key) != param_order.end())
        manifest_params.push_back(key);
    EXPECT_EQ(param_order, manifest_params);
  }
  EXPECT_THROW(models::ravlt_official_config("ravlt_xl"), models::ModelError);
}

models::Json mini_config() {
  return models::config_from_file(ravlt_fixture(".config.json"));
}

TEST(RavltModel, ARopeAngleBufferOtherThanOursIsRefusedAtForwardTime) {
  auto model = loaded_mini(mini_config(), ravlt_fixture(".safetensors"));
  const at::Tensor images = at::randn({1, 3, 64, 64});
  EXPECT_NO_THROW(model->run(images));
  at::Tensor angle = model->named_buffers()["layers.2.RoPE.angle"];
  angle.mul_(1.5);
  try {
    model->run(images);
    FAIL() << "a scaled RoPE.angle was accepted";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("layers.2.RoPE.angle"), std::string::npos) << e.what();
  }
  angle.div_(1.5);
  EXPECT_NO_THROW(model->run(images));
}

TEST(RavltModel, TrainingModeUsesBatchStatisticsAndEvalDoesNot) {
  at::manual_seed(3);
  auto model = loaded_mini(mini_config(), ravlt_fixture(".safetensors"));
  const at::Tensor images = at::randn({2, 3, 64, 96});
  at::Tensor mean = model->named_buffers()["patch_embed.proj.1.running_mean"];
  const at::Tensor before = mean.clone();
  const at::Tensor eval_logits = model->run(images).logits;
  EXPECT_TRUE(at::equal(mean, before));
  model->train();
  const at::Tensor train_logits = model->run(images).logits;
  EXPECT_FALSE(at::equal(mean, before));  // running stats updated, as PyTorch does
  EXPECT_GT((train_logits - eval_logits).abs().max().item<double>(), 1e-3);
}

TEST(RavltModel, TracesCarryEachLayersPathMechanismAndGrid) {
  auto model = loaded_mini(mini_config(), ravlt_fixture(".safetensors"));
  const at::Tensor images = at::randn({1, 3, 64, 96});
  models::ForwardOptions options;
  options.trace_attention = true;
  options.record_outputs = true;
  const auto traced = model->run(images, options);
  const auto plain = model->run(images);
  EXPECT_TRUE(at::allclose(traced.logits, plain.logits, 1e-6, 1e-6));
  ASSERT_EQ(traced.traces.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const auto& t = traced.traces[i];
    EXPECT_EQ(t.path, "layers." + std::to_string(i) + ".blocks.0.attn");
    EXPECT_EQ(t.trace->mechanism, i < 2 ? "rala" : "softmax_rope");
    EXPECT_EQ(t.trace->layout.stage, i);
    EXPECT_EQ(t.trace->layout.height, 16 >> i);
    EXPECT_EQ(t.trace->layout.width, 24 >> i);
    EXPECT_EQ(t.trace->layout.num_prefix(), 0);
    for (const std::string& p :
         {t.path, "layers." + std::to_string(i) + ".blocks.0", "layers." + std::to_string(i)})
      EXPECT_TRUE(traced.outputs.count("out." + p)) << p;
  }
  EXPECT_EQ(traced.outputs.at("out.layers.3").sizes(), (std::vector<int64_t>{1, 128, 2, 3}));
}

TEST(RavltModel, WithoutLayerscaleThereAreNoGammas) {
  auto config = mini_config();
  config["layerscale"] = false;
  auto model = models::make_backbone(config);
  for (const auto& p : model->named_parameters())
    EXPECT_EQ(p.key().find("gamma"), std::string::npos) << p.key();
  EXPECT_EQ(model->run(at::randn({1, 3, 32, 32})).logits.sizes(), (std::vector<int64_t>{1, 10}));
  // Sizes the strides do not divide run too (the padded stride-2 convs round up).
  EXPECT_EQ(model->run(at::randn({1, 3, 50, 70})).logits.sizes(), (std::vector<int64_t>{1, 10}));
}

TEST(RavltConfig, BadConfigsAreRefusedNamingTheKey) {
  const std::vector<std::pair<std::string, models::Json>> cases = {
      {"depths", {{"depths", {1, 1, 1}}}},
      {"num_heads", {{"num_heads", {1, 1, 3, 2}}}},
      {"num_heads", {{"num_heads", {1, 1, 2, 64}}}},  // head dim 2: no 2-D RoPE
      {"stage_attention", {{"stage_attention", {"rala", "rala", "hilo", "softmax"}}}},
      {"stage_attention", {{"stage_attention", {"rala", "softmax"}}}},
      {"embed_dims", {{"embed_dims", models::Json::array()}}},
      {"embed_dims", {{"embed_dims", {63, 64, 128, 128}}}},
      {"mlp_ratio", {{"mlp_ratio", 0.0}}},
      {"projection", {{"projection", 0}}},
      {"num_classes", {{"num_classes", -1}}},
      {"depths", {{"depths", {1, 0, 1, 1}}}},
      {"input_hw", {{"input_hw", {224}}}},
      {"layerscale", {{"layerscale", "yes"}}},
  };
  for (const auto& [key, patch] : cases) {
    auto config = mini_config();
    config.merge_patch(patch);
    try {
      models::make_backbone(config);
      ADD_FAILURE() << "accepted " << patch.dump();
    } catch (const models::ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos)
          << patch.dump() << ": " << e.what();
    }
  }
}

TEST(RavltConfig, DefaultsAreTheReleasedOnes) {
  auto config = mini_config();
  for (const char* key :
       {"mlp_ratio", "projection", "num_classes", "stage_attention", "layerscale", "input_hw"})
    config.erase(key);
  const auto c = models::parse_ravlt_config(config);
  EXPECT_EQ(c.mlp_ratio, 3.5);
  EXPECT_EQ(c.projection, 1024);
  EXPECT_EQ(c.num_classes, 1000);
  EXPECT_EQ(c.stage_attention, (std::vector<std::string>{"rala", "rala", "softmax", "softmax"}));
  EXPECT_TRUE(c.layerscale);
  EXPECT_EQ(c.input_hw, (std::vector<int64_t>{224, 224}));
}

}  // namespace
}  // namespace attnlab::testing
