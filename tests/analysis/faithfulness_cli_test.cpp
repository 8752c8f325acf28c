// `attnlab faithfulness` end to end: on two trained zoo models every map kind they can make
// is scored on every image (per-image, per-step and summary tables), the randomisation check flags the
// maps that ignore the weights (centre prior, random map) and passes Grad-CAM; on
// hierarchical models (LITv2, Swin, RAVLT; random weights) the cells are the first
// attention layer's grid, a model with prefix tokens gives its cls map, and a cls map asked
// of a model without a class token is one clear message; the report's faithfulness section
// draws the scoreboard and the curves across models;
// usage errors exit 2 and write nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "core/analysis/export.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace fs = std::filesystem;
using attnlab::analysis::read_table_csv;
using attnlab::testing::run_cli;

namespace {

// One thread each: these commands run hundreds of tiny forwards, which two threads per
// process slow down many times over when ctest runs two tests at once (the CI runs -j2).
const std::string kRoot = ATTNLAB_SOURCE_DIR;
const std::string kZoo = kRoot + "/models/zoo";
const std::string kImage1 = kRoot + "/assets/fashion-mnist/09-ankle-boot-00000.png";
const std::string kImage2 = kRoot + "/assets/fashion-mnist/08-bag-00030.png";

// (model, map) -> the summary row's value of `column`.
std::map<std::pair<std::string, std::string>, double> by_model_map(
    const attnlab::analysis::Table& t, const std::string& column) {
  std::map<std::pair<std::string, std::string>, double> out;
  for (const auto& row : t.rows)
    out[{row[t.column("model")].str(), row[t.column("map")].str()}] = row[t.column(column)].number();
  return out;
}

}  // namespace

TEST(FaithfulnessCli, ScoresEveryMapOfEveryModelAndFlagsMapsThatIgnoreTheWeights) {
  const std::string out = attnlab::testing::unique_temp_path("faith");
  const auto r = run_cli("--threads 1 faithfulness --models " + kZoo + "/softmax.safetensors " +
                         kZoo + "/linear.safetensors --images " + kImage1 + " " + kImage2 +
                         " --step 0.1 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto images = read_table_csv(out + "/faithfulness__faithfulness_images.csv");
  // The zoo's ViTs pool their tokens (no class token): the cls map is left out with a note,
  // the other five kinds are scored.
  EXPECT_NE(r.out.find("note: softmax: cls: the cls map needs a class token"), std::string::npos)
      << r.out;
  EXPECT_EQ(images.rows.size(), 2u * 5u * 2u);  // models x map kinds x images
  const auto curves = read_table_csv(out + "/faithfulness__faithfulness_curves.csv");
  EXPECT_EQ(curves.rows.size(), 2u * 5u * 2u * 11u);  // 11 steps of 10 %
  const auto summary = read_table_csv(out + "/faithfulness__faithfulness.csv");
  EXPECT_EQ(summary.rows.size(), 2u * 5u);
  for (const auto& [key, v] : by_model_map(summary, "auc_deletion_mean")) {
    EXPECT_GE(v, 0.0) << key.first << " " << key.second;
    EXPECT_LE(v, 1.0) << key.first << " " << key.second;
  }
  EXPECT_TRUE(fs::exists(out + "/faithfulness__faithfulness.tex"));
  // Randomisation: a map that does not depend on the weights is flagged, Grad-CAM of a
  // trained model is not.
  const auto flags = by_model_map(
      read_table_csv(out + "/faithfulness__faithfulness_randomisation_summary.csv"), "flagged");
  for (const std::string model : {"softmax", "linear"}) {
    EXPECT_EQ(flags.at({model, "centre"}), 1.0) << model;
    EXPECT_EQ(flags.at({model, "random"}), 1.0) << model;
    EXPECT_EQ(flags.at({model, "gradcam"}), 0.0) << model;
  }
  EXPECT_TRUE(fs::exists(out + "/faithfulness__settings.json"));
  for (const char* f : {"faithfulness_curves.svg", "faithfulness_curves.pdf",
                        "faithfulness_scoreboard.png", "faithfulness_scoreboard.svg"})
    EXPECT_TRUE(fs::exists(out + "/faithfulness__" + f)) << f;
  fs::remove_all(out);
}

TEST(FaithfulnessCli, HierarchicalModelsUseTheirFirstAttentionGrid) {
  const std::string out = attnlab::testing::unique_temp_path("faith_h");
  const std::string p = attnlab::testing::parity_dir();
  const auto r = run_cli("--threads 1 faithfulness --models " + p + "/litv2_mini.config.json " +
                         p + "/swin_mini.config.json " + p + "/ravlt_mini.config.json --images " +
                         kImage1 + " --maps rollout,gradcam,random --step 0.25 "
                         "--randomisation off --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto curves = read_table_csv(out + "/faithfulness__faithfulness_curves.csv");
  EXPECT_EQ(curves.rows.size(), 3u * 3u * 5u);  // models x maps x 5 steps of 25 %
  const auto images = read_table_csv(out + "/faithfulness__faithfulness_images.csv");
  EXPECT_EQ(images.rows.size(), 3u * 3u);
  // A model with prefix tokens (AnchorDeiT: cls and dist): its cls map is the class token's
  // row; the cells are its 14 x 14 patch grid.
  const std::string prefix = attnlab::testing::unique_temp_path("faith_prefix");
  const auto pr = run_cli("--threads 1 faithfulness --models " + p + "/anchor_deit_mini.config.json "
                          "--images " + kImage1 + " --maps cls,rollout,gradrollout --step 0.25 "
                          "--out " + prefix);
  ASSERT_EQ(pr.code, 0) << pr.out;
  EXPECT_EQ(read_table_csv(prefix + "/faithfulness__faithfulness_images.csv").rows.size(), 3u);
  EXPECT_EQ(read_table_csv(prefix + "/faithfulness__faithfulness_randomisation.csv").rows.size(),
            3u * 2u);  // the top block and both blocks (2 blocks: the half is the top one)
  fs::remove_all(prefix);
  // A cls map asked of models without a class token: one message per model, exit 1.
  const std::string bad = attnlab::testing::unique_temp_path("faith_cls");
  const auto c = run_cli("--threads 1 faithfulness --models " + p + "/swin_mini.config.json --images " +
                         kImage1 + " --maps cls,random --step 0.5 --randomisation off --out " + bad);
  EXPECT_EQ(c.code, 1) << c.out;
  EXPECT_NE(c.out.find("the cls map needs a class token"), std::string::npos) << c.out;
  EXPECT_EQ(read_table_csv(bad + "/faithfulness__faithfulness_images.csv").rows.size(), 1u);
  fs::remove_all(out);
  fs::remove_all(bad);
}

TEST(FaithfulnessCli, TheReportDrawsTheScoreboardAndTheCurvesAcrossModels) {
  const std::string out = attnlab::testing::unique_temp_path("faith_report");
  const auto r = run_cli("--threads 1 report --models " + kZoo + "/softmax.safetensors " + kZoo +
                         "/rala.safetensors --images " + kImage1 + " --analyses faithfulness "
                         "--figures faithfulness --formats svg --complexity-scales none --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"faithfulness_scoreboard.svg", "faithfulness_curves.svg"})
    EXPECT_TRUE(fs::exists(out + "/figures/" + f)) << f;
  const auto softmax = read_table_csv(out + "/stats/softmax__faithfulness.csv");
  EXPECT_EQ(softmax.rows.size(), 5u);  // rollout, gradcam, gradrollout, random, centre
  EXPECT_TRUE(fs::exists(out + "/stats/rala__faithfulness_curves.csv"));
  // The randomisation check, per map kind and cascade level (1, 2 and 4 of the 4 blocks):
  // the centre prior ignores the weights (correlation 1 at every level), gradient rollout
  // does not stay at 1 with every block re-initialised.
  const auto checks = read_table_csv(out + "/stats/softmax__faithfulness_randomisation.csv");
  EXPECT_EQ(checks.rows.size(), 5u * 3u);
  const size_t map = checks.column("map"), blocks = checks.column("blocks"),
               rho = checks.column("spearman_mean");
  for (const auto& row : checks.rows) {
    if (row[map].str() == "centre") {
      EXPECT_DOUBLE_EQ(row[rho].number(), 1.0);
    } else if (row[map].str() == "gradrollout" && row[blocks].number() == 4) {
      EXPECT_LT(row[rho].number(), 0.9);
    }
  }
  const std::string svg = attnlab::testing::read_text(out + "/figures/faithfulness_curves.svg");
  EXPECT_NE(svg.find("top blocks re-initialised"), std::string::npos);
  fs::remove_all(out);
}

TEST(FaithfulnessCli, UsageErrorsWriteNothing) {
  const std::string out = attnlab::testing::unique_temp_path("faith_bad");
  const std::string model = " --models " + kZoo + "/softmax.safetensors";
  for (const std::string& args :
       {"--images " + kImage1 + " --out " + out,  // no model
        model + " --images " + kImage1,           // no --out
        model + " --out " + out,                  // no images
        model + " --images " + kImage1 + " --dataset fashion-mnist:test --out " + out,
        model + " --images " + kImage1 + " --maps saliency --out " + out,
        model + " --images " + kImage1 + " --baseline noise --out " + out,
        model + " --images " + kImage1 + " --step 0 --out " + out,
        model + " --images " + kImage1 + " --randomisation maybe --out " + out}) {
    const auto r = run_cli("faithfulness " + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  // Labels that cannot be had: one message naming the problem, nothing written.
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {" --dataset folder:" + kRoot + "/assets/fashion-mnist",  // images, no class folders
            "has no class sub-directory with images"},
           {" --dataset folder:" + out + "_none", "is not a directory"},
           {" --dataset imagenet:val", "unknown dataset 'imagenet:val'"}}) {
    const auto r = run_cli("--threads 1 faithfulness" + model + args + " --out " + out);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << ": " << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}
