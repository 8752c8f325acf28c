// The logit lens analysis end to end: `analyze --analyses lens` writes its tables (the last
// block's KL 0 and agreement 1 by construction, the label's rank and probability in range),
// an out-of-range label is refused by name, an embedding model is skipped with the reason,
// and the figure draws KL and agreement per model. (`attnlab probe`: probe_cli_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/analysis/export.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "viz/figures/lens.h"

namespace attnlab::testing {
namespace {

namespace fs = std::filesystem;

std::string lens_source(const std::string& rel) {
  return std::string(ATTNLAB_SOURCE_DIR) + "/" + rel;
}

double cell(const analysis::Table& t, size_t row, const std::string& column) {
  return t.rows.at(row).at(t.column(column)).number();
}

TEST(LensAnalysis, AnalyzeWritesItsTablesOnDeitMini) {
  TempDir out("lens");
  const auto r = run_cli("analyze --model " + parity_dir() + "/deit_mini.safetensors --images " +
                         lens_source("assets/demo.png") + " " + lens_source("assets/demo.png") +
                         " --out " + out.path.string() + " --analyses lens --lens-label 3");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto t = analysis::read_table_csv(out.file("deit_mini__lens.csv"));
  ASSERT_EQ(t.rows.size(), 2u);  // deit_mini's two blocks
  EXPECT_EQ(t.rows[1].at(t.column("block")).str(), "blocks.1");
  // The last block is the model's own output: its KL is exactly 0 (log p minus itself) and
  // its top-1 agrees with itself; the CSV prints them as they are.
  EXPECT_EQ(cell(t, 1, "kl_mean"), 0.0);
  EXPECT_EQ(cell(t, 1, "agrees_mean"), 1.0);
  EXPECT_EQ(cell(t, 1, "images"), 2.0);
  for (size_t row = 0; row < 2; ++row) {
    EXPECT_GE(cell(t, row, "kl_mean"), 0.0);
    const double rank = cell(t, row, "label_rank_mean");  // a label was given: 1..10
    EXPECT_TRUE(rank >= 1 && rank <= 10) << rank;
    const double p = cell(t, row, "label_probability_mean");
    EXPECT_TRUE(p >= 0 && p <= 1) << p;
  }
  const auto images = analysis::read_table_csv(out.file("deit_mini__lens_images.csv"));
  EXPECT_EQ(images.rows.size(), 4u);  // 2 images x 2 blocks
  const auto bad = run_cli("analyze --model " + parity_dir() + "/deit_mini.safetensors --images " +
                           lens_source("assets/demo.png") + " --out " + out.file("bad") +
                           " --analyses lens --lens-label 10");
  EXPECT_NE(bad.out.find("--lens-label 10 is not a class"), std::string::npos) << bad.out;
}

TEST(LensAnalysis, AnEmbeddingModelIsSkippedWithTheReason) {
  TempDir out("lens_dino");
  const auto r =
      run_cli("analyze --model " + parity_dir() + "/dino_mini.safetensors --config " +
              parity_dir() + "/dino_mini.config.json --images " + lens_source("assets/demo.png") +
              " --out " + out.path.string() + " --analyses lens,entropy");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("output is an embedding"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out.file("dino_mini__lens.csv")));
}

TEST(LensAnalysis, TheFigureDrawsKlAndAgreementPerModel) {
  analysis::Table t;
  t.name = "lens";
  t.columns = {"layer", "block", "kl_mean", "agrees_mean", "label_top1_mean"};
  t.key_columns = 2;
  t.add_row({int64_t(0), "blocks.0", 2.0, 0.25, 0.5});
  t.add_row({int64_t(1), "blocks.1", 0.0, 1.0, 0.75});
  const auto f = viz::lens_figure({{"a", t}, {"b", t}});
  ASSERT_EQ(f.figure.panels.size(), 2u);
  // Per model: a KL line; an agreement line and the label's dashed accuracy.
  EXPECT_EQ(f.figure.panels[0].items.size(), 2u);
  EXPECT_EQ(f.figure.panels[1].items.size(), 4u);
  EXPECT_NE(f.caption.find("label (dashed)"), std::string::npos) << f.caption;
  analysis::Table empty = t;
  empty.rows.clear();
  EXPECT_THROW(viz::lens_figure({{"a", empty}}), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::testing
