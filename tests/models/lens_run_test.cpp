// The logit lens's readouts (models/lens_run.h, Backbone::readout_logits/readout_features):
// the acceptance case "the lens at the last block is the model's own logits" on every family
// that reads its blocks out — the DeiT fixture (cls token), the distilled AnchorDeiT fixture
// and a distilled timm DeiT (both heads averaged), a mean-pooled ViT (fc_norm), Swin, LITv2
// and RAVLT (their last stage only, the earlier stages skipped by name) — the features the
// probes read, and the refusals: an embedding model (DINO), a block of the wrong width.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "models/checkpoint_loading.h"
#include "models/lens_run.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

struct LensCase {
  std::string name;  // a parity fixture (weights loaded), or a config built at random
  models::Json config;
  int64_t input;
};

std::shared_ptr<models::Backbone> build_lens_case(const LensCase& c) {
  torch::manual_seed(3);
  if (c.config.is_null()) {
    const std::string base = parity_dir() + "/" + c.name;
    auto m = models::make_backbone(models::config_from_file(base + ".config.json"));
    models::load_checkpoint(*m, base + ".safetensors");
    m->eval();
    return m;
  }
  auto m = models::make_backbone(c.config);
  m->eval();
  return m;
}

models::Json deit_mini_with(const std::string& key, bool value) {
  models::Json c = models::config_from_file(parity_dir() + "/deit_mini.config.json");
  c[key] = value;
  return c;
}

std::vector<LensCase> lens_cases() {
  return {{"deit_mini", nullptr, 224},
          {"anchor_deit_mini", nullptr, 224},
          {"deit_mini_distilled", deit_mini_with("distilled", true), 224},
          {"deit_mini_fc_norm", deit_mini_with("class_token", false), 224},
          {"swin_mini", nullptr, 32},
          {"litv2_mini", models::config_from_file(parity_dir() + "/litv2_mini.config.json"), 64},
          {"ravlt_mini", models::config_from_file(parity_dir() + "/ravlt_mini.config.json"), 64}};
}

// One image: the last block read out runs the forward's own tail (the same function:
// head_logits, pooled_head, RAVLT's tail) on the same tensor at the same batch size, so
// the same kernels see the same data. Equal bits are expected; 4 float32 ulps of the
// largest logit allow only for a threaded reduction that splits its work differently
// between two calls, far below the 1e-3 of the scale a wrong head or a missing norm gives.
TEST(LensLogits, TheLastBlockReadOutIsTheModelsLogits) {
  at::manual_seed(0);
  for (const LensCase& c : lens_cases()) {
    SCOPED_TRACE(c.name);
    auto model = build_lens_case(c);
    const at::Tensor image = at::randn({1, 3, c.input, c.input});
    const at::NoGradGuard no_grad;
    const models::ForwardResult r = model->run(image, models::lens_forward_options());
    const models::LensLogits lens = models::lens_logits(*model, r, 0);
    ASSERT_EQ(lens.logits.dim(), 2);
    ASSERT_EQ(int64_t(lens.blocks.size()), lens.logits.size(0));
    EXPECT_EQ(lens.blocks.size() + lens.skipped.size(), size_t(lens.total_blocks));
    EXPECT_EQ(lens.depth.back(), lens.total_blocks - 1);
    EXPECT_TRUE(agree_up_to_reordering(lens.logits[-1], r.logits[0], 4.0));
    // Earlier blocks are other readouts, not copies of the last (the fixtures' blocks change
    // the stream by far more than rounding).
    if (lens.logits.size(0) > 1) {
      EXPECT_GT(max_abs_diff(lens.logits[0], r.logits[0]), reordering_tolerance(r.logits[0]));
    }
  }
}

// Image 1 of a batch of 2: the forward's head ran on a (2, C) matrix, the readout on the
// one row alone — one row computed alone and inside a matrix, another GEMM kernel, so the
// sums are taken in another order: float_compare.h's reordering bound (64 ulps of the
// scale), as every such comparison in the suite.
TEST(LensLogits, EveryImageOfABatchReadsOutToItsOwnLogits) {
  at::manual_seed(1);
  for (const LensCase& c : lens_cases()) {
    SCOPED_TRACE(c.name);
    auto model = build_lens_case(c);
    const at::Tensor images = at::randn({2, 3, c.input, c.input});
    const at::NoGradGuard no_grad;
    const models::ForwardResult r = model->run(images, models::lens_forward_options());
    for (int64_t b = 0; b < 2; ++b)
      EXPECT_TRUE(
          agree_up_to_reordering(models::lens_logits(*model, r, b).logits[-1], r.logits[b]));
    EXPECT_THROW(models::lens_logits(*model, r, 2), models::ModelError);
  }
}

// lens_forward_options keeps the blocks' outputs alone (no attention maps, untraced
// attention); the session's forward (traces and every output) gives the same readouts — a
// traced and an untraced forward, so up to the reordering bound of float_compare.h.
TEST(LensLogits, BlockOutputsAloneAndTheSessionsForwardAgree) {
  auto model = build_lens_case(lens_cases()[0]);
  const at::NoGradGuard no_grad;
  const at::Tensor image = at::randn({1, 3, 224, 224});
  const auto lean = model->run(image, models::lens_forward_options());
  std::vector<std::string> names;
  for (const auto& [name, tensor] : lean.outputs) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"out.blocks.0", "out.blocks.1"}));
  models::ForwardOptions full;
  full.trace_attention = full.record_outputs = true;
  const auto traced = model->run(image, full);
  EXPECT_TRUE(agree_up_to_reordering(models::lens_logits(*model, lean, 0).logits,
                                     models::lens_logits(*model, traced, 0).logits));
}

// Which blocks each family reads: all of a ViT's; only the last stage of a hierarchical
// model (the final norm's width), the others listed with their width.
TEST(LensLogits, HierarchicalModelsReadTheirLastStageOnly) {
  const at::NoGradGuard no_grad;
  auto vit = build_lens_case(lens_cases()[0]);
  const auto rv = vit->run(at::randn({1, 3, 224, 224}), models::lens_forward_options());
  const auto lv = models::lens_logits(*vit, rv, 0);
  EXPECT_EQ(lv.blocks, (std::vector<std::string>{"blocks.0", "blocks.1"}));
  EXPECT_TRUE(lv.skipped.empty());
  auto swin = build_lens_case(lens_cases()[4]);  // depths (2, 2), widths 24 and 48
  const auto rs = swin->run(at::randn({1, 3, 32, 32}), models::lens_forward_options());
  const auto ls = models::lens_logits(*swin, rs, 0);
  EXPECT_EQ(ls.blocks, (std::vector<std::string>{"layers.1.blocks.0", "layers.1.blocks.1"}));
  EXPECT_EQ(ls.depth, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(ls.skipped.size(), 2u);
  EXPECT_NE(ls.skipped[0].find("layers.0.blocks.0 (width 24"), std::string::npos) << ls.skipped[0];
  // RAVLT's stages 2 and 3 have one width (128), a downsampling between them: only the last
  // stage is read.
  auto ravlt = build_lens_case(lens_cases()[6]);
  const auto rr = ravlt->run(at::randn({1, 3, 64, 64}), models::lens_forward_options());
  const auto lr = models::lens_logits(*ravlt, rr, 0);
  EXPECT_EQ(lr.blocks, (std::vector<std::string>{"layers.3.blocks.0"}));
  ASSERT_EQ(lr.skipped.size(), 3u);
  EXPECT_NE(lr.skipped[2].find("layers.2.blocks.0 (width 128"), std::string::npos) << lr.skipped[2];
  // Asked directly, the tail refuses an earlier stage's tokens by name.
  try {
    swin->readout_logits(rs.outputs.at("out.layers.0.blocks.1"));
    ADD_FAILURE() << "an earlier stage was read out";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("last stage"), std::string::npos) << e.what();
  }
}

// The probes' features are what the head pools, taken as they are (copies and one mean:
// the distilled pair is an exact concatenation, compared bit for bit).
TEST(LensLogits, ReadoutFeaturesAreTheTokensTheHeadPools) {
  const at::NoGradGuard no_grad;
  for (const size_t i : {size_t(0), size_t(2), size_t(3)}) {
    const LensCase c = lens_cases()[i];
    SCOPED_TRACE(c.name);
    auto model = build_lens_case(c);
    const auto r = model->run(at::randn({2, 3, 224, 224}), models::lens_forward_options());
    const auto features = models::block_readout_features(*model, r);
    ASSERT_EQ(features.size(), 2u);
    const at::Tensor tokens = r.outputs.at("out.blocks.1").to(at::kDouble);
    const at::Tensor want = i == 0 ? tokens.select(1, 0)
                            : i == 2
                                ? at::cat({tokens.select(1, 0), tokens.select(1, 1)}, 1)
                                : r.outputs.at("out.blocks.1").slice(1, 0).mean(1).to(at::kDouble);
    EXPECT_EQ(features[1].block, "blocks.1");
    EXPECT_TRUE(at::equal(features[1].features, want));
  }
}

// DINO has no classifier: the lens refuses with the embedding note; its class token is
// still a probe's feature.
TEST(LensLogits, AnEmbeddingModelIsRefusedButHasFeatures) {
  auto dino = build_lens_case({"dino_mini", nullptr, 0});
  const at::NoGradGuard no_grad;
  const int64_t size =
      models::config_from_file(parity_dir() + "/dino_mini.config.json").value("img_size", 0);
  const auto r = dino->run(at::randn({1, 3, size, size}), models::lens_forward_options());
  try {
    models::lens_logits(*dino, r, 0);
    ADD_FAILURE() << "DINO was read out through a head";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("embedding"), std::string::npos) << e.what();
  }
  const auto features = models::block_readout_features(*dino, r);
  ASSERT_FALSE(features.empty());
  EXPECT_EQ(features.back().features.size(0), 1);
  // A forward that kept neither its block inputs nor its traces has no blocks to read.
  models::ForwardOptions bare;
  bare.record_outputs = true;
  EXPECT_THROW(models::forward_blocks(dino->run(at::randn({1, 3, size, size}), bare)),
               models::ModelError);
}

}  // namespace
}  // namespace attnlab::testing
