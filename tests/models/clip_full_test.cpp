// The whole CLIP (models/clip_full.h, arch "clip_full"): parity with the reference fixture
// clip_full_mini (openai/CLIP CLIP: both towers, every tensor the fixture names — the image
// tower's outputs, the text tower's per-block outputs and causal attention, the pooled
// positions, the features before and after normalisation, the logits, the per-patch
// embeddings and their cosines with the prompts) from the .config.json and from the
// metadata; configs of other sizes; bad text tokens refused by name; a whole release's
// layout read as both towers, and a clip_visual_vit config taking the image tower alone.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/io/tensor_file.h"
#include "core/nn/state_loading.h"
#include "models/checkpoint_loading.h"
#include "models/clip_layout.h"
#include "models/clip_tokens.h"
#include "models/image_text.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "models/zero_shot_head.h"
#include "tests/support/fixtures.h"
#include "tests/support/parity_outputs.h"

namespace attnlab::testing {
namespace {

using models::Json;

std::shared_ptr<models::Backbone> clip_full_mini(bool from_metadata) {
  const std::string base = parity_dir() + "/clip_full_mini";
  const Json config =
      from_metadata
          ? models::config_from_metadata(io::read_tensor_file(base + ".safetensors").metadata)
          : models::config_from_file(base + ".config.json");
  auto model = models::load_model(config, base + ".safetensors").model;
  return model;
}

// Every tensor of the expected file: integers exactly, floats within 1e-4 of their scale
// (the fixtures README's bound for float32: ‖Δ‖/‖ref‖, and max|Δ| / max|ref|).
TEST(ClipFullParity, EveryTensorOfClipFullMini) {
  const auto expected = nn::read_tensor_map(parity_dir() + "/clip_full_mini.expected.safetensors");
  for (const bool from_metadata : {false, true}) {
    auto model = clip_full_mini(from_metadata);
    ASSERT_NE(models::image_text_model(*model), nullptr);
    const at::NoGradGuard no_grad;
    const auto got =
        models::run_image_text(*model, expected.at("input"), expected.at("text_tokens"));
    int compared = 0;
    for (const auto& [key, ref] : expected) {
      if (key == "input" || key == "text_tokens") continue;
      const auto it = got.find(key);
      ASSERT_NE(it, got.end()) << "no output " << key;
      ASSERT_EQ(it->second.sizes(), ref.sizes()) << key;
      if (!ref.is_floating_point()) {
        EXPECT_TRUE(at::equal(it->second.to(at::kLong), ref.to(at::kLong))) << key;
      } else {
        const double rel = relative_l2(it->second, ref);
        const double scale = std::max(1e-30, ref.abs().max().item<double>());
        const double max_rel = max_abs_diff(it->second, ref) / scale;
        std::printf("[parity] clip_full_mini%s %s rel %.3g, max %.3g\n",
                    from_metadata ? " (metadata)" : "", key.c_str(), rel, max_rel);
        EXPECT_LE(rel, 1e-4) << key;
        EXPECT_LE(max_rel, 1e-4) << key;
      }
      ++compared;
    }
    // Image: conv1, ln_pre, 2 blocks, ln_post, attn; text: token_embedding, 3 blocks,
    // ln_final, text_pooled, attn; eot_index, 4 features, logit_scale_exp, 2 logits, patch
    // features and cosines: 23, all there is besides input and text_tokens.
    EXPECT_EQ(compared, 23);
  }
}

// The pooled row is the first largest id: a spelled-out <|endoftext|> pools there, and
// what follows it never changes the text feature (the causal mask).
TEST(ClipFullText, PoolsAtTheFirstEndTokenAndIgnoresWhatFollows) {
  auto model = clip_full_mini(false);
  auto* text = models::image_text_model(*model);
  const at::NoGradGuard no_grad;
  at::Tensor a = at::zeros({1, 77}, at::kLong), b = a.clone();
  for (auto* t : {&a, &b}) {
    (*t)[0][0] = 49406;
    (*t)[0][1] = 320;
    (*t)[0][2] = 49407;
  }
  b[0][3] = 2368;  // after the end token: masked away from the pooled row
  b[0][4] = 49407;
  const auto ea = text->encode_text(a), eb = text->encode_text(b);
  EXPECT_EQ(ea.eot_index.item<int64_t>(), 2);
  EXPECT_EQ(eb.eot_index.item<int64_t>(), 2);
  EXPECT_LE(max_abs_diff(ea.features, eb.features), 1e-6);
}

TEST(ClipFullText, RefusesBadTokensByName) {
  auto model = clip_full_mini(false);
  auto* text = models::image_text_model(*model);
  const auto refusal = [&](const at::Tensor& t) {
    try {
      text->encode_text(t);
    } catch (const models::ModelError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(at::zeros({2, 76}, at::kLong)).find("(B, 77)"), std::string::npos);
  EXPECT_NE(refusal(at::zeros({2, 77}, at::kFloat)).find("integer ids"), std::string::npos);
  EXPECT_NE(refusal(at::full({1, 77}, 49408, at::kLong)).find("[0, 49408)"), std::string::npos);
  EXPECT_NE(refusal(at::full({1, 77}, -1, at::kLong)).find("[0, 49408)"), std::string::npos);
}

// Other widths, depths, heads, image and context sizes come from the config alone.
TEST(ClipFullConfig, OtherSizesBuildAndRun) {
  Json c = {{"arch", "clip_full"},     {"embed_dim", 24},        {"image_resolution", 48},
            {"vision_layers", 1},      {"vision_width", 32},     {"vision_patch_size", 16},
            {"vision_heads", 4},       {"context_length", 12},   {"vocab_size", 50},
            {"transformer_width", 24}, {"transformer_heads", 3}, {"transformer_layers", 2}};
  auto model = models::make_backbone(c);
  auto* text = models::image_text_model(*model);
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->context_length(), 12);
  const at::NoGradGuard no_grad;
  at::Tensor tokens = at::randint(0, 49, {3, 12}, at::kLong);
  const auto out = models::run_image_text(*model, at::randn({2, 3, 48, 48}), tokens);
  EXPECT_EQ(out.at("logits_per_image").sizes(), (at::IntArrayRef{2, 3}));
  EXPECT_EQ(out.at("patch_text_cosine").sizes(), (at::IntArrayRef{2, 3, 3, 3}));
  EXPECT_EQ(out.at("attn.transformer.resblocks.1").sizes(), (at::IntArrayRef{3, 3, 12, 12}));
  // The per-patch readout on the class token is the image feature itself.
  EXPECT_EQ(out.at("image_patch_features").sizes(), (at::IntArrayRef{2, 9, 24}));
  c["transformer_heads"] = 5;
  EXPECT_THROW(models::make_backbone(c), models::ModelError);
}

// A release's keys: visual.* → the tower, the text keys → text.*, logit_scale kept,
// build_model's extras dropped; a clip_visual_vit config takes the tower alone.
TEST(ClipFullLayout, AReleaseIsBothTowersAndTheTowerConfigTakesItsPart) {
  const auto weights = nn::read_tensor_map(parity_dir() + "/clip_full_mini.safetensors");
  nn::TensorMap with_extras = weights;
  with_extras["context_length"] = at::full({}, 77, at::kLong);
  ASSERT_TRUE(models::is_clip_release_layout(with_extras));
  const models::ClipRelease r = models::clip_release_tensors(with_extras);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_TRUE(r.tensors.count("conv1.weight"));
  EXPECT_TRUE(r.tensors.count("text.token_embedding.weight"));
  EXPECT_TRUE(r.tensors.count("text.transformer.resblocks.2.attn.in_proj_weight"));
  EXPECT_TRUE(r.tensors.count("logit_scale"));
  EXPECT_NE(r.note().find("both towers"), std::string::npos) << r.note();
  nn::TensorMap tower = r.tensors;
  EXPECT_EQ(models::clip_tower_only(tower), r.text_tensors + 1);
  for (const auto& entry : tower) EXPECT_EQ(entry.first.rfind("text.", 0), std::string::npos);
}

// The fixture's prompts as class names with the template "{}" make a head whose scores are
// the reference's logits_per_image: the zero-shot path checked against openai/CLIP.
TEST(ClipZeroShot, ThePromptsAsClassesGiveTheReferenceLogits) {
  const std::string base = parity_dir() + "/clip_full_mini";
  const auto expected = nn::read_tensor_map(base + ".expected.safetensors");
  const Json config = models::config_from_file(base + ".config.json");
  const auto prompts = config.at("prompts").get<std::vector<std::string>>();
  auto model = clip_full_mini(false);
  auto* text = models::image_text_model(*model);
  const models::ZeroShotHead head = models::make_zero_shot_head(*text, prompts, {"{}"});
  EXPECT_EQ(head.weights.sizes(), (at::IntArrayRef{6, 32}));
  EXPECT_NE(head.note().find("prompt head from 6 text prompts"), std::string::npos) << head.note();
  text->set_class_head(head.weights);
  EXPECT_EQ(model->output_kind(), models::OutputKind::classes);
  const at::NoGradGuard no_grad;
  models::ForwardOptions record;
  record.record_outputs = true;
  const auto r = model->run(expected.at("input"), record);
  const at::Tensor& ref = expected.at("logits_per_image");
  EXPECT_LE(max_abs_diff(r.logits, ref), 1e-4 * ref.abs().max().item<double>());
  // The lens reads the last block out through the same head.
  const at::Tensor lens = model->readout_logits(r.outputs.at("out.transformer.resblocks.1"));
  EXPECT_LE(max_abs_diff(lens, r.logits), 1e-5 * ref.abs().max().item<double>());
  // run_image_text still gives the embeddings with a head on.
  const auto pair =
      models::run_image_text(*model, expected.at("input"), expected.at("text_tokens"));
  EXPECT_LE(max_abs_diff(pair.at("image_features"), expected.at("image_features")), 1e-5);
  text->set_class_head(at::Tensor());
  EXPECT_EQ(model->output_kind(), models::OutputKind::embedding);
}

// Several templates: each prompt's embedding normalised, averaged, normalised again.
TEST(ClipZeroShot, TemplatesAreAveragedAsClipsPaperDoes) {
  auto model = clip_full_mini(false);
  auto* text = models::image_text_model(*model);
  const std::vector<std::string> templates = {"a photo of a {}.", "itap of a {}"};
  const models::ZeroShotHead head = models::make_zero_shot_head(*text, {"cat", "dog"}, templates);
  const at::NoGradGuard no_grad;
  for (int k = 0; k < 2; ++k) {
    const std::string name = k == 0 ? "cat" : "dog";
    at::Tensor sum = at::zeros({32});
    for (const auto& t : templates) {
      const at::Tensor ids =
          models::clip_tokens({models::format_prompt(t, name)}, text->context_length());
      sum = sum + models::l2_normalized(text->encode_text(ids).features)[0];
    }
    EXPECT_LE(max_abs_diff(head.weights[k], models::l2_normalized(sum / 2)), 1e-6) << name;
  }
  EXPECT_THROW(models::format_prompt("no slot", "cat"), models::ModelError);
  EXPECT_THROW(models::format_prompt("{} and {}", "cat"), models::ModelError);
  EXPECT_THROW(models::make_zero_shot_head(*text, {}, templates), models::ModelError);
  EXPECT_THROW(text->set_class_head(at::zeros({3, 31})), models::ModelError);
}

// Text → where: each patch's cosine with each prompt and the image–text logits, against the
// reference's patch_text_cosine and logits_per_image; the same with a class head on (the
// image embedding then recomputed from the pooled token).
TEST(ClipPrompts, MapsAndLogitsAreTheReferences) {
  const auto expected =
      nn::read_tensor_map(parity_dir() + "/clip_full_mini.expected.safetensors");
  auto model = clip_full_mini(false);
  const at::Tensor& texts = expected.at("text_features_normalized");
  for (const bool with_head : {false, true}) {
    if (with_head) models::image_text_model(*model)->set_class_head(texts);
    const models::PromptMaps m = models::prompt_maps(*model, expected.at("input"), texts);
    EXPECT_LE(relative_l2(m.cosine, expected.at("patch_text_cosine")), 1e-4) << with_head;
    EXPECT_LE(relative_l2(m.logits, expected.at("logits_per_image")), 1e-4) << with_head;
  }
}

}  // namespace
}  // namespace attnlab::testing
