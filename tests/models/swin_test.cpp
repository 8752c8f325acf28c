// Swin: parity with the reference on swin_mini (weights from .safetensors and .pth, config
// from .config.json and the safetensors metadata; logits ≤ 1e-4, stage outputs ≤ 1e-4
// relative, the shifted block's probabilities ≤ 1e-5), the shifted block alone (swin_block),
// the window clamp and shift rules per stage, a check that the parity test can fail, the
// attn_mask check, the official layouts (manifests, in the reference order), recognition of
// checkpoints of other sizes, refusals, and the single WindowAttention arch with
// rectangular windows.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>

#include "core/io/tensor_file.h"
#include "models/attention_module.h"
#include "models/checkpoint_loading.h"
#include "models/checkpoint_recognition.h"
#include "models/model_registry.h"
#include "models/swin.h"
#include "models/swin_blocks.h"
#include "tests/attention/swin_reference.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

using models::Json;

std::string swin_fixture(const std::string& suffix) {
  return parity_dir() + "/swin_mini" + suffix;
}

double swin_relative(const at::Tensor& a, const at::Tensor& ref) {
  return (a.to(at::kDouble) - ref.to(at::kDouble)).norm().item<double>() /
         ref.to(at::kDouble).norm().item<double>();
}

models::ForwardResult run_mini(const std::string& weights, const Json& config,
                               std::shared_ptr<models::Backbone>* keep = nullptr) {
  auto model = models::make_backbone(config);
  EXPECT_EQ(model->arch(), "swin");
  models::load_checkpoint(*model, swin_fixture(weights));
  model->eval();
  if (keep) *keep = model;
  models::ForwardOptions options;
  options.record_outputs = true;
  options.trace_attention = true;
  at::NoGradGuard no_grad;
  return model->run(nn::read_tensor_map(swin_fixture(".expected.safetensors")).at("input"),
                    options);
}

void swin_expect_parity(const std::string& weights, const Json& config, const std::string& label) {
  const auto r = run_mini(weights, config);
  const auto expected = nn::read_tensor_map(swin_fixture(".expected.safetensors"));
  const double logits = max_abs_diff(r.logits, expected.at("logits"));
  std::cout << "[swin] " << label << ": logits max |delta| = " << logits << "\n";
  EXPECT_LE(logits, 1e-4) << label;
  int compared = 0;
  for (const auto& [name, ref] : expected) {
    if (name == "input" || name == "logits") continue;
    auto it = r.outputs.find(name);
    ASSERT_NE(it, r.outputs.end()) << label << ": the model does not record " << name;
    ASSERT_EQ(it->second.sizes(), ref.sizes()) << label << ": " << name;
    if (name.rfind("attn.", 0) == 0) {  // probabilities: the single-layer tolerance
      const double d = max_abs_diff(it->second, ref);
      std::cout << "[swin] " << label << ": " << name << " max |delta| = " << d << "\n";
      EXPECT_LE(d, 1e-5) << label << ": " << name;
    } else {
      const double rel = swin_relative(it->second, ref);
      std::cout << "[swin] " << label << ": " << name << " |delta|/|ref| = " << rel << "\n";
      EXPECT_LE(rel, 1e-4) << label << ": " << name;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 5) << "the fixture names 5 intermediate tensors";
  // Stage 1: 8×8, window 4, blocks unshifted / shifted by 2; stage 2: 4×4 fits one window,
  // so both of its blocks are unshifted (the clamp).
  ASSERT_EQ(r.traces.size(), 4u);
  const int64_t shifts[] = {0, 2, 0, 0};
  for (size_t i = 0; i < 4; ++i) {
    const auto& t = *r.traces[i].trace;
    EXPECT_EQ(r.traces[i].path,
              "layers." + std::to_string(i / 2) + ".blocks." + std::to_string(i % 2) + ".attn");
    EXPECT_EQ(t.layout.stage, static_cast<int>(i / 2));
    EXPECT_EQ(t.layout.height, i < 2 ? 8 : 4);
    EXPECT_EQ(t.window, 4);
    EXPECT_EQ(t.window_shift, shifts[i]) << r.traces[i].path;
  }
}

Json metadata_config() {
  return models::config_from_metadata(io::read_tensor_file(swin_fixture(".safetensors")).metadata);
}

TEST(SwinParity, SafetensorsWithConfigFile) {
  swin_expect_parity(".safetensors", models::config_from_file(swin_fixture(".config.json")),
                     "safetensors + config.json");
}

TEST(SwinParity, SafetensorsWithMetadataConfig) {
  swin_expect_parity(".safetensors", metadata_config(), "safetensors + metadata");
}

TEST(SwinParity, PthWithConfigFile) {
  swin_expect_parity(".pth", models::config_from_file(swin_fixture(".config.json")),
                     "pth + config.json");
}

TEST(SwinParity, TheRelativeBiasMattersSoTheParityTestCanFail) {
  // With the shifted block's bias table zeroed its probabilities leave the tolerance by
  // orders of magnitude: the comparison above is not vacuous.
  std::shared_ptr<models::Backbone> model;
  run_mini(".safetensors", models::config_from_file(swin_fixture(".config.json")), &model);
  at::NoGradGuard no_grad;
  model->named_parameters()["layers.0.blocks.1.attn.relative_position_bias_table"].zero_();
  models::ForwardOptions options;
  options.record_outputs = true;
  const auto expected = nn::read_tensor_map(swin_fixture(".expected.safetensors"));
  const auto r = model->run(expected.at("input"), options);
  EXPECT_GT(
      max_abs_diff(r.outputs.at("attn.layers.0.blocks.1"), expected.at("attn.layers.0.blocks.1")),
      1e-2);
}

// The shifted block alone (8×12, window 4, shift 2): output, the attention module's output
// (window_reverse + roll back of the reference's), the probabilities; its attn_mask loads
// strictly.
TEST(SwinBlock, ReproducesTheReferenceShiftedBlock) {
  models::swin::BlockShape s;
  s.dim = 32;
  s.heads = 2;
  s.hidden = 128;
  s.height = 8;
  s.width = 12;
  s.window = 4;
  s.shift = 2;
  auto block = std::make_shared<models::swin::Block>(s);
  nn::load_state(*block, nn::read_tensor_map(parity_dir() + "/swin_block.safetensors"));
  block->eval();
  const auto expected = nn::read_tensor_map(parity_dir() + "/swin_block.expected.safetensors");
  models::ForwardOptions options;
  options.record_outputs = true;
  models::ForwardResult result;
  models::ForwardRecorder recorder(options, result);
  at::NoGradGuard no_grad;
  const at::Tensor y =
      block->forward(expected.at("input"), attention::grid_layout(8, 12), "b", recorder);
  EXPECT_LE(max_abs_diff(y, expected.at("out")), 1e-5);
  // The reference module's output is windowed on the rolled grid; ours is in image positions.
  const at::Tensor windows = expected.at("out.attn").reshape({1, 2, 3, 4, 4, 32});
  const at::Tensor tokens =
      at::roll(windows.permute({0, 1, 3, 2, 4, 5}).reshape({1, 8, 12, 32}), {2, 2}, {1, 2});
  EXPECT_LE(max_abs_diff(result.outputs.at("out.b.attn"), tokens.reshape({1, 96, 32})), 1e-5);
  EXPECT_LE(max_abs_diff(result.outputs.at("attn.b"), expected.at("attn")), 1e-5);
}

TEST(SwinBlock, ALoadedMaskOtherThanTheShiftedWindowsIsRefused) {
  auto model = models::make_backbone(models::config_from_file(swin_fixture(".config.json")));
  models::load_checkpoint(*model, swin_fixture(".safetensors"));
  model->eval();
  at::NoGradGuard no_grad;
  model->named_buffers()["layers.0.blocks.1.attn_mask"].zero_();
  try {
    model->run(at::randn({1, 3, 32, 32}));
    FAIL() << "a zeroed attn_mask was accepted";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("layers.0.blocks.1.attn_mask"), std::string::npos)
        << e.what();
  }
}

TEST(SwinManifest, OfficialConfigsHaveExactlyTheManifestKeysShapesDtypesAndOrder) {
  for (const auto& name : models::swin_official_names()) {
    std::ifstream in(shared_dir() + "/fixtures/manifests/" + name + ".json");
    ASSERT_TRUE(in) << name;
    const Json manifest = Json::parse(in);
    std::vector<std::tuple<std::string, std::vector<int64_t>, std::string>> want, have;
    for (const auto& t : manifest.at("tensors"))
      want.emplace_back(t.at(0).get<std::string>(), t.at(1).get<std::vector<int64_t>>(),
                        t.at(2).get<std::string>());
    auto model = models::make_backbone(models::swin_official_config(name));
    int64_t params = 0;
    auto dtype = [](const at::Tensor& t) {
      return t.scalar_type() == at::kLong ? std::string("int64") : std::string("float32");
    };
    // PyTorch's state_dict order: each module's own parameters, then its own buffers, then
    // its children in registration order (named_modules() is that pre-order).
    for (const auto& m : model->named_modules()) {
      const std::string prefix = m.key().empty() ? "" : m.key() + ".";
      for (const auto& p : m.value()->named_parameters(false)) {
        have.emplace_back(prefix + p.key(), p.value().sizes().vec(), dtype(p.value()));
        params += p.value().numel();
      }
      for (const auto& b : m.value()->named_buffers(false))
        have.emplace_back(prefix + b.key(), b.value().sizes().vec(), dtype(b.value()));
    }
    EXPECT_EQ(have, want) << name;
    EXPECT_EQ(params, manifest.at("num_params").get<int64_t>()) << name;
  }
  EXPECT_THROW(models::swin_official_config("swin_large_patch4_window12_384"), models::ModelError);
}

// A Swin checkpoint with no config: the official sizes are their presets; other sizes get
// their config from the shapes (widths, depths, heads from the bias tables, window from their
// rows, the image size from a shifted block's attn_mask) and build the checkpoint exactly.
TEST(SwinRecognition, OtherSizesGetTheirConfigFromTheShapes) {
  const Json mini = models::config_from_file(swin_fixture(".config.json"));
  const auto shapes = models::shapes_of(nn::read_tensor_map(swin_fixture(".safetensors")));
  const models::Recognition r = models::recognise_weights(shapes, "swin", "mini.pth");
  EXPECT_FALSE(r.exact);
  for (const char* key :
       {"embed_dim", "depths", "num_heads", "window_size", "img_size", "num_classes", "patch_size"})
    EXPECT_EQ(r.config[key], mini[key]) << key << ": " << r.summary();
  EXPECT_TRUE(r.assumed.empty()) << r.summary();
  EXPECT_EQ(models::config_shapes(r.config), shapes);

  Json wide = models::swin_official_config("swin_small_patch4_window7_224");
  wide["num_classes"] = 100;
  wide["depths"] = {2, 2, 4, 2};
  const auto wide_shapes = models::config_shapes(wide);
  const models::Recognition w = models::recognise_weights(wide_shapes, "swin", "w.pth");
  EXPECT_FALSE(w.exact);
  EXPECT_EQ(w.config["depths"], wide["depths"]);
  EXPECT_EQ(w.config["num_classes"], 100);
  EXPECT_EQ(w.config["img_size"], 224);
  EXPECT_EQ(models::config_shapes(w.config), wide_shapes);
  const models::Recognition t = models::recognise_weights(
      models::config_shapes(models::swin_official_config("swin_base_patch4_window7_224")), "swin",
      "b.pth");
  EXPECT_TRUE(t.exact);
  EXPECT_EQ(t.preset, "swin_base_patch4_window7_224");
}

TEST(SwinConfig, RefusesWhatTheReferenceCannotBuildOrRun) {
  Json c = models::config_from_file(swin_fixture(".config.json"));
  auto model = models::make_backbone(c);
  EXPECT_THROW(model->run(at::randn({1, 3, 64, 64})), models::ModelError);  // not img_size
  Json odd = c;
  odd["img_size"] = 36;  // 9×9 patches: PatchMerging needs an even grid
  EXPECT_THROW(models::make_backbone(odd), models::ModelError);
  Json indivisible = c;
  indivisible["img_size"] = 48;  // 12×12 at stage 1 is no multiple of window 8
  indivisible["window_size"] = 8;
  EXPECT_THROW(models::make_backbone(indivisible), models::ModelError);
  Json heads = c;
  heads["num_heads"] = {5, 2};
  EXPECT_THROW(models::make_backbone(heads), models::ModelError);
  const auto archs = models::known_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), "swin"), archs.end());
}

// The reference WindowAttention as a module arch (swin_window_attention) with a rectangular
// window_size, fed (nW·B, Wh·Ww, C) windows: the same output as the reference's forward
// re-implemented in the test (tests/attention/swin_reference.h), to the float32 reordering
// bound (same operations, batched differently). A reference state dict is built by hand:
// the index with the reference's formula, random weights. 1×3 and 3×1 windows have the
// same state dict (index i − j + 2, a 5-row table): the config's pair decides.
TEST(SwinWindowAttentionModule, RectangularWindowSizeRunsAsTheReference) {
  for (const auto& [wh, ww] : {std::pair<int64_t, int64_t>{2, 3}, {3, 2}, {1, 3}, {3, 1}}) {
    SCOPED_TRACE(std::to_string(wh) + "x" + std::to_string(ww));
    at::manual_seed(21);
    const int64_t c = 16, heads = 2, n = wh * ww;
    nn::TensorMap w;
    w["qkv.weight"] = at::randn({3 * c, c}) * 0.25;
    w["qkv.bias"] = at::randn({3 * c}) * 0.1;
    w["proj.weight"] = at::randn({c, c}) * 0.25;
    w["proj.bias"] = at::randn({c}) * 0.1;
    w["relative_position_bias_table"] = at::randn({(2 * wh - 1) * (2 * ww - 1), heads}) * 0.5;
    w["relative_position_index"] = swin_reference::relative_position_index(wh, ww);
    const Json config = {{"arch", "swin_window_attention"},
                         {"dim", c},
                         {"num_heads", heads},
                         {"qkv_bias", true},
                         {"window_size", {wh, ww}}};
    const at::Tensor x = at::randn({6, n, c});  // e.g. 3 windows of 2 images
    const at::Tensor out = models::run_attention_module(config, w, x).at("out");
    const auto ref = swin_reference::attention(x, wh, ww, wh, ww, 0, heads, w["qkv.weight"],
                                               w["qkv.bias"], w["proj.weight"], w["proj.bias"],
                                               w["relative_position_bias_table"]);
    EXPECT_TRUE(agree_up_to_reordering(out, ref.out));
  }
}

}  // namespace
}  // namespace attnlab::testing
