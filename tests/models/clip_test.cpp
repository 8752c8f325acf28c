// CLIP's image tower (models/clip.cpp, arch "clip_visual_vit"): parity with the reference
// fixture clip_visual_mini (every recorded tensor, the per-head probabilities of the last
// block, the projected embedding), config from .config.json and from the metadata; the
// released ViT-B/16 layout (manifests_dino_clip/clip_vit_b16.json) built exactly by the
// presets (the tower alone, and the whole model); a whole release opens as both towers
// (models/clip_full.h) and a tower config takes its image tower; CLIP's preprocessing.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/io/tensor_file.h"
#include "core/nn/initial_values.h"
#include "core/nn/state_loading.h"
#include "models/checkpoint_loading.h"
#include "models/clip_layout.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/archive_builder.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"
#include "tests/support/parity_outputs.h"
#include "tests/support/temp_path.h"
#include "tests/support/torch_shaped.h"

namespace attnlab::testing {
namespace {

using models::Json;

void check_clip_parity(bool from_metadata) {
  const std::string base = parity_dir() + "/clip_visual_mini";
  const Json config =
      from_metadata
          ? models::config_from_metadata(io::read_tensor_file(base + ".safetensors").metadata)
          : models::config_from_file(base + ".config.json");
  auto model = models::make_backbone(config);
  model->eval();
  models::load_checkpoint(*model, base + ".safetensors");
  const auto expected = nn::read_tensor_map(base + ".expected.safetensors");
  models::ForwardOptions options;
  options.record_outputs = true;
  const auto result = model->run(expected.at("input"), options);
  const std::string tag = from_metadata ? "clip_visual_mini (metadata)" : "clip_visual_mini";
  const int compared = expect_recorded_outputs_match(result, expected, tag);
  EXPECT_EQ(compared, 7) << tag;
}

TEST(ClipParity, ClipVisualMini) {
  check_clip_parity(false);
  check_clip_parity(true);
}

// The released layout: its visual.* keys, key for key in the reference order, are the
// tower preset's; all 302 keys, as the loader renames them (models/clip_layout.h), are
// the whole-model preset's.
TEST(ClipPresets, BuildTheReleasedLayoutExactly) {
  std::ifstream in(shared_dir() + "/fixtures/manifests_dino_clip/clip_vit_b16.json");
  ASSERT_TRUE(in.good());
  const Json m = Json::parse(in);
  std::vector<std::pair<std::string, std::vector<int64_t>>> want, got;
  nn::TensorMap release;
  for (const auto& t : m.at("tensors")) {
    const std::string key = t[0].get<std::string>();
    const auto shape = t[1].get<std::vector<int64_t>>();
    if (key.rfind("visual.", 0) == 0) want.push_back({key.substr(7), shape});
    release[key] = at::empty(shape, at::TensorOptions().device(at::kMeta));
  }
  const nn::WeightsToBeLoaded shapes_only;
  auto tower = models::make_backbone(models::find_preset("clip_vit_b16_visual").config);
  for (const auto& p : tower->named_parameters()) got.push_back({p.key(), p.value().sizes().vec()});
  EXPECT_EQ(got, want);

  std::map<std::string, std::vector<int64_t>> whole_want, whole_got;
  for (const auto& [key, t] : models::clip_release_tensors(std::move(release)).tensors)
    whole_want[key] = t.sizes().vec();
  auto whole = models::make_backbone(models::find_preset("clip_vit_b16").config);
  for (const auto& p : whole->named_parameters()) whole_got[p.key()] = p.value().sizes().vec();
  EXPECT_EQ(whole_got.size(), 302u);
  EXPECT_EQ(whole_got, whole_want);
}

// A whole model: the tower under its own names, the text tower under text.*, logit_scale.
TEST(ClipLayout, AWholeModelOpensAsBothTowers) {
  nn::TensorMap whole = {{"visual.conv1.weight", at::zeros({4, 3, 2, 2})},
                         {"visual.class_embedding", at::zeros({4})},
                         {"transformer.resblocks.0.ln_1.weight", at::zeros({8})},
                         {"logit_scale", at::zeros({})}};
  ASSERT_TRUE(models::is_clip_release_layout(whole));
  const models::ClipRelease r = models::clip_release_tensors(std::move(whole));
  EXPECT_EQ(r.tensors.size(), 4u);
  EXPECT_TRUE(r.tensors.count("conv1.weight"));
  EXPECT_TRUE(r.tensors.count("class_embedding"));
  EXPECT_TRUE(r.tensors.count("text.transformer.resblocks.0.ln_1.weight"));
  EXPECT_TRUE(r.tensors.count("logit_scale"));
  EXPECT_EQ(r.text_tensors, 1u);
  EXPECT_NE(r.note().find("both towers"), std::string::npos);
  EXPECT_FALSE(models::is_clip_release_layout({{"conv1.weight", at::zeros({1})}}));
}

// OpenAI's release: a TorchScript archive of the whole CLIP, read as data (the archive's
// code never runs). Its tensors come back renamed (both towers), the note says so, and a
// clip_visual_vit model takes the image tower alone from it.
TEST(ClipLayout, ATorchScriptReleaseOpensAsBothTowers) {
  const nn::TensorMap tower = nn::read_tensor_map(parity_dir() + "/clip_visual_mini.safetensors");
  std::vector<ShapedTensor> whole;
  const auto add = [&](const std::string& name, const at::Tensor& t) {
    whole.push_back(shaped_float(name, t));
  };
  for (const auto& [name, t] : tower) add("visual." + name, t);
  add("token_embedding.weight", at::randn({10, 8}));
  add("logit_scale", at::full({}, 4.6f));
  const TempDir dir("clip_torchscript");
  const std::string file = dir.file("ViT-mini.pt");
  const Bytes b = make_torchscript(whole, dir.file("code_ran"));
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());

  const models::CheckpointWeights w = models::read_checkpoint_weights(file, "");
  EXPECT_EQ(w.layout, "clip");
  ASSERT_EQ(w.tensors.size(), tower.size() + 2);
  for (const auto& [name, t] : tower) {
    ASSERT_TRUE(w.tensors.count(name)) << name;
    EXPECT_TRUE(at::equal(w.tensors.at(name), t)) << name;  // the same bytes, renamed
  }
  EXPECT_TRUE(w.tensors.count("text.token_embedding.weight"));
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_NE(w.notes[0].find("both towers"), std::string::npos) << w.notes[0];
  const Json tower_config =
      models::config_from_file(parity_dir() + "/clip_visual_mini.config.json");
  auto model = models::make_backbone(tower_config);
  EXPECT_NO_THROW(models::load_checkpoint(*model, file));
  const models::LoadedModel loaded = models::load_model(tower_config, file);
  ASSERT_EQ(loaded.weights_info.notes.size(), 2u);
  EXPECT_NE(loaded.weights_info.notes[1].find("the image tower alone"), std::string::npos)
      << loaded.weights_info.notes[1];
  EXPECT_FALSE(std::filesystem::exists(dir.file("code_ran")));
}

// The tower's output is the projected image embedding, not classes: class-specific work
// refuses it by name.
TEST(ClipOutput, IsAnEmbeddingThatClassSpecificWorkRefuses) {
  const nn::WeightsToBeLoaded shapes_only;  // no forward here: no random values needed
  auto model = models::make_backbone(models::find_preset("clip_vit_b16").config);
  EXPECT_EQ(model->output_kind(), models::OutputKind::embedding);
  try {
    models::require_classes(*model, "classify");
    ADD_FAILURE() << "classify accepted an embedding";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "classify needs class scores, but clip_full's output is an embedding"),
              std::string::npos)
        << e.what();
  }
}

// clip/clip.py _transform: resize the short side to the resolution (bicubic), centre crop,
// CLIP's own mean and std.
TEST(ClipPresets, PreprocessAsClipDoes) {
  const auto& p = models::find_preset("clip_vit_b16").preprocessing;
  EXPECT_EQ(p.resize_short, 224);
  EXPECT_EQ(p.crop, 224);
  EXPECT_EQ(p.filter, image::Filter::Bicubic);
  EXPECT_FLOAT_EQ(p.mean[0], 0.48145466f);
  EXPECT_FLOAT_EQ(p.std[2], 0.27577711f);
}

TEST(ClipConfig, RefusesSizesThatDoNotFit) {
  EXPECT_THROW(models::make_backbone({{"arch", "clip_visual_vit"},
                                      {"input_resolution", 30},
                                      {"patch_size", 8},
                                      {"width", 48},
                                      {"layers", 1},
                                      {"heads", 3},
                                      {"output_dim", 4}}),
               models::ModelError);
  EXPECT_THROW(models::make_backbone({{"arch", "clip_visual_vit"},
                                      {"width", 48},
                                      {"layers", 1},
                                      {"heads", 5},
                                      {"output_dim", 4}}),
               models::ModelError);
}

}  // namespace
}  // namespace attnlab::testing
