// The `merges` analysis (app/session/analyses/merges.cpp) on the ToMe fixture model
// (tome_vit_mini, r = 4 on an 8×8 grid): every layer's group map is the block's source
// matrix read per patch (the untraced forward's "source.blocks.i", recorded independently
// of the traces), the table's counts are those of the source matrix counted here with
// loops, a model that merges nothing skips the analysis with the reason, and `attnlab
// analyze --merge` / `report` write the arrays, the table and the figure.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/analysis/result_key.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

namespace fs = std::filesystem;

std::string merges_fixture() {
  return parity_dir() + "/tome_vit_mini";
}

std::shared_ptr<models::Backbone> merges_model(const models::Json& change = {}) {
  models::Json c = models::config_from_file(merges_fixture() + ".config.json");
  for (const auto& [k, v] : change.items()) {
    if (v.is_null())
      c.erase(k);
    else
      c[k] = v;
  }
  auto model = models::make_backbone(c);
  model->eval();
  models::load_checkpoint(*model, merges_fixture() + ".safetensors");
  return model;
}

struct MergesRun {
  std::map<std::string, analysis::Array> arrays;
  std::vector<analysis::Table> tables;
  std::vector<std::string> skipped;
};

MergesRun merges_run(models::Backbone& model, const at::Tensor& image) {
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses("merges");
  at::NoGradGuard no_grad;
  const models::ForwardResult r = model.run(image, s.forward_options());
  MergesRun out;
  session::AnalysisSession session(s, [&](const analysis::Array& a) { out.arrays[a.name] = a; });
  session.add("im", r);
  session.finish();
  out.tables = session.tables();
  out.skipped = session.skipped();
  return out;
}

TEST(MergesAnalysis, GroupsAreTheSourceMatrixPerPatch) {
  auto model = merges_model();
  at::manual_seed(21);
  const at::Tensor image = at::randn({1, 3, 32, 32});
  const MergesRun run = merges_run(*model, image);
  // The untraced forward's source matrices, (1, T_i, 65) after block i.
  models::ForwardOptions record;
  record.record_outputs = true;
  at::NoGradGuard no_grad;
  const auto plain = model->run(image, record);
  const analysis::Table* table = nullptr;
  for (const auto& t : run.tables)
    if (t.name == "merges_layers") table = &t;
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 4u);
  int64_t tokens_in = 65;
  for (int64_t i = 0; i < 4; ++i) {
    const at::Tensor source = plain.outputs.at("source.blocks." + std::to_string(i))[0];
    const int64_t tokens = source.size(0);
    const auto it =
        run.arrays.find(analysis::format_result_key({"merges", "im", i, "", "", "group"}));
    ASSERT_NE(it, run.arrays.end()) << "layer " << i;
    const analysis::Array& groups = it->second;
    ASSERT_EQ(groups.shape, (std::vector<int64_t>{8, 8}));
    std::vector<int64_t> count(static_cast<size_t>(tokens), 0);
    for (int64_t patch = 0; patch < 64; ++patch) {
      const auto g = static_cast<int64_t>(groups.data[static_cast<size_t>(patch)]);
      ASSERT_GE(g, 1) << "the class token (0) holds no patch";
      ASSERT_LT(g, tokens);
      EXPECT_EQ(source[g][1 + patch].item<double>(), 1.0) << "layer " << i << " patch " << patch;
      ++count[static_cast<size_t>(g)];
    }
    int64_t largest = 0, merged = 0;
    double mean_group = 0;
    for (int64_t patch = 0; patch < 64; ++patch) {
      const int64_t c = count[static_cast<size_t>(groups.data[static_cast<size_t>(patch)])];
      mean_group += double(c) / 64;
      merged += c > 1;
      largest = std::max(largest, c);
    }
    const auto& row = table->rows[static_cast<size_t>(i)];
    const auto col = [&](const std::string& name) {
      const auto at = std::find(table->columns.begin(), table->columns.end(), name);
      EXPECT_NE(at, table->columns.end()) << name;
      return row[static_cast<size_t>(at - table->columns.begin())].number();
    };
    EXPECT_EQ(col("tokens_in"), double(tokens_in));
    EXPECT_EQ(col("tokens_out_mean"), double(tokens));
    EXPECT_EQ(col("largest_group_mean"), double(largest));
    EXPECT_NEAR(col("mean_group_mean"), mean_group, 1e-12);
    EXPECT_NEAR(col("merged_share_mean"), double(merged) / 64, 1e-12);
    tokens_in = tokens;
  }
  EXPECT_EQ(tokens_in, 49);  // 65 − 4 blocks × r = 4
}

TEST(MergesAnalysis, AModelThatMergesNothingSaysSo) {
  auto model = merges_model({{"arch", "vit"}, {"r", nullptr}});
  at::manual_seed(22);
  const MergesRun run = merges_run(*model, at::randn({1, 3, 32, 32}));
  EXPECT_TRUE(run.arrays.empty());
  ASSERT_EQ(run.skipped.size(), 1u);
  EXPECT_NE(run.skipped[0].find("merges: skipped, no analysed layer offers merged tokens"),
            std::string::npos)
      << run.skipped[0];
}

TEST(MergesAnalysis, AnalyzeAndReportWithMerge) {
  // The fixture as a plain vit checkpoint, merged by the command line's --merge.
  TempDir dir("merges_cli");
  const std::string image = std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
  const std::string weights = merges_fixture() + ".safetensors";
  const auto analyzed =
      run_cli("analyze --model " + weights + " --merge 6 --images " + image + " --out " +
              dir.path.string() + "/an --analyses merges,maps,rollout");
  ASSERT_EQ(analyzed.code, 0) << analyzed.out;
  EXPECT_TRUE(
      fs::exists(dir.path.string() + "/an/merges/tome_vit_mini__merges__demo__L03__group.npy"))
      << analyzed.out;
  const auto reported =
      run_cli("report --models " + weights + " --merge 6 --images " + image + " --out " +
              dir.path.string() + "/rep --analyses merges --formats svg");
  ASSERT_EQ(reported.code, 0) << reported.out;
  EXPECT_TRUE(fs::exists(dir.path.string() + "/rep/figures/merges__tome_vit_mini__demo.svg"))
      << reported.out;
}

}  // namespace
}  // namespace attnlab::testing
