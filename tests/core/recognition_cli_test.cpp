// Bring your own checkpoint (issue 22, acceptance): a checkpoint built from each manifest
// in ../shared/fixtures/manifests (and the distilled DeiTs' in tests/data/manifests) with
// random weights, saved as a DeiT-release .pth ({'model': state_dict}, BatchNorm counters
// included) and as a safetensors file with no metadata, is recognised as its preset by
// `attnlab classify` with no model flags; `report --models` runs on a mix of them; a
// checkpoint nothing matches is one clear message, exit 1, nothing written.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/attention/rope.h"
#include "core/attention/swin.h"
#include "core/io/safetensors.h"
#include "core/io/tensor_file.h"
#include "core/io/torch_bridge.h"
#include "models/presets.h"
#include "tests/support/archive_builder.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<fs::path> manifest_files() {
  std::vector<fs::path> all;
  for (const std::string& dir : {shared_dir() + "/fixtures/manifests",
                                 std::string(ATTNLAB_SOURCE_DIR) + "/tests/data/manifests"})
    for (const auto& e : fs::directory_iterator(dir)) all.push_back(e.path());
  std::sort(all.begin(), all.end());
  return all;
}

// Random weights with the manifest's keys, shapes and dtypes, in its order.
std::vector<ShapedTensor> random_checkpoint(const json& manifest) {
  std::vector<ShapedTensor> out;
  for (const auto& t : manifest["tensors"]) {
    ShapedTensor s;
    s.name = t[0].get<std::string>();
    s.shape = t[1].get<std::vector<int>>();
    s.int64 = t[2].get<std::string>() == "int64";
    std::vector<int64_t> shape(s.shape.begin(), s.shape.end());
    // BatchNorm variances are positive in any trained checkpoint (a negative one is NaN).
    const bool variance = s.name.size() > 11 && s.name.rfind("running_var") == s.name.size() - 11;
    // RAVLT's RoPE.angle is a fixed table (checked at load), length head_dim / 2.
    const bool angles = s.name.find("RoPE.angle") != std::string::npos;
    // Swin's attn_mask is the fixed shifted-window mask (checked at load): (nW, w², w²) of a
    // square grid, shift w / 2.
    const bool mask = s.name.find("attn_mask") != std::string::npos;
    const auto side = [](int64_t square) { return std::llround(std::sqrt(double(square))); };
    const at::Tensor v =
        s.int64    ? at::zeros(shape, at::kLong)
        : variance ? 1 + at::rand(shape)
        : angles   ? attention::rope_angle(2 * shape[0])
        : mask     ? attention::swin_shift_mask(side(shape[0]) * side(shape[1]),
                                                side(shape[0]) * side(shape[1]), side(shape[1]),
                                                side(shape[1]) / 2, at::kFloat)
                   : at::randn(shape) * 0.02;
    const auto* p = static_cast<const uint8_t*>(v.data_ptr());
    s.bytes.assign(p, p + v.nbytes());
    out.push_back(std::move(s));
  }
  return out;
}

void write_pth(const fs::path& path, const std::vector<ShapedTensor>& tensors) {
  const Bytes b = make_shaped_pth(tensors);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}

void write_bare_safetensors(const fs::path& path, const std::vector<ShapedTensor>& tensors) {
  io::TensorDict dict;
  for (const auto& t : tensors) {
    io::RawTensor r;
    r.dtype = t.int64 ? io::DType::I64 : io::DType::F32;
    r.shape.assign(t.shape.begin(), t.shape.end());
    r.bytes = t.bytes;
    dict.add(t.name, std::move(r));
  }
  io::write_safetensors(path.string(), dict, {});
}

const std::string kPhoto = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";

// The released layouts of DINO, DINOv2 and CLIP (a folder of their own, issue 47).
std::vector<fs::path> embedding_manifest_files() {
  std::vector<fs::path> all;
  for (const auto& e : fs::directory_iterator(shared_dir() + "/fixtures/manifests_dino_clip"))
    all.push_back(e.path());
  std::sort(all.begin(), all.end());
  return all;
}

json read_manifest(const std::string& name) {
  for (const auto& m : manifest_files())
    if (m.stem() == name) return json::parse(std::ifstream(m));
  for (const auto& m : embedding_manifest_files())
    if (m.stem() == name) return json::parse(std::ifstream(m));
  ADD_FAILURE() << "no manifest " << name;
  return json::object();
}

std::vector<std::string> manifest_names() {
  std::vector<std::string> names;
  for (const auto& m : manifest_files()) names.push_back(m.stem().string());
  return names;
}

// One test per manifest (a failure names it): both containers.
class EveryManifest : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryManifest, IsRecognisedByClassifyWithNoFlagsAsPthAndBareSafetensors) {
  const std::string name = GetParam();
  const TempDir dir("attnlab_byo_" + name);
  at::manual_seed(0);
  const auto tensors = random_checkpoint(read_manifest(name));
  // A manifest of a family with no preset yet is named and refused; once its preset exists
  // the same test requires it to be recognised (every shared manifest has one now).
  const bool has_preset = models::preset_named(name) != nullptr;
  for (const std::string ext : {".pth", ".safetensors"}) {
    SCOPED_TRACE(ext);
    const fs::path file = dir.path / (name + ext);
    if (ext == ".pth")
      write_pth(file, tensors);
    else
      write_bare_safetensors(file, tensors);
    const CliRun r = run_cli("classify --model " + file.string() + " " + kPhoto);
    if (!has_preset) {
      ASSERT_EQ(name.rfind("swin", 0), 0u) << "only Swin lacks a preset";
      EXPECT_EQ(r.code, 1) << r.out;
      EXPECT_NE(r.out.find("its keys look like a swin checkpoint"), std::string::npos) << r.out;
    } else {
      EXPECT_EQ(r.code, 0) << r.out;
      EXPECT_NE(r.out.find(file.string() + ": recognised as " + name + "\n"), std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("%"), std::string::npos) << "no top-5 printed: " << r.out;
    }
    fs::remove(file);
  }
}

INSTANTIATE_TEST_SUITE_P(BringYourOwnCheckpoint, EveryManifest,
                         ::testing::ValuesIn(manifest_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// DINO, DINOv2 and CLIP as released (DINO's and DINOv2's a bare state dict, CLIP's whole
// model with its text tower), random weights, no flags: `analyze` recognises each as its
// preset (CLIP's as its image tower, and says so) and runs an analysis; `classify` refuses
// the embedding they output by name, exit 1 — checked on the small DINO and DINOv2 (the
// refusal is the arch's, not the size's; CLIP's is tests/models/clip_test.cpp's).
class EveryEmbeddingManifest : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryEmbeddingManifest, IsRecognisedWithNoFlagsAndClassifyRefusesItsEmbedding) {
  const std::string name = GetParam();
  const TempDir dir("attnlab_byo_" + name);
  at::manual_seed(0);
  const bool clip = name.rfind("clip", 0) == 0;
  const fs::path file = dir.path / (name + ".pth");
  const Bytes b = make_shaped_pth(random_checkpoint(read_manifest(name)), "archive", {}, "");
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  const fs::path out = dir.path / "out";
  const CliRun r = run_cli("analyze --model " + file.string() + " --images " + kPhoto +
                           " --analyses entropy --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(file.string() + ": recognised as " + name), std::string::npos) << r.out;
  if (clip) {
    EXPECT_NE(r.out.find("a whole CLIP model: both towers (visual.* the image tower"),
              std::string::npos)
        << r.out;
  }
  if (name != "dino_vits16" && name != "dinov2_vits14") return;
  const CliRun c = run_cli("classify --model " + file.string() + " " + kPhoto);
  EXPECT_EQ(c.code, 1) << c.out;
  EXPECT_NE(c.out.find("classify needs class scores, but "), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("'s output is an embedding"), std::string::npos) << c.out;
}

std::vector<std::string> embedding_manifest_names() {
  std::vector<std::string> names;
  for (const auto& m : embedding_manifest_files()) names.push_back(m.stem().string());
  return names;
}

INSTANTIATE_TEST_SUITE_P(BringYourOwnCheckpoint, EveryEmbeddingManifest,
                         ::testing::ValuesIn(embedding_manifest_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(BringYourOwnCheckpoint, ThereAreEighteenManifests) {
  EXPECT_EQ(manifest_names().size(), 18u);           // 15 shared + 3 distilled DeiTs
  EXPECT_EQ(embedding_manifest_names().size(), 7u);  // DINO ×3, DINOv2 ×3, CLIP
}

// `report --models` on a mix: a release-style .pth and a bare safetensors of two families.
TEST(BringYourOwnCheckpoint, ReportRunsOnAMixOfRecognisedCheckpoints) {
  const TempDir dir("attnlab_byo_report");
  at::manual_seed(0);
  const fs::path deit = dir.path / "deit_tiny_patch16_224.pth";
  const fs::path ravlt = dir.path / "ravlt_t.safetensors";
  write_pth(deit, random_checkpoint(read_manifest("deit_tiny_patch16_224")));
  write_bare_safetensors(ravlt, random_checkpoint(read_manifest("ravlt_t")));
  const fs::path out = dir.path / "report";
  const CliRun r =
      run_cli("report --models " + deit.string() + " " + ravlt.string() + " --images " + kPhoto +
              " --analyses maps,rollout --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out / "index.html")) << r.out;
  EXPECT_NE(r.out.find("recognised as deit_tiny_patch16_224"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recognised as ravlt_t"), std::string::npos) << r.out;
}

TEST(BringYourOwnCheckpoint, AnUnknownCheckpointIsOneMessageAndNothingIsWritten) {
  const TempDir dir("attnlab_byo_unknown");
  std::vector<ShapedTensor> odd = {{"encoder.weight", {4, 4}, false, Bytes(64, 0)}};
  const fs::path file = dir.path / "odd.pth";
  write_pth(file, odd);
  const fs::path csv = dir.path / "preds.csv";
  const CliRun r = run_cli("classify --model " + file.string() + " --images " + kPhoto + " --out " +
                           csv.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("no preset has these weights' keys and shapes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Nearest presets:"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(csv));
}

// A transformers folder (config.json with id2label + model.safetensors), made from the
// deit_mini fixture: classify opens the folder and prints its names.
TEST(BringYourOwnCheckpoint, ATransformersFolderOpensWithItsClassNames) {
  const TempDir dir("attnlab_byo_hf");
  const fs::path folder = dir.path / "my-vit";
  fs::create_directories(folder);
  io::TensorFile f = io::read_tensor_file(parity_dir() + "/deit_mini.safetensors");
  io::TensorDict hf;
  for (const auto& e : f.tensors) {
    const std::string& n = e.name;
    std::string to;
    if (n == "cls_token")
      to = "vit.embeddings.cls_token";
    else if (n == "pos_embed")
      to = "vit.embeddings.position_embeddings";
    else if (n.rfind("patch_embed.proj.", 0) == 0)
      to = "vit.embeddings.patch_embeddings.projection." + n.substr(17);
    else if (n.rfind("norm.", 0) == 0)
      to = "vit.layernorm." + n.substr(5);
    else if (n.rfind("head.", 0) == 0)
      to = "classifier." + n.substr(5);
    if (!to.empty()) {
      hf.add(to, e.tensor);
      continue;
    }
    // blocks.i.<rest>
    const size_t dot = n.find('.', 7);
    const std::string layer = "vit.encoder.layer." + n.substr(7, dot - 7) + ".";
    const std::string rest = n.substr(dot + 1);
    const std::map<std::string, std::string> renames = {{"norm1.", "layernorm_before."},
                                                        {"norm2.", "layernorm_after."},
                                                        {"attn.proj.", "attention.output.dense."},
                                                        {"mlp.fc1.", "intermediate.dense."},
                                                        {"mlp.fc2.", "output.dense."}};
    if (rest.rfind("attn.qkv.", 0) == 0) {  // split in three along the rows
      const at::Tensor t = io::to_torch(e.tensor);
      const auto parts = t.chunk(3, 0);
      const char* names[3] = {"query.", "key.", "value."};
      for (int i = 0; i < 3; ++i)
        hf.add(layer + "attention.attention." + names[i] + rest.substr(9),
               io::from_torch(parts[i].contiguous()));
      continue;
    }
    for (const auto& [from, t] : renames)
      if (rest.rfind(from, 0) == 0) hf.add(layer + t + rest.substr(from.size()), e.tensor);
  }
  io::write_safetensors((folder / "model.safetensors").string(), hf, {});
  json labels = json::object();
  for (int i = 0; i < 10; ++i) labels[std::to_string(i)] = "label-" + std::to_string(i);
  std::ofstream(folder / "config.json")
      << json{{"model_type", "vit"},      {"hidden_size", 64},        {"num_hidden_layers", 2},
              {"num_attention_heads", 2}, {"intermediate_size", 256}, {"image_size", 224},
              {"patch_size", 16},         {"layer_norm_eps", 1e-6},   {"id2label", labels}}
             .dump();
  const CliRun r = run_cli("classify --model " + folder.string() + " " + kPhoto);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(transformers config)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("label-"), std::string::npos) << r.out;
}

// A size the model cannot take: one message naming the constraint, exit 1, nothing written.
TEST(BringYourOwnCheckpoint, AWrongImgSizeIsOneMessageAndNothingIsWritten) {
  const TempDir dir("attnlab_byo_size");
  const std::string model = parity_dir() + "/deit_mini.safetensors";
  const fs::path out = dir.path / "analysis";
  CliRun r = run_cli("analyze --model " + model + " --img-size 60 --images " + kPhoto + " --out " +
                     out.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--img-size 60x60: a vit with patch_size 16 needs sizes that are "
                       "multiples of 16"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(out));
  r = run_cli("classify --model " + model + " --img-size 224,0 " + kPhoto);
  EXPECT_EQ(r.code, 2) << r.out;  // not a size at all: a usage error
  EXPECT_NE(r.out.find("--img-size takes H or H,W"), std::string::npos) << r.out;
}

// NaN weights: said when the model loads, and classify refuses the non-finite logits
// (exit 1, no "nan%" table).
TEST(BringYourOwnCheckpoint, NaNWeightsAreSaidAndTheirLogitsRefused) {
  const TempDir dir("attnlab_byo_nan");
  io::TensorFile f = io::read_tensor_file(parity_dir() + "/deit_mini.safetensors");
  io::TensorDict poisoned;
  for (const auto& e : f.tensors) {
    io::RawTensor t = e.tensor;
    if (e.name == "blocks.1.mlp.fc1.weight") {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(t.bytes.data(), &nan, sizeof nan);
    }
    poisoned.add(e.name, std::move(t));
  }
  const fs::path file = dir.path / "poisoned.safetensors";
  io::write_safetensors(file.string(), poisoned, f.metadata);
  const CliRun r = run_cli("classify --model " + file.string() + " " + kPhoto);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("warning: poisoned: 1 weight tensor(s) hold NaN or Inf (first: "
                       "blocks.1.mlp.fc1.weight)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the model's logits are not finite"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("nan%"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attnlab::testing
