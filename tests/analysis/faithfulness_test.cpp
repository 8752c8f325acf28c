// The faithfulness scoreboard (issue 27): the arithmetic on constructed maps and curves
// (step schedule, orders with ties, masks, areas, rank correlation, resampling), the curves
// of a constructed model that looks only at one region (its region map deletes far faster
// than a random map and inserts far faster; the curves are monotone as the construction
// says), the partly re-initialised model of the randomisation check, and the map kinds on
// a model without a class token.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "app/session/faithfulness_maps.h"
#include "core/analysis/faithfulness.h"
#include "models/faithfulness_run.h"
#include "models/model_registry.h"
#include "tests/support/precision_skip.h"

namespace fa = attnlab::analysis;
namespace models = attnlab::models;

namespace {

// Sees only the top-left quarter of a 16×16 image (the first 2×2 cells of a 4×4 grid of
// 4-pixel cells): the logit of class 0 rises with the mean of channel 0 there,
// z = 4·(mean − 1.5), class 1 gets −z. The test image holds 3 there (p0 ≈ 1), the
// baseline 0 (p0 ≈ 0).
class RegionModel : public models::Backbone {
 protected:
  models::ForwardResult forward_images(const at::Tensor& images,
                                       const models::ForwardOptions&) override {
    const at::Tensor region = images.slice(2, 0, 8).slice(3, 0, 8).select(1, 0);
    const at::Tensor z = 4.0 * (region.mean({1, 2}) - 1.5);
    models::ForwardResult r;
    r.logits = at::stack({z, -z}, 1);
    return r;
  }

 public:
  std::string arch() const override { return "region"; }
};

at::Tensor region_image() {
  at::manual_seed(3);
  at::Tensor x = at::rand({1, 3, 16, 16});
  x.slice(2, 0, 8).slice(3, 0, 8).select(1, 0).fill_(3.0);
  return x;
}

at::Tensor region_map() {
  at::Tensor m = at::zeros({4, 4});
  m.slice(0, 0, 2).slice(1, 0, 2).fill_(1.0);
  return m;
}

bool monotone(const std::vector<double>& v, bool rising) {
  for (size_t i = 1; i < v.size(); ++i)
    if (rising ? v[i] < v[i - 1] - 1e-12 : v[i] > v[i - 1] + 1e-12) return false;
  return true;
}

}  // namespace

TEST(Faithfulness, StepsOrdersMasksAndAreas) {
  const auto counts = fa::step_counts(100, 0.05);
  ASSERT_EQ(counts.size(), 21u);
  EXPECT_EQ(counts.front(), 0);
  EXPECT_EQ(counts[1], 5);
  EXPECT_EQ(counts.back(), 100);
  EXPECT_EQ(fa::step_counts(16, 0.05), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                            12, 13, 14, 15, 16}));  // no empty step
  EXPECT_THROW(fa::step_counts(16, 0.0), std::invalid_argument);
  // Ties keep a seeded order; distinct values are strictly ordered.
  const at::Tensor m = at::tensor({3.0f, 1.0f, 2.0f, 2.0f}).view({2, 2});
  const auto most = fa::relevance_order(m, true, 1), least = fa::relevance_order(m, false, 1);
  EXPECT_EQ(most.front(), 0);
  EXPECT_EQ(most.back(), 1);
  EXPECT_EQ(least.front(), 1);
  EXPECT_EQ(least.back(), 0);
  EXPECT_THROW(fa::relevance_order(at::full({2, 2}, NAN), true), std::invalid_argument);
  // Deletion masks lose the first cells of the order; insertion masks gain them.
  const at::Tensor del = fa::step_masks(most, {0, 1, 4}, 2, 2, false);
  const at::Tensor ins = fa::step_masks(most, {0, 1, 4}, 2, 2, true);
  EXPECT_EQ(del.sum({1, 2}).to(at::kLong)[0].item<int64_t>(), 4);
  EXPECT_EQ(del.sum({1, 2}).to(at::kLong)[1].item<int64_t>(), 3);
  EXPECT_EQ(del[1][0][0].item<float>(), 0.0f);  // the most relevant cell went first
  EXPECT_EQ(del.sum({1, 2}).to(at::kLong)[2].item<int64_t>(), 0);
  EXPECT_TRUE(at::equal(ins, 1 - del));
  // Areas by the trapezoid rule over the share of cells: a constant, a line, a step.
  EXPECT_DOUBLE_EQ(fa::curve_area({1, 1, 1}, {0, 1, 4}, 4), 1.0);
  EXPECT_DOUBLE_EQ(fa::curve_area({1, 0.75, 0}, {0, 1, 4}, 4), 0.5);
  EXPECT_DOUBLE_EQ(fa::curve_area({0, 1, 1}, {0, 1, 4}, 4), 0.875);
  EXPECT_THROW(fa::curve_area({1}, {0}, 4), std::invalid_argument);
}

TEST(Faithfulness, RankCorrelationAndResampling) {
  const at::Tensor a = at::arange(12, at::kFloat).view({3, 4});
  EXPECT_DOUBLE_EQ(fa::spearman(a, a), 1.0);
  EXPECT_DOUBLE_EQ(fa::spearman(a, a.neg()), -1.0);
  EXPECT_DOUBLE_EQ(fa::spearman(a, a.pow(3) + 5), 1.0);  // ranks only
  EXPECT_DOUBLE_EQ(fa::spearman(a, at::ones({3, 4})), 0.0);  // a constant map orders nothing
  EXPECT_DOUBLE_EQ(fa::spearman(at::zeros({3, 4}), at::ones({3, 4})), 1.0);  // neither changed
  // Ties take their mean rank: [1, 1, 2] against [1, 2, 3] is sqrt(3)/2.
  EXPECT_NEAR(fa::spearman(at::tensor({1.0, 1.0, 2.0}), at::tensor({1.0, 2.0, 3.0})),
              std::sqrt(3.0) / 2, 1e-12);
  // A 2×2 map onto 4×4: each coarse cell becomes a 2×2 block; onto 3×3 the middle cells
  // average their neighbours by area.
  const at::Tensor c = at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({2, 2});
  const at::Tensor f = fa::resample_map(c, 4, 4);
  EXPECT_TRUE(at::allclose(f.slice(0, 0, 2).slice(1, 0, 2), at::ones({2, 2})));
  EXPECT_FLOAT_EQ(f[3][3].item<float>(), 4.0f);
  const at::Tensor t = fa::resample_map(c, 3, 3);
  EXPECT_NEAR(t[1][1].item<float>(), 2.5, 1e-6);
  EXPECT_NEAR(t[0][1].item<float>(), 1.5, 1e-6);
  // The baselines: the centre prior peaks in the middle, the random map repeats by seed.
  const at::Tensor prior = fa::centre_prior_map(5, 5);
  EXPECT_EQ(prior.argmax().item<int64_t>(), 12);
  EXPECT_TRUE(at::equal(fa::random_map(4, 4, 9), fa::random_map(4, 4, 9)));
  EXPECT_FALSE(at::equal(fa::random_map(4, 4, 9), fa::random_map(4, 4, 10)));
}

TEST(Faithfulness, AModelThatSeesOneRegionRewardsThatRegionsMap) {
  RegionModel model;
  const at::Tensor image = region_image();
  const at::Tensor base = models::baseline_image(image, models::PerturbBaseline::Zeros);
  models::PerturbationRequest q;
  q.step = 1.0 / 16;  // one cell a step
  q.batch = 5;
  const auto region = models::perturbation_curves(model, image, base, region_map(), 0, 0, q);
  double random_deletion = 0, random_insertion = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const auto r = models::perturbation_curves(model, image, base, fa::random_map(4, 4, seed), 0, 0, q);
    random_deletion += r.auc_deletion / 8;
    random_insertion += r.auc_insertion / 8;
    // Removing a region cell only lowers the region's mean; other cells change nothing.
    EXPECT_TRUE(monotone(r.deletion, false));
    EXPECT_TRUE(monotone(r.insertion, true));
  }
  ASSERT_EQ(region.counts.size(), 17u);
  EXPECT_NEAR(region.deletion.front(), 1.0, 1e-4);  // p0 of the image
  EXPECT_NEAR(region.deletion.back(), 0.0, 1e-4);   // of the baseline
  EXPECT_TRUE(monotone(region.deletion, false));
  EXPECT_TRUE(monotone(region.insertion, true));
  // The region's 4 cells go first: deletion ends by 4/16, insertion is complete by then.
  EXPECT_LT(region.auc_deletion, 0.2);
  EXPECT_GT(region.auc_insertion, 0.8);
  EXPECT_LT(region.auc_deletion, random_deletion - 0.25);
  EXPECT_GT(region.auc_insertion, random_insertion + 0.25);
  // Positive perturbation loses the prediction as soon as the region is gone; negative
  // (least relevant first) keeps it until the region's cells are the last ones left.
  EXPECT_LT(region.auc_positive, 0.25);
  EXPECT_GT(region.auc_negative, 0.7);
}

TEST(Faithfulness, BaselinesKeepTheImagesShape) {
  const at::Tensor image = region_image();
  for (const auto b : {models::PerturbBaseline::Blur, models::PerturbBaseline::Mean,
                       models::PerturbBaseline::Zeros}) {
    const at::Tensor x = models::baseline_image(image, b);
    EXPECT_EQ(x.sizes(), image.sizes()) << models::perturb_baseline_name(b);
    EXPECT_TRUE(x.isfinite().all().item<bool>());
  }
  // Blurring keeps each channel's mean away from the borders and smooths: less variance.
  const at::Tensor blurred = models::baseline_image(image, models::PerturbBaseline::Blur);
  EXPECT_LT(blurred.var().item<double>(), image.var().item<double>());
  EXPECT_TRUE(at::allclose(models::baseline_image(image, models::PerturbBaseline::Mean).mean({2, 3}),
                           image.mean({2, 3})));
  EXPECT_THROW(models::parse_perturb_baseline("noise"), models::ModelError);
  EXPECT_THROW(models::baseline_image(at::zeros({2, 3, 8, 8}), models::PerturbBaseline::Mean),
               models::ModelError);
}

// A model run at bf16 gets copies at bf16: RAVLT's copies once took its bf16-rounded RoPE
// angles into fp32 buffers, which its angle check (exact at the buffer's precision)
// refused, so the randomisation check was missing at bf16 (found by the GPU check's
// self-test, bench/gpu_check/session.cpp).
TEST(Faithfulness, RandomisedCopiesKeepTheModelsPrecision) {
  ATTNLAB_SKIP_UNLESS_CPU_RUNS(at::kBFloat16);
  const models::Json ravlt = {{"arch", "ravlt"},        {"embed_dims", {16, 16, 32, 32}},
                              {"depths", {1, 1, 1, 1}}, {"num_heads", {1, 1, 2, 2}},
                              {"projection", 32},       {"num_classes", 4}};
  at::manual_seed(0);
  auto model = models::make_backbone(ravlt);
  model->eval();
  model->set_precision(at::kBFloat16);
  const at::Tensor image = at::randn({1, 3, 64, 64});
  const attnlab::session::PreparedImage prepared = attnlab::session::prepare_image(*model, image);
  const auto all = models::partly_reinitialised(*model, prepared.blocks, 5);
  EXPECT_EQ(all->dtype(), at::kBFloat16);
  at::NoGradGuard no_grad;
  EXPECT_NO_THROW(all->run(image)) << "the copy runs where the model runs";
}

TEST(Faithfulness, RandomisationReinitialisesOnlyTheNamedBlocks) {
  const models::Json config = {{"arch", "vit"},    {"img_size", 32},     {"patch_size", 8},
                               {"embed_dim", 16},  {"depth", 3},         {"num_heads", 2},
                               {"num_classes", 4}};
  at::manual_seed(0);
  auto model = models::make_backbone(config);
  model->eval();
  const at::Tensor image = at::randn({1, 3, 32, 32});
  const attnlab::session::PreparedImage prepared = attnlab::session::prepare_image(*model, image);
  const auto& blocks = prepared.blocks;
  ASSERT_EQ(blocks, (std::vector<std::string>{"blocks.0", "blocks.1", "blocks.2"}));
  auto fresh = models::partly_reinitialised(*model, {"blocks.2"}, 5);
  std::map<std::string, at::Tensor> trained;
  for (const auto& p : model->named_parameters()) trained[p.key()] = p.value();
  int changed = 0;
  for (const auto& p : fresh->named_parameters()) {
    const bool top = p.key().rfind("blocks.2.", 0) == 0;
    const bool same = at::equal(p.value(), trained.at(p.key()));
    if (top && !same) ++changed;
    if (!top) {
      EXPECT_TRUE(same) << p.key();
    }
  }
  EXPECT_GT(changed, 4);
  // A map that ignores the weights is the same on both; Grad-CAM is not.
  const attnlab::attention::TokenLayout& grid = prepared.grid;
  EXPECT_EQ(grid.height, 4);
  const auto all = models::partly_reinitialised(*model, blocks, 5);
  const auto map = [&](models::Backbone& m, const std::string& kind) {
    return attnlab::session::faithfulness_map(m, image, kind, 0, grid, 3);
  };
  EXPECT_DOUBLE_EQ(fa::spearman(map(*model, "centre"), map(*all, "centre")), 1.0);
  EXPECT_DOUBLE_EQ(fa::spearman(map(*model, "random"), map(*all, "random")), 1.0);
  EXPECT_LT(fa::spearman(map(*model, "gradcam"), map(*all, "gradcam")), 0.99);
  // The copies are rebuilt from the config the model remembers; a model made otherwise
  // has none, and the check says so.
  EXPECT_EQ(models::Json::parse(model->config_text()), config);
  RegionModel region;
  try {
    models::partly_reinitialised(region, {}, 1);
    FAIL() << "a model without a config";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("was not built from one"), std::string::npos) << e.what();
  }
}

TEST(Faithfulness, MapKindsOnModelsWithAndWithoutAClassToken) {
  const models::Json no_cls = {{"arch", "vit"},   {"img_size", 32}, {"patch_size", 8},
                               {"embed_dim", 16}, {"depth", 2},     {"num_heads", 2},
                               {"num_classes", 4}, {"class_token", false}};
  at::manual_seed(0);
  auto model = models::make_backbone(no_cls);
  model->eval();
  const at::Tensor image = at::randn({1, 3, 32, 32});
  const auto grid = attnlab::session::prepare_image(*model, image).grid;
  for (const std::string kind : {"rollout", "gradcam", "gradrollout", "random", "centre"}) {
    const at::Tensor m = attnlab::session::faithfulness_map(*model, image, kind, 1, grid, 0);
    EXPECT_EQ(m.sizes(), (at::IntArrayRef{4, 4})) << kind;
    EXPECT_TRUE(m.isfinite().all().item<bool>()) << kind;
  }
  try {
    attnlab::session::faithfulness_map(*model, image, "cls", 1, grid, 0);
    FAIL() << "a cls map without a class token";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use rollout, gradcam or gradrollout"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(attnlab::session::parse_faithfulness_maps("cls,saliency"), std::invalid_argument);
  EXPECT_EQ(attnlab::session::parse_faithfulness_maps("gradcam,cls,gradcam"),
            (std::vector<std::string>{"gradcam", "cls"}));
}
