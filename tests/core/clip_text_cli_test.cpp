// `attnlab infer` on a whole CLIP (issue 69, goal 1): the clip_full_mini fixture's `input` and
// `text_tokens` give every tensor of its expected file (config from the checkpoint's own
// metadata, no flags); an open_clip training checkpoint ({'state_dict': {'module.…'}}) of a
// whole CLIP is recognised with no flags and runs both towers; text tokens given to an
// image-only model are refused by name.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/io/npy.h"
#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "core/nn/state_loading.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "tests/support/torch_shaped.h"

namespace attnlab::testing {
namespace {

TEST(ClipInfer, WritesEveryTensorOfClipFullMini) {
  const std::string base = parity_dir() + "/clip_full_mini";
  const TempDir dir("clip_infer");
  const std::string out = dir.file("out.safetensors");
  const CliRun r = run_cli("--device cpu infer --checkpoint " + base + ".safetensors --input " +
                           base + ".expected.safetensors --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto expected = nn::read_tensor_map(base + ".expected.safetensors");
  const auto got = nn::read_tensor_map(out);
  for (const auto& [key, ref] : expected) {
    if (key == "input") continue;
    ASSERT_TRUE(got.count(key)) << "infer wrote no " << key;
    if (!ref.is_floating_point()) {
      EXPECT_TRUE(at::equal(got.at(key).to(at::kLong), ref.to(at::kLong))) << key;
      continue;
    }
    const at::Tensor diff = got.at(key).to(at::kDouble) - ref.to(at::kDouble);
    EXPECT_LE(diff.norm().item<double>(), 1e-4 * ref.to(at::kDouble).norm().item<double>()) << key;
  }
}

// A whole CLIP at release-like widths (multiples of 64, so recognition can assume the head
// counts as build_model does), saved as open_clip's training loop does.
TEST(ClipInfer, AnOpenClipCheckpointOpensAsBothTowersWithNoFlags) {
  at::manual_seed(0);
  const models::Json config = {{"arch", "clip_full"},     {"embed_dim", 32},
                               {"image_resolution", 32},  {"vision_layers", 1},
                               {"vision_width", 64},      {"vision_patch_size", 16},
                               {"context_length", 77},    {"vocab_size", 300},
                               {"transformer_width", 64}, {"transformer_layers", 2}};
  auto model = models::make_backbone(config);
  // Back to the release's names: the tower under visual., the text tower at the top level.
  std::vector<ShapedTensor> tensors;
  for (const auto& p : model->named_parameters()) {
    std::string name = p.key();
    if (name.rfind("text.", 0) == 0)
      name = name.substr(5);
    else if (name != "logit_scale")
      name = "visual." + name;
    tensors.push_back(shaped_float("module." + name, p.value()));
  }
  const TempDir dir("open_clip");
  const std::string file = dir.file("epoch_3.pt");
  const Bytes b = make_shaped_pth(tensors, "epoch_3", {}, "state_dict");
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  io::TensorDict in;
  in.add("input", io::from_torch(at::randn({2, 3, 32, 32})));
  in.add("text_tokens", io::from_torch(at::randint(0, 300, {3, 77}, at::kLong)));
  const std::string input = dir.file("in.safetensors"), out = dir.file("out.safetensors");
  io::write_safetensors(input, in, {});
  const CliRun r =
      run_cli("--device cpu infer --checkpoint " + file + " --input " + input + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("clip_full"), std::string::npos) << r.out;
  const auto got = nn::read_tensor_map(out);
  ASSERT_TRUE(got.count("logits_per_image"));
  EXPECT_EQ(got.at("logits_per_image").sizes(), (at::IntArrayRef{2, 3}));
  EXPECT_TRUE(at::isfinite(got.at("logits_per_image")).all().item<bool>());
  EXPECT_TRUE(at::allclose(got.at("logits_per_text"), got.at("logits_per_image").t()));
  EXPECT_EQ(got.at("patch_text_cosine").sizes(), (at::IntArrayRef{2, 3, 2, 2}));
}

TEST(ClipInfer, RefusesTextTokensForAnImageOnlyModel) {
  const std::string base = parity_dir() + "/clip_visual_mini";
  const TempDir dir("clip_infer_refused");
  io::TensorDict in;
  in.add("input", io::from_torch(at::randn({1, 3, 32, 32})));
  in.add("text_tokens", io::from_torch(at::zeros({1, 77}, at::kLong)));
  const std::string input = dir.file("in.safetensors");
  io::write_safetensors(input, in, {});
  const CliRun r = run_cli("--device cpu infer --checkpoint " + base + ".safetensors --input " +
                           input + " --out " + dir.file("out.safetensors"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("reads images only"), std::string::npos) << r.out;
}

// classify on a whole CLIP with class names: a zero-shot head, said on the recognition
// line, and the classes ranked by name — from a checkpoint written from the fixture's
// weights as OpenAI's state dicts are (a bare .pth, the released key names); a template
// without its class names, or without its "{}", refused.
TEST(ClipZeroShotCli, ClassifyRanksTheClassNames) {
  const std::string base = parity_dir() + "/clip_full_mini";
  const TempDir dir("clip_zero_shot");
  std::vector<ShapedTensor> tensors;
  for (const auto& [name, t] : nn::read_tensor_map(base + ".safetensors"))
    tensors.push_back(shaped_float(name, t));
  const std::string checkpoint = dir.file("clip_mini.pt");
  const Bytes b = make_shaped_pth(tensors, "clip_mini", {}, "");
  std::ofstream(checkpoint, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), b.size());
  const std::string names = dir.file("names.txt");
  std::ofstream(names) << "cat\ndog\ntruck\n";
  const std::string photo = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
  const CliRun r =
      run_cli("--device cpu classify --checkpoint " + checkpoint + " --config " + base +
              ".config.json --class-names " + names +
              " --prompt-template 'a photo of a {}.' --prompt-template 'a {}' " + photo);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("zero-shot head from 3 class names (2 templates averaged"),
            std::string::npos)
      << r.out;
  for (const char* name : {"cat", "dog", "truck"})
    EXPECT_NE(r.out.find(name), std::string::npos) << r.out;
  // The class-specific analyses run on it: gradient rollout and faithfulness explain the
  // most probable class.
  const CliRun explained =
      run_cli("--device cpu analyze --checkpoint " + checkpoint + " --config " + base +
              ".config.json --class-names " + names + " --images " + photo +
              " --analyses gradcam,gradrollout,faithfulness --out " + dir.file("explained"));
  ASSERT_EQ(explained.code, 0) << explained.out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("explained") + "/gradrollout")) << explained.out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("explained") + "/clip_mini__faithfulness.csv"))
      << explained.out;
  // Every map kind, the randomisation check's copies included, scored the same classes.
  EXPECT_EQ(explained.out.find("needs class scores"), std::string::npos) << explained.out;
  const CliRun refused = run_cli("--device cpu classify --checkpoint " + base +
                                 ".safetensors --prompt-template 'a {}' " + photo);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("--prompt-template goes with --class-names"), std::string::npos)
      << refused.out;
  const CliRun bad =
      run_cli("--device cpu classify --checkpoint " + base + ".safetensors --class-names " + names +
              " --prompt-template 'no slot' " + photo);
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("exactly one {}"), std::string::npos) << bad.out;
}

// analyze --text: the prompts become the model's classes and the prompts analysis writes
// each prompt's cosine map, probability and Grad-CAM; --text-file reads one per line; the
// report draws them. --text with --class-names is refused.
TEST(ClipPromptsCli, AnalyzeAndReportWithText) {
  const std::string base = parity_dir() + "/clip_full_mini";
  const std::string photo = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
  const TempDir dir("clip_prompts");
  const std::string prompts = dir.file("prompts.txt");
  std::ofstream(prompts) << "a photo of a cat\n\na dog\r\nÉté à Paris\n";
  const std::string out = dir.file("analyze");
  const CliRun r =
      run_cli("--device cpu analyze --checkpoint " + base + ".safetensors --text-file " + prompts +
              " --images " + photo + " --analyses prompts,gradcam --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("prompt head from 3 text prompts"), std::string::npos) << r.out;
  const std::string stem = out + "/prompts/clip_full_mini__prompts__demo__";
  const at::Tensor cosine = io::to_torch(io::read_npy(stem + "cosine.npy"));
  const at::Tensor scores = io::to_torch(io::read_npy(stem + "scores.npy"));
  const at::Tensor cams = io::to_torch(io::read_npy(stem + "gradcam.npy"));
  EXPECT_EQ(cosine.sizes(), (at::IntArrayRef{3, 4, 4}));
  EXPECT_EQ(cams.sizes(), (at::IntArrayRef{3, 4, 4}));
  EXPECT_NEAR(scores.sum().item<double>(), 1.0, 1e-5);
  EXPECT_LE(cosine.abs().max().item<double>(), 1.0 + 1e-5);
  EXPECT_TRUE(std::filesystem::exists(out + "/clip_full_mini__prompt_scores.csv"));
  // The gradcam analysis explained the most probable prompt.
  std::ifstream explanations(out + "/clip_full_mini__explanations.csv");
  std::string header, row;
  std::getline(explanations, header);
  std::getline(explanations, row);
  EXPECT_NE(row.find("gradcam"), std::string::npos) << row;

  const std::string report = dir.file("report");
  const CliRun rep = run_cli("--device cpu report --models " + base + ".safetensors --text " +
                             "'a photo of a cat' --text 'a dog' --images " + photo +
                             " --analyses prompts --formats png --out " + report);
  ASSERT_EQ(rep.code, 0) << rep.out;
  EXPECT_TRUE(std::filesystem::exists(report + "/figures/prompts__clip_full_mini__demo.png"))
      << rep.out;

  const std::string names = dir.file("names.txt");
  std::ofstream(names) << "cat\n";
  const CliRun both = run_cli("--device cpu analyze --checkpoint " + base +
                              ".safetensors --text cat --class-names " + names + " --images " +
                              photo + " --out " + dir.file("both"));
  EXPECT_EQ(both.code, 2) << both.out;
  EXPECT_NE(both.out.find("--text and --class-names"), std::string::npos) << both.out;
}

// prompts is in "all" and runs only where there are prompts: a CLIP without them says how
// to give them (a classifier says it reads no text: python/tests/test_module.py).
TEST(ClipPromptsCli, ModelsWithoutPromptsSkipIt) {
  const std::string base = parity_dir() + "/clip_full_mini";
  const std::string photo = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
  const TempDir dir("clip_no_prompts");
  const CliRun r = run_cli("--device cpu analyze --checkpoint " + base + ".safetensors --images " +
                           photo + " --analyses prompts,entropy --out " + dir.file("out"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("was given no prompts (--text"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out") + "/prompts"));
}

}  // namespace
}  // namespace attnlab::testing
