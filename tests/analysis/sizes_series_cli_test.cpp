// The commands around issue 26's sweeps, end to end on the shipped zoo: analyze-sizes writes
// each table once per input size with the size as its x, a "sizes" table with the tokens,
// and the figures against the size; analyze-series with cka compares every checkpoint with
// the final one (which is 1 with itself); report --img-sizes adds each model's sweep to
// the report; head-importance on a labelled set writes one row
// per head with the loss and accuracy columns. Usage errors exit 2 and write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/analysis/export.h"
#include "core/data/image_dataset.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_path.h"

namespace fs = std::filesystem;
using attnlab::analysis::read_table_csv;
using attnlab::testing::run_cli;

namespace {

const std::string kSizesSeriesCliRoot = ATTNLAB_SOURCE_DIR;
const std::string kSizesSeriesCliZoo = kSizesSeriesCliRoot + "/models/zoo";
const std::string kImages = kSizesSeriesCliRoot + "/assets/fashion-mnist/09-ankle-boot-00000.png " +
                            kSizesSeriesCliRoot + "/assets/fashion-mnist/00-t-shirt-top-00019.png";

std::vector<double> column(const attnlab::analysis::Table& t, const std::string& name) {
  std::vector<double> out;
  for (const auto& row : t.rows) out.push_back(row[t.column(name)].number());
  return out;
}

}  // namespace

TEST(AnalyzeSizes, EveryTableOncePerSizeWithTheSizeAsItsX) {
  const std::string out = attnlab::testing::unique_temp_path("sizes");
  const auto r = run_cli("--threads 2 analyze-sizes --model " + kSizesSeriesCliZoo +
                         "/softmax.safetensors --img-sizes 28,42 --analyses entropy,locality "
                         "--images " +
                         kImages + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto entropy = read_table_csv(out + "/softmax_sizes__entropy_layers_sizes.csv");
  std::set<double> sizes;
  for (const double s : column(entropy, "img_size")) sizes.insert(s);
  EXPECT_EQ(sizes, (std::set<double>{28, 42}));
  EXPECT_EQ(entropy.rows.size(), 2u * 4u);  // 4 layers at each size
  // The model's own patch 2: 14x14 = 196 tokens at 28 px, 21x21 = 441 at 42 px.
  const auto costs = read_table_csv(out + "/softmax_sizes__sizes.csv");
  EXPECT_EQ(column(costs, "first_layer_tokens"), (std::vector<double>{196, 441}));
  EXPECT_EQ(column(costs, "images"), (std::vector<double>{2, 2}));
  for (const char* f : {"entropy_sizes.svg", "entropy_sizes.pdf", "locality_sizes.svg"})
    EXPECT_TRUE(fs::exists(out + "/softmax_sizes__" + f)) << f;
  EXPECT_TRUE(fs::exists(out + "/softmax_sizes__settings.json"));
  fs::remove_all(out);
}

TEST(AnalyzeSizes, UsageErrorsWriteNothing) {
  const std::string out = attnlab::testing::unique_temp_path("sizes_bad");
  for (const std::string extra :
       {"--img-sizes 28", "--img-sizes 28,42 --img-size 56", "--img-sizes 28,40x44", ""}) {
    const auto r = run_cli("analyze-sizes --model " + kSizesSeriesCliZoo + "/softmax.safetensors " +
                           extra + " --images " + kImages + " --out " + out);
    EXPECT_EQ(r.code, 2) << extra << ": " << r.out;
    EXPECT_FALSE(fs::exists(out)) << extra;
  }
}

TEST(ReportSizes, EachModelsSweepGoesIntoTheReport) {
  const std::string out = attnlab::testing::unique_temp_path("report_sizes");
  const auto r = run_cli("--threads 2 report --models " + kSizesSeriesCliZoo +
                         "/softmax.safetensors " + kSizesSeriesCliZoo +
                         "/linear.safetensors --img-sizes 28,42 --analyses entropy,locality "
                         "--figures entropy,locality --formats svg --complexity-scales none "
                         "--images " +
                         kImages + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string model : {"softmax", "linear"}) {
    const auto entropy =
        read_table_csv(out + "/stats/" + model + "_sizes__entropy_layers_sizes.csv");
    EXPECT_EQ(entropy.rows.size(), 2u * 4u) << model;  // 4 layers at each of the 2 sizes
    const auto costs = read_table_csv(out + "/stats/" + model + "_sizes__sizes.csv");
    EXPECT_EQ(column(costs, "img_size"), (std::vector<double>{28, 42})) << model;
    for (const std::string kind : {"entropy", "locality"})
      EXPECT_TRUE(fs::exists(out + "/figures/" + kind + "__" + model + "_sizes.svg"))
          << model << " " << kind;
  }
  // A size a model cannot take is reported, and the rest of the report is still written.
  const std::string bad = attnlab::testing::unique_temp_path("report_sizes_bad");
  const auto b = run_cli("report --models " + kSizesSeriesCliZoo +
                         "/softmax.safetensors --img-sizes 28,29 "
                         "--analyses entropy --figures entropy --formats svg "
                         "--complexity-scales none --images " +
                         kImages + " --out " + bad);
  EXPECT_EQ(b.code, 1) << b.out;
  EXPECT_NE(b.out.find("resolution sweep of softmax"), std::string::npos) << b.out;
  EXPECT_TRUE(fs::exists(bad + "/index.html"));
  fs::remove_all(out);
  fs::remove_all(bad);
}

TEST(SeriesCka, EveryCheckpointIsComparedWithTheFinalOne) {
  const std::string out = attnlab::testing::unique_temp_path("series_cka");
  const std::string series = kSizesSeriesCliZoo + "/castling_series/";
  const auto r =
      run_cli("--threads 2 analyze-series --checkpoints " + series + "step_000000.safetensors " +
              series + "step_000450.safetensors " + series +
              "step_000937.safetensors --analyses cka --images " + kImages + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto t = read_table_csv(out + "/castling_series__cka_final_series.csv");
  ASSERT_EQ(t.rows.size(), 3u * 4u);
  for (const auto& row : t.rows) {
    const double cka = row[t.column("cka")].number();
    if (row[t.column("step")].number() == 937) {
      EXPECT_NEAR(cka, 1.0, 1e-9);  // a layer with itself: H / sqrt(H·H), float64
    } else {
      EXPECT_TRUE(std::isfinite(cka));
      EXPECT_LT(cka, 1.0);  // another checkpoint's layer is not the same representation
    }
  }
  fs::remove_all(out);
}

TEST(HeadImportanceCli, OneRowPerHeadWithLossAndAccuracy) {
  if (attnlab::data::fashion_mnist_dir().empty())
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string out = attnlab::testing::unique_temp_path("heads");
  const auto r = run_cli("--threads 2 head-importance --model " + kSizesSeriesCliZoo +
                         "/softmax.safetensors --dataset fashion-mnist:test --limit 20 "
                         "--batch 8 --out " +
                         out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto t = read_table_csv(out + "/softmax__head_importance.csv");
  ASSERT_EQ(t.rows.size(), 8u);  // 4 layers x 2 heads
  for (const auto& row : t.rows) {
    EXPECT_EQ(row[t.column("images")].number(), 20);
    EXPECT_TRUE(std::isfinite(row[t.column("loss_increase_mean")].number()));
    const double kept = row[t.column("top1_kept_mean")].number();
    EXPECT_GE(kept, 0.0);
    EXPECT_LE(kept, 1.0);
  }
  for (const char* f : {"head_importance.svg", "head_importance_loss.pdf", "settings.json"})
    EXPECT_TRUE(fs::exists(out + "/softmax__" + f)) << f;
  const auto bad = run_cli("head-importance --model " + kSizesSeriesCliZoo +
                           "/softmax.safetensors --out " + out + "_bad");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_FALSE(fs::exists(out + "_bad"));
  fs::remove_all(out);
}
