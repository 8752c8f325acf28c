// LITv2: parity with the reference on litv2_mini (weights from .safetensors and .pth, config
// from .config.json and from the safetensors metadata; logits and every expected tensor),
// the traced attention layers and their layouts, a check that the parity test can fail
// (zeroed offsets), the official full-size layouts (manifests), the registry.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>

#include "models/checkpoint_loading.h"
#include "models/litv2.h"
#include "models/model_registry.h"
#include "tests/models/litv2_test_util.h"

namespace attnlab::testing {
namespace {

using litv2_test::fixture;
using litv2_test::Json;
using litv2_test::metadata_config;
using litv2_test::mini_config;
using litv2_test::relative;

void expect_parity(const std::string& weights, const Json& config, const std::string& label) {
  auto model = models::make_backbone(config);
  ASSERT_EQ(model->arch(), "litv2");
  models::load_checkpoint(*model, fixture(weights));
  model->eval();
  const auto expected = nn::read_tensor_map(fixture(".expected.safetensors"));
  models::ForwardOptions options;
  options.record_outputs = true;
  options.trace_attention = true;
  at::NoGradGuard no_grad;
  const auto r = model->run(expected.at("input"), options);

  const double logits = max_abs_diff(r.logits, expected.at("logits"));
  std::cout << "[litv2] " << label << ": logits max |delta| = " << logits << "\n";
  EXPECT_LE(logits, 1e-4) << label;
  int compared = 0;
  for (const auto& [name, ref] : expected) {
    if (name == "input" || name == "logits") continue;
    auto it = r.outputs.find(name);
    ASSERT_NE(it, r.outputs.end()) << label << ": the model does not record " << name;
    ASSERT_EQ(it->second.sizes(), ref.sizes()) << label << ": " << name;
    const double rel = relative(it->second, ref);
    std::cout << "[litv2] " << label << ": " << name << " |delta|/|ref| = " << rel << "\n";
    EXPECT_LE(rel, 1e-4) << label << ": " << name;
    ++compared;
  }
  EXPECT_EQ(compared, 9) << "the fixture names 9 intermediate tensors";

  // Three HiLo layers (stage 3: two blocks on 14×14; stage 4: one all-Lo-Fi block on 7×7).
  ASSERT_EQ(r.traces.size(), 3u);
  const std::vector<std::string> paths = {"layers.2.blocks.0.attn", "layers.2.blocks.1.attn",
                                          "layers.3.blocks.0.attn"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.traces[i].path, paths[i]);
    const auto& layout = r.traces[i].trace->layout;
    EXPECT_EQ(layout.stage, i < 2 ? 2 : 3);
    EXPECT_EQ(layout.height, i < 2 ? 14 : 7);
    EXPECT_EQ(layout.width, i < 2 ? 14 : 7);
    EXPECT_EQ(layout.num_prefix(), 0);
  }
}

TEST(Litv2Parity, SafetensorsWithConfigFile) {
  expect_parity(".safetensors", models::config_from_file(fixture(".config.json")),
                "safetensors + config.json");
}

TEST(Litv2Parity, SafetensorsWithMetadataConfig) {
  expect_parity(".safetensors", metadata_config(), "safetensors + metadata");
}

TEST(Litv2Parity, PthWithConfigFile) {
  expect_parity(".pth", models::config_from_file(fixture(".config.json")), "pth + config.json");
}

TEST(Litv2Parity, PthWithMetadataConfig) {
  expect_parity(".pth", metadata_config(), "pth + metadata");
}

TEST(Litv2Parity, TheTrainedOffsetsMatterSoAPlainConvWouldFail) {
  // Guards the parity tests against passing vacuously: with conv_offset zeroed (a plain
  // strided conv) the first DTM output leaves the tolerance by orders of magnitude.
  auto model = models::make_backbone(mini_config());
  models::load_checkpoint(*model, fixture(".safetensors"));
  model->eval();
  at::NoGradGuard no_grad;
  model->named_parameters()["layers.0.downsample.dconv.conv_offset.weight"].zero_();
  model->named_parameters()["layers.0.downsample.dconv.conv_offset.bias"].zero_();
  const auto expected = nn::read_tensor_map(fixture(".expected.safetensors"));
  models::ForwardOptions options;
  options.record_outputs = true;
  const auto r = model->run(expected.at("input"), options);
  const double rel =
      relative(r.outputs.at("out.layers.0.downsample"), expected.at("out.layers.0.downsample"));
  std::cout << "[litv2] zero offsets: out.layers.0.downsample |delta|/|ref| = " << rel << "\n";
  EXPECT_GT(rel, 1e-2);
}

TEST(Litv2Manifest, OfficialConfigsHaveExactlyTheManifestKeysShapesAndParameterCount) {
  for (const auto& name : models::litv2_official_names()) {
    std::ifstream in(shared_dir() + "/fixtures/manifests/" + name + ".json");
    ASSERT_TRUE(in) << name;
    const Json manifest = Json::parse(in);
    std::vector<std::pair<std::string, std::vector<int64_t>>> want;
    for (const auto& t : manifest.at("tensors")) {
      const auto key = t.at(0).get<std::string>();
      if (key.size() >= 19 && key.compare(key.size() - 19, 19, "num_batches_tracked") == 0)
        continue;
      want.emplace_back(key, t.at(1).get<std::vector<int64_t>>());
    }
    auto model = models::make_backbone(models::litv2_official_config(name));
    // PyTorch's state_dict order: each module's own parameters, then its own buffers, then
    // its children in registration order (named_modules() is that pre-order).
    std::vector<std::pair<std::string, std::vector<int64_t>>> have;
    int64_t params = 0, buffers = 0;
    for (const auto& m : model->named_modules()) {
      const std::string prefix = m.key().empty() ? "" : m.key() + ".";
      for (const auto& p : m.value()->named_parameters(false)) {
        have.emplace_back(prefix + p.key(), p.value().sizes().vec());
        params += p.value().numel();
      }
      for (const auto& b : m.value()->named_buffers(false)) {
        have.emplace_back(prefix + b.key(), b.value().sizes().vec());
        buffers += b.value().numel();
      }
    }
    using ShapeMap = std::map<std::string, std::vector<int64_t>>;
    EXPECT_EQ(ShapeMap(have.begin(), have.end()), ShapeMap(want.begin(), want.end())) << name;
    EXPECT_EQ(have, want) << name << ": same keys, but not in the reference order";
    // The manifest's num_params counts parameters only: BatchNorm running statistics (and
    // num_batches_tracked) are buffers.
    std::cout << "[litv2] " << name << ": " << have.size() << " tensors, parameters " << params
              << " (manifest " << manifest.at("num_params").get<int64_t>() << "), buffers "
              << buffers << "\n";
    EXPECT_EQ(params, manifest.at("num_params").get<int64_t>()) << name;
  }
  EXPECT_THROW(models::litv2_official_config("litv2_xl"), models::ModelError);
}

TEST(Litv2Registry, ArchIsRegistered) {
  const auto archs = models::known_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), "litv2"), archs.end());
}

}  // namespace
}  // namespace attnlab::testing
