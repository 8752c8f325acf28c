// --dtype bf16 against fp32 (issue 28): every zoo model (every registered mechanism, trained
// weights) runs every analysis of "all" plus the explanations on the same Fashion-MNIST
// images twice, its weights and forward at fp32 and at bf16 (load_chosen_model with a
// ComputeTarget), and every value column of every table is compared.
//
// The tolerance is derived, not measured (tests/support/bf16_bounds.h): the bf16 forward's
// activations are within ε = λ·√n·u of fp32's, relative to their scale (u = 2^-8, n the
// roundings on the longest path through the model's blocks, λ = 5), on every CPU, and each
// column moves by at most κ·ε of its scale (the largest |fp32 value| in the column), with
// κ its conditioning (rule_for states each). Columns that are not continuous in the
// activations (numerical ranks, argmax assignments, counts over a threshold) are not
// compared: each rule says why, and the rank analyses' own warning is checked instead.
// The test prints every column's largest difference next to its bound.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "app/session/model_source.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "core/runtime/precision.h"
#include "models/model_config.h"
#include "tests/support/bf16_bounds.h"
#include "tests/support/precision_skip.h"

namespace attnlab::testing {
namespace {

std::vector<std::string> zoo_names() {
  std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo/zoo.json");
  const models::Json zoo = models::Json::parse(in);
  std::vector<std::string> out;
  for (const auto& m : zoo["models"]) out.push_back(m["name"].get<std::string>());
  return out;
}

// Four images of different classes.
std::vector<std::string> image_paths() {
  std::vector<std::string> all;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ATTNLAB_SOURCE_DIR) +
                                                           "/assets/fashion-mnist"))
    if (e.path().extension() == ".png") all.push_back(e.path().string());
  std::sort(all.begin(), all.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < all.size() && out.size() < 4; i += std::max<size_t>(1, all.size() / 4))
    out.push_back(all[i]);
  return out;
}

struct PrecisionRun {
  std::vector<analysis::Table> tables;
  at::Tensor logits;  // (images, classes), float64
  int blocks = 0;     // attention layers traced: one per block in every zoo model
  std::vector<std::string> warnings;
};

PrecisionRun run_at(const session::ModelChoice& choice, c10::ScalarType dtype) {
  runtime::ComputeTarget target;
  target.dtype = dtype;
  const session::ReadyModel ready = session::load_chosen_model(choice, target);
  EXPECT_EQ(ready.model->dtype(), dtype);
  session::AnalysisSettings settings;
  settings.analyses = session::parse_analyses("all");  // every analysis but the opt-in ones
  session::AnalysisSession s(settings, nullptr);
  std::vector<at::Tensor> images;
  for (const std::string& p : image_paths())
    images.push_back(image::preprocess(io::load_rgb_image(p), choice.preprocessing));
  const at::Tensor batch = at::cat(images);
  models::ForwardResult r;
  {
    const at::NoGradGuard no_grad;
    r = ready.model->run(batch, settings.forward_options());
  }
  EXPECT_EQ(r.logits.scalar_type(), dtype);
  PrecisionRun out;
  out.logits = r.logits.to(at::kDouble);
  out.blocks = int(r.traces.size());
  for (int64_t b = 0; b < batch.size(0); ++b) {
    const std::string tag = "img" + std::to_string(b);
    s.add(tag, r, b);
    if (s.explains()) s.explain(tag, *ready.model, images[size_t(b)]);
  }
  out.tables = s.tables();
  out.warnings = s.warnings();
  return out;
}

// How a column is compared: |bf16 − fp32| ≤ kappa·ε·scale for every row, or not at all.
struct Rule {
  double kappa = 1.0;  // 0: not compared (why says why)
  const char* why = "";
};

bool bf16_analyses_ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool has(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

Rule rule_for(const std::string& table, const std::string& column, int blocks) {
  // Not continuous in the activations: no bound exists.
  if (has(column, "ambiguous") || column == "full_mean" ||
      ((bf16_analyses_ends_with(column, "rank_mean") ||
        bf16_analyses_ends_with(column, "rank_max_mean") ||
        bf16_analyses_ends_with(column, "rank_min_mean")) &&
       !has(column, "stable_rank")))
    return {0,
            "a numerical rank counts the singular values above a tolerance near float32's "
            "epsilon, and the effective rank weighs in all the small ones: at bf16 the "
            "forward's rounding lifts them to about u of the largest, so both count rounding "
            "(the rank analyses warn, which the test checks); the stable rank and the largest "
            "singular value, set by the large ones, are compared"};
  if (table == "anchors_heads" && column != "mean_entropy_mean" && column != "max_usage_mean")
    return {0,
            "an anchor assignment is an argmax: a token whose two best anchors are within "
            "the forward's error of each other may change anchor, and the coherence and the "
            "count of anchors used move by whole tokens; the soft assignment's entropy and "
            "the largest usage are compared"};
  if (table == "spectra_channels")
    return {0,
            "one channel's high-frequency share: in a channel whose variation across tokens "
            "is below u of its mean, bf16's rounding is most of that variation, so the share "
            "is undefined at bf16; the layers' share (spectra_layers) is compared"};
  if (table == "mask_heads" && (column == "count_mean" || column == "fraction_mean"))
    return {0, "entries counted above a threshold: one within ε of it can go either way"};
  if (table == "outliers_layers" && (column == "outliers_mean" || column == "outlier_share_mean" ||
                                     column == "outlier_mass_mean"))
    return {0,
            "tokens counted above a threshold (a factor of the median norm): one within ε of "
            "it can go either way; the norms themselves are compared"};
  if (table == "segmentation" && column != "tau")
    return {0,
            "the fewest tokens holding a share of the row's mass: a token whose weight is "
            "within ε of the cut can go either way, moving the kept share, its mass and the "
            "Jaccard index by whole tokens"};
  if ((table == "lens" || table == "lens_images") &&
      (has(column, "agrees") || has(column, "top1_mean") || has(column, "label_rank") ||
       has(column, "label_top1")))
    return {0,
            "a block's top-1 is an argmax: two classes within the forward's error of each "
            "other may swap; the probabilities and the KL are compared"};
  if (table == "feature_pca")
    return {0,
            "the foreground is a threshold on the first component: a token within ε of it "
            "flips, which changes the set the colours and their variances are fitted on"};
  if (table == "similarity" && column == "alike_mean")
    return {0, "tokens counted above a cosine of 0.5: one within ε of it can go either way"};
  // Continuous: κ, the conditioning.
  if (table == "rollout_summary")
    return {double(blocks), "a product of every layer's map: each brings its own ε"};
  if (column == "hsic") return {4, "degree 4 in the activations: two Gram matrices"};
  if (column == "cka") return {8, "HSIC over the square root of two HSICs: 4 + 4"};
  if (has(column, "stable_rank"))
    return {4, "a ratio of two squared norms (Frobenius over spectral)"};
  if (column == "support_mean")
    return {6,
            "exp of an entropy: its relative change is the entropy's change, at most "
            "ε·ln N, with ln N < 6 for the N ≤ 400 keys of these models"};
  if (has(column, "ratio") || has(column, "normalised") || has(column, "over_median") ||
      has(column, "chance"))
    return {2, "a ratio of two quantities, each within ε"};
  return {1, "a mean, maximum, norm, distance or entropy of one layer's values"};
}

class Bf16AgainstFp32 : public ::testing::TestWithParam<std::string> {};

TEST_P(Bf16AgainstFp32, EveryTableWithinItsTolerance) {
  ATTNLAB_SKIP_UNLESS_CPU_RUNS(at::kBFloat16);
  const std::string name = GetParam();
  const session::ModelChoice choice = session::choose_model(session::model_entry_request(
      std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo/" + name + ".safetensors"));
  const PrecisionRun fp32 = run_at(choice, at::kFloat);
  const PrecisionRun bf16 = run_at(choice, at::kBFloat16);
  // The one warning a bf16 run gives: the rank analyses say that their counts include the
  // forward's rounding. Any other is a failure.
  bool rank_warning = false;
  for (const std::string& w : bf16.warnings) {
    if (w.rfind("rank: the forward ran at bf16", 0) == 0) {
      rank_warning = true;
      continue;
    }
    if (w.rfind("map_rank: the forward ran at bf16", 0) == 0) continue;
    ADD_FAILURE() << name << " bf16 warning: " << w;
  }
  EXPECT_TRUE(rank_warning) << name;
  EXPECT_TRUE(fp32.warnings.empty()) << name << ": " << fp32.warnings.front();

  // ε for this model: its blocks, and a reduction length above any in the zoo (fc2's
  // 4·128 inputs, 196 keys).
  ASSERT_EQ(bf16.blocks, fp32.blocks);
  const double eps = bf16_forward_error(fp32.blocks, 4096);
  // The predictions: every logit within ε of the largest |logit| (κ = 1), and the top-1
  // class the same wherever fp32's margin between its two best classes is over 2ε of that
  // scale (closer margins are ties at bf16's resolution: either class is right).
  const double logit_scale = fp32.logits.abs().max().item<double>();
  const double dl = (bf16.logits - fp32.logits).abs().max().item<double>();
  std::printf("%-12s logits max |d| %.4f, bound %.4f (eps %.4f over %d blocks)\n", name.c_str(), dl,
              eps * logit_scale, eps, fp32.blocks);
  EXPECT_LE(dl, eps * logit_scale) << name;
  for (int64_t i = 0; i < fp32.logits.size(0); ++i) {
    const at::Tensor top2 = std::get<0>(fp32.logits[i].topk(2));
    const double margin = (top2[0] - top2[1]).item<double>();
    if (margin <= 2 * eps * logit_scale) continue;
    EXPECT_EQ(bf16.logits[i].argmax().item<int64_t>(), fp32.logits[i].argmax().item<int64_t>())
        << name << " image " << i << ": fp32's margin " << margin;
  }

  EXPECT_GE(fp32.tables.size(), 10u) << name;  // the comparison below is not empty
  std::map<std::string, const analysis::Table*> by_name;
  for (const analysis::Table& t : bf16.tables) by_name[t.name] = &t;
  for (const analysis::Table& t : fp32.tables) {
    const auto it = by_name.find(t.name);
    ASSERT_NE(it, by_name.end()) << name << ": bf16 run has no table " << t.name;
    const analysis::Table& u = *it->second;
    ASSERT_EQ(u.columns, t.columns) << name << " " << t.name;
    ASSERT_EQ(u.rows.size(), t.rows.size()) << name << " " << t.name;
    for (size_t c = t.key_columns; c < t.columns.size(); ++c) {
      const std::string& col = t.columns[c];
      if (col == "images" || bf16_analyses_ends_with(col, "_std")) continue;
      const Rule rule = rule_for(t.name, col, fp32.blocks);
      double scale = 0.0;
      std::vector<double> diffs;
      for (size_t r = 0; r < t.rows.size(); ++r) {
        const analysis::Cell &a = t.rows[r][c], &b = u.rows[r][c];
        if (!a.numeric() || !std::isfinite(a.number())) continue;
        ASSERT_TRUE(b.numeric()) << name << " " << t.name << "." << col << " row " << r;
        scale = std::max(scale, std::abs(a.number()));
        diffs.push_back(std::abs(a.number() - b.number()));  // NaN in bf16 fails below
      }
      if (diffs.empty()) continue;
      std::sort(diffs.begin(), diffs.end(), [](double x, double y) {
        return std::isnan(y) ? !std::isnan(x) : x < y;  // NaN last: the largest
      });
      const double worst = diffs.back();
      const double bound = rule.kappa * eps * scale;
      std::printf("%-12s %-20s %-30s max |d| %-9.3g scale %-9.3g bound %s\n", name.c_str(),
                  t.name.c_str(), col.c_str(), worst, scale,
                  rule.kappa > 0 ? std::to_string(bound).c_str() : "(not compared)");
      if (rule.kappa > 0) {
        EXPECT_LE(worst, bound) << name << " " << t.name << "." << col << " (scale " << scale
                                << ", kappa " << rule.kappa << ": " << rule.why << ")";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, Bf16AgainstFp32, ::testing::ValuesIn(zoo_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace attnlab::testing
