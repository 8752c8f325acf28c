// A ViT at other input sizes than it was trained at (issue 22, "Resolution"): DeiT-tiny
// with formula weights run at 384×384, 224×320 and 160×160 must give the logits of the
// reference — DeiT's pos_embed resampling (bicubic, align_corners false, prefix kept) or
// timm's antialiased one, then timm's forward — computed once by
// scripts/make_vit_resolution_reference.py (PyTorch 1.13) into tests/data/. Also: the
// trained size is untouched by the new keys, sizes that are not a multiple of the patch are
// refused, and timm's distilled DeiT averages its two heads.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <cmath>
#include <fstream>

#include "models/backbone.h"
#include "models/model_registry.h"
#include "models/presets.h"

namespace attnlab::testing {
namespace {

using models::Json;

// The script's weights: tensors in sorted key order, tensor i element k =
// scale · sin(0.001·k·(i+1) + i), computed in double and rounded to float like the script.
void fill_formula_weights(torch::nn::Module& model) {
  std::map<std::string, at::Tensor> params;
  for (auto& p : model.named_parameters()) params[p.key()] = p.value();
  at::NoGradGuard no_grad;
  int i = 0;
  for (auto& [name, t] : params) {
    const at::Tensor k = at::arange(t.numel(), at::kDouble);
    at::Tensor v = at::sin(k * (0.001 * (i + 1)) + i);
    const bool norm_weight = name.find("norm") != std::string::npos && name.size() >= 6 &&
                             name.compare(name.size() - 6, 6, "weight") == 0;
    if (name == "cls_token" || name == "pos_embed")
      v = v * 0.5;
    else if (norm_weight)
      v = v * 0.1 + 1;
    else
      v = v * 0.05;
    t.copy_(v.to(at::kFloat).reshape(t.sizes()));
    ++i;
  }
}

at::Tensor formula_image(int64_t h, int64_t w) {
  return at::sin(at::arange(3 * h * w, at::kDouble) * 0.01).to(at::kFloat).reshape({1, 3, h, w});
}

Json reference() {
  std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/tests/data/vit_resolution_reference.json");
  EXPECT_TRUE(in.good()) << "tests/data/vit_resolution_reference.json is missing";
  return Json::parse(in);
}

TEST(VitResolution, MatchesTheReferenceResamplingAndForward) {
  const Json ref = reference();
  ASSERT_EQ(ref["cases"].size(), 5u);
  for (const auto& c : ref["cases"]) {
    const int64_t h = c["height"], w = c["width"];
    const std::string interp = c["interpolation"];
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w) + " " + interp);
    Json config = models::find_preset("deit_tiny_patch16_224").config;
    config["input_size"] = {h, w};
    config["pos_embed_interpolation"] = interp;
    auto model = models::make_backbone(config);
    model->eval();
    fill_formula_weights(*model);
    at::NoGradGuard no_grad;
    const at::Tensor logits = model->run(formula_image(h, w)).logits[0];
    const at::Tensor expected = at::tensor(c["logits"].get<std::vector<float>>());
    // Float32 forwards of 12 blocks in two libraries (different GEMM kernels and summation
    // orders): logits of magnitude ~1 agree to ~1e-6; 1e-4 is the bound.
    const double diff = (logits - expected).abs().max().item<double>();
    EXPECT_LE(diff, 1e-4);
    RecordProperty("max_abs_diff_" + std::to_string(h) + "x" + std::to_string(w) + "_" + interp,
                   std::to_string(diff));
  }
  // The bound tells the two interpolations apart: their references differ by more.
  const at::Tensor plain = at::tensor(ref["cases"][1]["logits"].get<std::vector<float>>());
  const at::Tensor aa = at::tensor(ref["cases"][3]["logits"].get<std::vector<float>>());
  EXPECT_GT((plain - aa).abs().max().item<double>(), 1e-4);
}

TEST(VitResolution, TheTrainedSizeIsUnchangedAndOtherSizesAreRefused) {
  Json config = models::find_preset("deit_tiny_patch16_224").config;
  config["depth"] = 2;
  at::manual_seed(0);
  auto plain = models::make_backbone(config);
  config["input_size"] = {224, 224};
  at::manual_seed(0);
  auto same = models::make_backbone(config);
  plain->eval();
  same->eval();
  at::NoGradGuard no_grad;
  const at::Tensor x = formula_image(224, 224);
  EXPECT_TRUE(plain->run(x).logits.equal(same->run(x).logits));  // the same computation
  try {
    plain->run(formula_image(224, 320));
    ADD_FAILURE() << "a 224x320 image ran on a 224x224 model";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("--img-size"), std::string::npos) << e.what();
  }
  for (const Json& bad : {Json{224, 300}, Json{0, 224}, Json{224}, Json{99999, 224}}) {
    config["input_size"] = bad;
    EXPECT_THROW(models::make_backbone(config), models::ModelError) << bad.dump();
  }
  config["input_size"] = {224, 224};
  config["pos_embed_interpolation"] = "nearest";
  EXPECT_THROW(models::make_backbone(config), models::ModelError);
}

TEST(VitDistilled, AveragesHeadAndHeadDistOnTheTwoPrefixTokens) {
  Json config = models::find_preset("deit_tiny_distilled_patch16_224").config;
  config["depth"] = 1;
  config["input_size"] = {64, 96};  // resampling keeps both prefix tokens
  at::manual_seed(1);
  auto model = models::make_backbone(config);
  model->eval();
  std::map<std::string, at::Tensor> p;
  for (auto& e : model->named_parameters()) p[e.key()] = e.value();
  ASSERT_EQ(p.at("pos_embed").size(1), 198);  // 196 + cls + dist
  ASSERT_TRUE(p.count("dist_token") && p.count("head_dist.weight"));
  at::NoGradGuard no_grad;
  models::ForwardOptions options;
  options.record_outputs = true;
  const auto r = model->run(formula_image(64, 96), options);
  const at::Tensor norm = r.outputs.at("out.norm");
  ASSERT_EQ(norm.size(1), 2 + 4 * 6);
  const at::Tensor head = at::linear(norm.select(1, 0), p["head.weight"], p["head.bias"]);
  const at::Tensor dist = at::linear(norm.select(1, 1), p["head_dist.weight"], p["head_dist.bias"]);
  // The same float ops in the same order as the model: exact up to summation order.
  EXPECT_LE((r.logits - (head + dist) / 2).abs().max().item<double>(), 1e-6);
}

}  // namespace
}  // namespace attnlab::testing
