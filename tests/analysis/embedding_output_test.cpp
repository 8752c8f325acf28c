// Models whose output is an embedding (DINO, DINOv2, CLIP's image tower) through the
// analysis session: the analyses of attention and tokens run as on any model, and each
// analysis that explains or scores a class is skipped with a note that says why, instead
// of explaining embedding channel 0 as if it were a class. Every registered analysis runs
// on DINOv2 with registers and on CLIP's tower: the only skips are those two reasons.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

TEST(EmbeddingOutput, ClassAnalysesAreSkippedWithTheReasonAndTheOthersRun) {
  const models::Json config = models::config_from_file(parity_dir() + "/dinov2_mini.config.json");
  auto model = models::make_backbone(config);
  model->eval();
  const int64_t side = config.at("img_size").get<int64_t>();
  session::AnalysisSettings settings;
  settings.analyses = {"maps", "entropy", "gradcam", "gradrollout", "faithfulness", "heads", "erf"};
  std::vector<analysis::Array> emitted;
  session::AnalysisSession session(settings, [&](const auto& a) { emitted.push_back(a); });
  const at::Tensor x = at::randn({1, 3, side, side});
  {
    at::NoGradGuard no_grad;
    session.add("img", model->run(x, settings.forward_options()), 0);
  }
  session.explain("img", *model, x);
  const std::vector<std::string> skipped = session.skipped();
  for (const std::string name : {"gradcam", "gradrollout", "faithfulness", "heads"}) {
    const bool said = std::any_of(skipped.begin(), skipped.end(), [&](const std::string& s) {
      return s.rfind(name + ": skipped, " + name + " needs class scores", 0) == 0 &&
             s.find("dinov2_vit's output is an embedding") != std::string::npos;
    });
    EXPECT_TRUE(said) << name << " was not skipped with the reason";
  }
  EXPECT_TRUE(session.warnings().empty());  // a skip, not a failure
  // What needs no class ran: the maps' and entropy's tables and the ERF.
  const auto tables = session.tables();
  for (const std::string name : {"entropy_layers", "maps_prefix", "erf"}) {
    const bool found = std::any_of(tables.begin(), tables.end(),
                                   [&](const analysis::Table& t) { return t.name == name; });
    EXPECT_TRUE(found) << name;
  }
  // No explanation was written for a class.
  for (const auto& t : tables) EXPECT_NE(t.name, "explanations");
}

// Every analysis (the opt-in ones included) on both kinds of embedding model: nothing
// fails, and whatever is skipped is skipped for a class the model does not have, for a
// capability its softmax attention does not offer (HiLo's branches, a KV buffer, ...) or
// for text it does not read (the prompts analysis).
TEST(EmbeddingOutput, EveryAnalysisRunsOrSaysWhyNot) {
  models::Json dinov2 = models::config_from_file(parity_dir() + "/dinov2_mini.config.json");
  dinov2["num_register_tokens"] = 2;
  const models::Json clip =
      models::config_from_file(parity_dir() + "/clip_visual_mini.config.json");
  for (const models::Json& config : {dinov2, clip}) {
    auto model = models::make_backbone(config);
    SCOPED_TRACE(model->arch());
    model->eval();
    const int64_t side = config.value("img_size", config.value("input_resolution", int64_t(0)));
    session::AnalysisSettings settings;
    for (const std::string& name : session::analysis_names()) settings.analyses.insert(name);
    session::AnalysisSession session(settings, [](const analysis::Array&) {});
    const at::Tensor x = at::randn({1, 3, side, side});
    {
      at::NoGradGuard no_grad;
      session.add("img", model->run(x, settings.forward_options()), 0);
    }
    session.explain("img", *model, x);
    EXPECT_TRUE(session.warnings().empty()) << session.warnings().front();
    for (const std::string& s : session.skipped())
      EXPECT_TRUE(s.find("needs class scores") != std::string::npos ||
                  s.find("no analysed layer offers") != std::string::npos ||
                  s.find("reads no text (a whole CLIP does)") != std::string::npos)
          << s;
    const auto tables = session.tables();
    for (const std::string name :
         {"outliers_layers", "locality_layers", "map_rank_layers", "entropy_layers", "erf"}) {
      const bool found = std::any_of(tables.begin(), tables.end(),
                                     [&](const analysis::Table& t) { return t.name == name; });
      EXPECT_TRUE(found) << name;
    }
    // The registers are counted where there are some.
    for (const auto& t : tables) {
      if (t.name != "outliers_layers") continue;
      EXPECT_EQ(t.rows[0][t.column("registers_mean")].number(),
                model->arch() == "dinov2_vit" ? 2.0 : 0.0);
    }
  }
}

}  // namespace
}  // namespace attnlab::testing
