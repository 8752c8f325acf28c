// The `feature_pca` analysis (app/session/analyses/feature_pca.cpp) through the session on
// a small DeiT whose final-norm tokens are set by hand (a central object on a noisy
// background, a huge cls token that must not count): shapes, black exactly outside the
// mask, the same image under two tags coloured the same in one fit, the options' effect
// (threshold 0 and 1, no mask, --pca-layer), the fallback to the last selected layer on a
// model that records no final-norm tokens; and `attnlab analyze` / `report` writing the
// arrays, the table and the figure.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/io/npy.h"
#include "models/model_registry.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace attnlab::testing {
namespace {

namespace fs = std::filesystem;

// A 2-block DeiT at 32 px with 8 px patches: a 4×4 grid after the cls token, C = 32.
models::Json fpca_analysis_config(bool cls) {
  return {{"arch", "vit"},    {"img_size", 32},     {"patch_size", 8},
          {"embed_dim", 32},  {"depth", 2},         {"num_heads", 2},
          {"num_classes", 5}, {"class_token", cls}, {"attention", "softmax"}};
}

// The final norm's tokens (1, 17, 32): noise of std 0.05 everywhere, 5 along channel 0 on
// the central 2×2 grid cells (the object), and a cls token of 100 along channel 1 which,
// if it were read as a grid token, would dominate the first component.
at::Tensor fpca_analysis_tokens(int64_t seed) {
  at::manual_seed(seed);
  at::Tensor t = 0.05 * at::randn({1, 17, 32});
  for (int64_t y : {1, 2})
    for (int64_t x : {1, 2}) t[0][1 + y * 4 + x][0] += 5.0;
  t[0][0].zero_();
  t[0][0][1] = 100.0;
  return t;
}

struct FpcaRun {
  std::map<std::string, analysis::Array> arrays;
  std::vector<analysis::Table> tables;
  std::vector<std::string> warnings;
};

// The analysis on the DeiT's forward with out.norm replaced by `tokens[i]` for image tag i.
FpcaRun fpca_analysis_run(const std::vector<std::pair<std::string, at::Tensor>>& images,
                          session::OptionValues options = {}, bool cls = true,
                          std::vector<int64_t> layers = {}) {
  at::manual_seed(4);
  auto model = models::make_backbone(fpca_analysis_config(cls));
  model->eval();
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses("feature_pca");
  s.options = std::move(options);
  s.layers = std::move(layers);
  at::NoGradGuard no_grad;
  models::ForwardResult r = model->run(at::randn({1, 3, 32, 32}), s.forward_options());
  FpcaRun out;
  session::AnalysisSession session(s, [&](const analysis::Array& a) { out.arrays[a.name] = a; });
  for (const auto& [tag, tokens] : images) {
    if (tokens.defined()) r.outputs["out.norm"] = tokens;
    session.add(tag, r);
  }
  session.finish();
  out.tables = session.tables();
  out.warnings = session.warnings();
  return out;
}

const analysis::Table& fpca_analysis_table(const FpcaRun& run) {
  for (const auto& t : run.tables)
    if (t.name == "feature_pca") return t;
  throw std::runtime_error("no feature_pca table");
}

double fpca_analysis_value(const analysis::Table& t, const std::string& image,
                           const std::string& column) {
  for (const auto& row : t.rows)
    if (row[0].str() == image) return row[t.column(column)].number();
  throw std::runtime_error("no row for " + image);
}

int64_t fpca_analysis_count(const analysis::Array& fg) {
  int64_t n = 0;
  for (float v : fg.data) n += v > 0.5f;
  return n;
}

TEST(FeaturePcaAnalysis, ShapesMaskAndBlackBackground) {
  const FpcaRun run = fpca_analysis_run({{"img", fpca_analysis_tokens(1)}});
  ASSERT_TRUE(run.warnings.empty()) << run.warnings.front();
  const analysis::Array& rgb = run.arrays.at("feature_pca__img__rgb");
  const analysis::Array& fg = run.arrays.at("feature_pca__img__foreground");
  EXPECT_EQ(rgb.shape, (std::vector<int64_t>{4, 4, 3}));  // 16 grid tokens: cls left out
  EXPECT_EQ(fg.shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(rgb.axes, (std::vector<std::string>{"y", "x", "rgb"}));
  double lit = 0;
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x) {
      const size_t i = size_t(y * 4 + x);
      const bool centre = y >= 1 && y <= 2 && x >= 1 && x <= 2;
      EXPECT_EQ(fg.data[i], centre ? 1.0f : 0.0f) << y << "," << x;
      for (size_t c = 0; c < 3; ++c) {
        const float v = rgb.data[i * 3 + c];
        // The background is set to 0 (not computed), and colours are scaled into [0, 1].
        if (!centre) {
          EXPECT_EQ(v, 0.0f) << y << "," << x;
        }
        EXPECT_GE(v, 0.0f);
        EXPECT_LE(v, 1.0f);
        if (centre) lit += double(v);
      }
    }
  EXPECT_GT(lit, 0.0);  // min-max scaling puts each component's largest token at 1
  const analysis::Table& t = fpca_analysis_table(run);
  EXPECT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][t.column("tokens")].str(), "out.norm");
  EXPECT_DOUBLE_EQ(fpca_analysis_value(t, "img", "foreground_share_mean"), 4.0 / 16.0);
  EXPECT_DOUBLE_EQ(fpca_analysis_value(t, "img", "channels_mean"), 32.0);
  EXPECT_DOUBLE_EQ(fpca_analysis_value(t, "img", "threshold_mean"), 0.5);
  double explained = 0;
  for (const char* c : {"explained_pc1_mean", "explained_pc2_mean", "explained_pc3_mean"}) {
    EXPECT_GE(fpca_analysis_value(t, "img", c), 0.0) << c;
    explained += fpca_analysis_value(t, "img", c);
  }
  // Ratios of three of the four foreground tokens' eigenvalues to their sum: at most 1, up
  // to float64 rounding of the eigendecomposition (relative ~1e-15; 1e-12 is generous).
  EXPECT_LE(explained, 1.0 + 1e-12);
}

// One fit over all images: the same tokens under two tags (and another image beside them)
// are one computation on identical bytes, so their colours are identical.
TEST(FeaturePcaAnalysis, TheSameImageTwiceGetsTheSameColours) {
  const at::Tensor a = fpca_analysis_tokens(1);
  const FpcaRun run =
      fpca_analysis_run({{"a", a}, {"other", fpca_analysis_tokens(2)}, {"b", a.clone()}});
  const auto& ra = run.arrays.at("feature_pca__a__rgb");
  const auto& rb = run.arrays.at("feature_pca__b__rgb");
  EXPECT_EQ(ra.data, rb.data);
  EXPECT_EQ(run.arrays.at("feature_pca__a__foreground").data,
            run.arrays.at("feature_pca__b__foreground").data);
  const analysis::Table& t = fpca_analysis_table(run);
  EXPECT_EQ(t.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(fpca_analysis_value(t, "other", "images_fitted_mean"), 3.0);
  // The explained ratios are the basis's: the same on every row.
  EXPECT_EQ(fpca_analysis_value(t, "a", "explained_pc1_mean"),
            fpca_analysis_value(t, "other", "explained_pc1_mean"));
}

TEST(FeaturePcaAnalysis, TheOptionsReachIt) {
  const std::vector<std::pair<std::string, at::Tensor>> one = {{"img", fpca_analysis_tokens(1)}};
  session::OptionValues zero;
  zero.set("pca-threshold", 0.0);
  // Scaled > 0: every token but the one at the minimum (noise breaks ties).
  FpcaRun run = fpca_analysis_run(one, zero);
  EXPECT_EQ(fpca_analysis_count(run.arrays.at("feature_pca__img__foreground")), 15);
  session::OptionValues all;
  all.set("pca-threshold", 1.0);
  // Nothing lies above the maximum: refused with a warning, nothing emitted.
  run = fpca_analysis_run(one, all);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("threshold"), std::string::npos) << run.warnings[0];
  EXPECT_TRUE(run.arrays.empty());
  all.set("pca-no-mask", true);  // no mask: the threshold does not matter
  run = fpca_analysis_run(one, all);
  EXPECT_EQ(fpca_analysis_count(run.arrays.at("feature_pca__img__foreground")), 16);
  EXPECT_DOUBLE_EQ(fpca_analysis_value(fpca_analysis_table(run), "img", "masked_mean"), 0.0);

  session::OptionValues layer;
  layer.set("pca-layer", "0");  // block 0's output, not the final norm
  run = fpca_analysis_run(one, layer);
  EXPECT_EQ(fpca_analysis_table(run).rows[0][1].str(), "out.blocks.0");
  EXPECT_EQ(run.arrays.at("feature_pca__img__rgb").shape, (std::vector<int64_t>{4, 4, 3}));
  for (const char* bad : {"2", "x"}) {
    layer.set("pca-layer", bad);
    run = fpca_analysis_run(one, layer);
    ASSERT_EQ(run.warnings.size(), 1u) << bad;
    EXPECT_NE(run.warnings[0].find("--pca-layer"), std::string::npos) << run.warnings[0];
    EXPECT_TRUE(run.arrays.empty()) << bad;
  }
}

// A global-pool DeiT records only its pooled features after the final norm: the tokens
// are the last selected layer's block output.
TEST(FeaturePcaAnalysis, WithoutFinalNormTokensTheLastSelectedLayer) {
  FpcaRun run = fpca_analysis_run({{"img", at::Tensor()}}, {}, /*cls=*/false, {0});
  EXPECT_EQ(fpca_analysis_table(run).rows[0][1].str(), "out.blocks.0");
  run = fpca_analysis_run({{"img", at::Tensor()}}, {}, /*cls=*/false);
  EXPECT_EQ(fpca_analysis_table(run).rows[0][1].str(), "out.blocks.1");
  EXPECT_EQ(run.arrays.at("feature_pca__img__foreground").shape, (std::vector<int64_t>{4, 4}));
}

TEST(FeaturePcaAnalysis, AnalyzeAndReportWriteArraysTableAndFigure) {
  TempDir dir("fpca_cli");
  const std::string ckpt = parity_dir() + "/deit_mini.safetensors";
  const std::string demo = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
  const std::string out = (dir.path / "a").string();
  auto r = run_cli("analyze --model " + ckpt + " --images " + demo + " " + demo +
                   " --analyses feature_pca --pca-threshold 0.4 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path arrays = fs::path(out) / "feature_pca";
  const auto rgb = io::read_npy((arrays / "deit_mini__feature_pca__demo__rgb.npy").string());
  const auto rgb2 = io::read_npy((arrays / "deit_mini__feature_pca__demo_2__rgb.npy").string());
  ASSERT_EQ(rgb.shape.size(), 3u);
  EXPECT_EQ(rgb.shape[2], 3);
  EXPECT_EQ(rgb.bytes, rgb2.bytes);  // the same picture twice in one fit: identical bytes
  EXPECT_TRUE(fs::exists(arrays / "deit_mini__feature_pca__demo__foreground.npy"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "deit_mini__feature_pca.csv"));
  const auto side = nlohmann::json::parse(read_text(out + "/deit_mini__settings.json"));
  EXPECT_EQ(side["settings"]["options"]["pca-threshold"], 0.4) << side["settings"].dump();
  EXPECT_EQ(side["settings"]["feature_pca"]["memory_limit_bytes"], int64_t(1) << 30);

  const std::string report = (dir.path / "r").string();
  r = run_cli("report --models " + ckpt + " --images " + demo +
              " --analyses feature_pca --formats png --dpi 60 --out " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(fs::path(report) / "figures" / "feature_pca__deit_mini.png")) << r.out;
}

}  // namespace
}  // namespace attnlab::testing
