// Resumed forwards (ForwardOptions::resume), which head ablation uses to rerun only the
// blocks from the ablated layer on: for every family, starting at any block from the input
// the full forward recorded there gives the full forward's logits; a block the model lacks
// is refused; and ablating a head through resumed forwards gives what a full forward with
// that head switched off gives.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include "models/backbone.h"
#include "models/head_ablation.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

struct Family {
  std::string config;  // a parity fixture's mini config
  int64_t input;       // a small input the family accepts
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {{"deit_mini", 224},
                                        {"anchor_deit_mini", 224},
                                        {"litv2_mini", 64},
                                        {"ravlt_mini", 64},
                                        {"swin_mini", 32}};
  return f;
}

std::shared_ptr<models::Backbone> build(const Family& f) {
  torch::manual_seed(5);
  return models::make_backbone(
      models::config_from_file(parity_dir() + "/" + f.config + ".config.json"));
}

// Relative distance; the resumed forward runs the same kernels on the same tensors as the
// full one, so only a different choice of kernel between two calls could move it (1e-6).
double relative(const at::Tensor& a, const at::Tensor& ref) {
  return (a - ref).norm().item<double>() / ref.norm().item<double>();
}

TEST(ResumedForward, StartsAtAnyBlockAndGivesTheFullLogits) {
  const at::NoGradGuard no_grad;
  for (const Family& f : families()) {
    SCOPED_TRACE(f.config);
    auto model = build(f);
    const at::Tensor images = at::randn({2, 3, f.input, f.input});
    models::ForwardOptions record;
    record.record_block_inputs = true;
    const auto full = model->run(images, record);
    ASSERT_GE(full.block_inputs.size(), 2u);
    for (const auto& in : full.block_inputs) {
      SCOPED_TRACE(in.block);
      models::ForwardOptions resumed;
      resumed.resume = &in;
      const auto r = model->run(images, resumed);
      EXPECT_LT(relative(r.logits, full.logits), 1e-6);
    }
    // A resumed forward from a later block ignores the images it is given.
    models::ForwardOptions last;
    last.resume = &full.block_inputs.back();
    EXPECT_LT(relative(model->run(at::zeros_like(images), last).logits, full.logits), 1e-6);
    models::BlockInput missing = full.block_inputs.front();
    missing.block = "blocks.99";
    models::ForwardOptions bad;
    bad.resume = &missing;
    EXPECT_THROW(model->run(images, bad), models::ModelError);
  }
}

TEST(ResumedForward, HeadAblationMatchesFullForwardsWithTheHeadSwitchedOff) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.config);
    auto model = build(f);
    const at::Tensor images = at::randn({3, 3, f.input, f.input});
    const auto plan = models::plan_head_ablation(*model);
    ASSERT_FALSE(plan.layers.empty());
    const auto r = models::ablate_heads(*model, plan, images, at::Tensor());
    const at::NoGradGuard no_grad;
    std::map<std::string, at::Tensor> params;
    for (const auto& p : model->named_parameters()) params[p.key()] = p.value();
    for (size_t l = 0; l < plan.layers.size(); ++l) {
      const auto& layer = plan.layers[l];
      for (size_t h = 0; h < layer.heads.size(); ++h) {
        SCOPED_TRACE(layer.path + " head " + std::to_string(h));
        const auto& cols = layer.heads[h];
        at::Tensor slice = params.at(layer.path + "." + cols.parameter).narrow(1, cols.first, cols.count);
        const at::Tensor saved = slice.clone();
        slice.zero_();
        const at::Tensor p = model->run(images).logits.to(at::kDouble).softmax(-1).gather(
            1, r.predicted.unsqueeze(1)).squeeze(1);
        slice.copy_(saved);
        // Probabilities from float32 logits: 1e-6 covers a different kernel choice.
        EXPECT_TRUE(at::allclose(r.ablated_probability[int64_t(l)][int64_t(h)], p, 1e-5, 1e-6));
      }
    }
  }
}

}  // namespace
}  // namespace attnlab::testing
