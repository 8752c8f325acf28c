// The segmentation analysis (app/session/analyses/segmentation.cpp) through the session:
// its masks are the readout row's fewest tokens holding tau of the mass, its Jaccard index
// is the hand count on the token grid when the ground truth is whole patches, a mask folder
// gives the same truth as the picture's foreground, and a model without a cls token is
// segmented from its mean query row. (The thresholding rule and the Jaccard index by
// themselves: attention_segmentation_test.cpp.)
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/attention_segmentation.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "models/model_registry.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

namespace fs = std::filesystem;

// A 32×32 DeiT in 8-pixel patches (a 4×4 grid after the cls token), two blocks.
std::shared_ptr<models::Backbone> seg_model(bool cls, const std::string& attention = "softmax") {
  models::Json c = {
      {"arch", "vit"}, {"img_size", 32}, {"patch_size", 8},  {"embed_dim", 32},
      {"depth", 2},    {"num_heads", 2}, {"num_classes", 5}, {"attention", attention}};
  if (!cls) c["class_token"] = false;
  at::manual_seed(4);
  auto model = models::make_backbone(c);
  model->eval();
  return model;
}

// A black picture with a bright square over pixels 8..23: exactly the grid's tokens
// (1..2, 1..2). Normalised as ImageNet's preprocessing would, so black is not zero.
at::Tensor square_picture() {
  at::manual_seed(7);
  at::Tensor rgb = at::zeros({1, 3, 32, 32});
  rgb.slice(2, 8, 24).slice(3, 8, 24).uniform_(0.3, 1.0);
  const at::Tensor mean = at::tensor({0.485f, 0.456f, 0.406f}).view({1, 3, 1, 1});
  const at::Tensor std = at::tensor({0.229f, 0.224f, 0.225f}).view({1, 3, 1, 1});
  return (rgb - mean) / std;
}

struct SegRun {
  std::map<std::string, analysis::Array> arrays;
  analysis::Table table;
  std::vector<std::string> warnings;
};

SegRun run_segmentation(models::Backbone& model, const at::Tensor& x, const std::string& truth,
                        const session::ImageSource& source) {
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses("segmentation");
  if (!truth.empty()) s.options.set("seg-truth", truth);
  at::NoGradGuard no_grad;
  const models::ForwardResult r = model.run(x, s.forward_options());
  SegRun out;
  session::AnalysisSession session(s, [&](const analysis::Array& a) { out.arrays[a.name] = a; });
  session.add("img", r, 0, source);
  for (const auto& t : session.tables())
    if (t.name == "segmentation") out.table = t;
  out.warnings = session.warnings();
  return out;
}

TEST(SegmentationAnalysis, TheMasksAreTheClsRowsFewestTokensWithAJaccardByHand) {
  auto model = seg_model(true);
  const at::Tensor x = square_picture();
  const SegRun run = run_segmentation(*model, x, "foreground", {"", &x, nullptr});
  ASSERT_TRUE(run.warnings.empty()) << run.warnings.front();
  const auto masks = run.arrays.find("segmentation__img__L01__cls__masks");
  const auto jaccard = run.arrays.find("segmentation__img__L01__cls__jaccard");
  ASSERT_NE(masks, run.arrays.end());
  ASSERT_NE(jaccard, run.arrays.end());
  ASSERT_EQ(masks->second.shape, (std::vector<int64_t>{3, 4, 4}));  // 2 heads + their mean

  // The same rows from the trace: the cls token's, thresholded at DINO's tau = 0.6.
  at::NoGradGuard no_grad;
  models::ForwardOptions fo;
  fo.trace_attention = true;
  const models::ForwardResult r = model->run(x, fo);
  const at::Tensor rows =
      analysis::query_map(*r.traces.back().trace, 0, 0).grid.to(at::kDouble).reshape({2, 16});
  const at::Tensor want = analysis::mass_threshold_mask(at::cat({rows, rows.mean(0, true)}), 0.6);
  // The truth is the 2×2 tokens (1..2, 1..2), whole patches: the pixel Jaccard index is
  // the count on the token grid.
  for (int64_t k = 0; k < 3; ++k) {
    double both = 0, either = 0;
    for (int64_t i = 0; i < 16; ++i) {
      const bool kept = masks->second.data[size_t(k * 16 + i)] > 0.5f;
      EXPECT_EQ(kept, want[k][i].item<bool>()) << "mask " << k << " token " << i;
      const int64_t y = i / 4, x_ = i % 4;
      const bool truth = y >= 1 && y <= 2 && x_ >= 1 && x_ <= 2;
      both += kept && truth;
      either += kept || truth;
    }
    // Integer counts in double: the ratio is computed once each way, so only its final
    // rounding differs (float32 storage of the array: 6e-8 relative).
    EXPECT_NEAR(jaccard->second.data[size_t(k)], both / either, 1e-6) << "mask " << k;
  }
  // The table: one row per layer and head, the kept tokens holding at least tau.
  ASSERT_EQ(run.table.rows.size(), 6u);  // 2 layers × (2 heads + mean)
  for (const auto& row : run.table.rows) {
    EXPECT_EQ(row.at(run.table.column("source")).str(), "cls");
    EXPECT_GE(row.at(run.table.column("mass_mean")).r, 0.6 - 1e-9);  // float32 rows summed
    EXPECT_GT(row.at(run.table.column("kept_mean")).r, 0.0);
    EXPECT_LE(row.at(run.table.column("jaccard_mean")).r, 1.0);
  }
}

TEST(SegmentationAnalysis, AMaskFolderGivesTheSameTruthAsTheForeground) {
  TempDir dir("seg_truth");
  // An 8-bit picture: black with a white square over pixels 8..23; its mask is itself.
  std::vector<uint8_t> pixels(32 * 32 * 3, 0);
  for (int y = 8; y < 24; ++y)
    for (int x = 8; x < 24; ++x)
      for (int c = 0; c < 3; ++c) pixels[size_t((y * 32 + x) * 3 + c)] = 255;
  const fs::path image = dir.path / "shirt.png";
  fs::create_directories(dir.path / "masks");
  io::save_png(image.string(), 32, 32, 3, pixels.data());
  io::save_png((dir.path / "masks" / "shirt.png").string(), 32, 32, 3, pixels.data());
  image::Preprocessing p;
  p.resize_short = 0;
  p.crop = 0;
  const at::Tensor x = image::preprocess(io::load_rgb_image(image.string()), p);
  auto model = seg_model(true);
  const session::ImageSource source{image.string(), &x, &p};
  const SegRun fg = run_segmentation(*model, x, "foreground", source);
  const SegRun folder = run_segmentation(*model, x, (dir.path / "masks").string(), source);
  ASSERT_TRUE(folder.warnings.empty()) << folder.warnings.front();
  const auto& a = fg.arrays.at("segmentation__img__L01__cls__jaccard").data;
  const auto& b = folder.arrays.at("segmentation__img__L01__cls__jaccard").data;
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(a[k], b[k]);  // the same pixels, counted

  // A folder without this image's mask: said, and no score.
  fs::remove(dir.path / "masks" / "shirt.png");
  const SegRun missing = run_segmentation(*model, x, (dir.path / "masks").string(), source);
  ASSERT_EQ(missing.warnings.size(), 1u);
  EXPECT_NE(missing.warnings[0].find("shirt.png"), std::string::npos) << missing.warnings[0];
  for (float v : missing.arrays.at("segmentation__img__L01__cls__jaccard").data)
    EXPECT_TRUE(std::isnan(v));
}

TEST(SegmentationAnalysis, AModelWithoutClsIsSegmentedFromItsMeanQueryRow) {
  auto model = seg_model(false);
  const at::Tensor x = square_picture();
  const SegRun run = run_segmentation(*model, x, "", {});
  ASSERT_TRUE(run.arrays.count("segmentation__img__L01__mean__masks"));
  for (const auto& row : run.table.rows) {
    EXPECT_EQ(row.at(run.table.column("source")).str(), "mean query");
    EXPECT_TRUE(std::isnan(row.at(run.table.column("jaccard_mean")).r));  // no truth asked
  }
}

TEST(SegmentationAnalysis, SignedRowsAreSegmentedByTheirPositivePart) {
  auto model = seg_model(false, "hydra");
  const at::Tensor x = square_picture();
  const SegRun run = run_segmentation(*model, x, "foreground", {"", &x, nullptr});
  EXPECT_TRUE(run.warnings.empty()) << run.warnings.front();
  ASSERT_FALSE(run.table.rows.empty());
  for (const auto& row : run.table.rows) {
    EXPECT_EQ(row.at(run.table.column("source")).str(), "mean query (positive part)");
    // Tau of the positive part, or nothing kept where a row has no positive weight at all.
    const double mass = row.at(run.table.column("mass_mean")).r;
    const double kept = row.at(run.table.column("kept_mean")).r;
    EXPECT_TRUE(mass >= 0.6 - 1e-9 || (mass == 0 && kept == 0)) << mass << " " << kept;
  }
}

TEST(SegmentationAnalysis, TauOutsideItsRangeIsRefusedByName) {
  session::OptionValues o;
  EXPECT_THROW(o.set("seg-mass", 0.0), std::invalid_argument);
  EXPECT_THROW(o.set("seg-mass", 1.5), std::invalid_argument);
  o.set("seg-mass", 1.0);
  EXPECT_DOUBLE_EQ(o.real("seg-mass"), 1.0);
}

}  // namespace
}  // namespace attnlab::testing
