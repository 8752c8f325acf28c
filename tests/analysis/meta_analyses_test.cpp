// Every registered analysis on LibTorch's `meta` device (issue 28; tests/support/
// meta_device.h), on every zoo architecture (every registered mechanism) and the hierarchical
// presets: the analysis session's per-image step and its explanation step (Grad-CAM,
// gradient rollout, ERF, head ablation, faithfulness) run on a meta forward result and a
// meta model. Statistics end in values (a table cell is a number), so most analyses stop
// where they first read one; what the test asserts is that none mixes devices before that
// (or anywhere in those that run to the end). The outcome of each analysis is printed.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "app/session/analysis_session.h"
#include "core/nn/initial_values.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/fixtures.h"
#include "tests/support/meta_device.h"

namespace attnlab::testing {
namespace {

struct MetaModel {
  std::string name;
  models::Json config;
};

// gtest prints a parameter with this (not its bytes).
void PrintTo(const MetaModel& m, std::ostream* os) {
  *os << m.name;
}

std::vector<MetaModel> meta_models() {
  std::vector<MetaModel> out;
  std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo/zoo.json");
  const models::Json zoo = models::Json::parse(in);
  for (const auto& m : zoo["models"])
    out.push_back({"zoo_" + m["name"].get<std::string>(), m["config"]});
  for (const char* p : {"litv2_s", "ravlt_t", "deit_tiny_distilled_patch16_224"})
    out.push_back({p, models::find_preset(p).config});
  return out;
}

class EveryAnalysisOnMeta : public ::testing::TestWithParam<MetaModel> {};

TEST_P(EveryAnalysisOnMeta, NoAnalysisMixesDevices) {
  const MetaModel& mm = GetParam();
  std::shared_ptr<models::Backbone> model;
  {
    const nn::WeightsToBeLoaded uninitialised;  // their values never matter on meta
    model = models::make_backbone(mm.config);
  }
  model->eval();
  move_to_meta(*model);
  const int64_t size = mm.config.value("img_size", int64_t(224));
  const at::Tensor image = meta_tensor({1, 3, size, size});
  for (const session::AnalysisInfo& a : session::analyses()) {
    if (!a.add && !a.explain) continue;
    session::AnalysisSettings settings;
    settings.analyses = {a.name};
    session::AnalysisSession s(settings, nullptr);
    MetaOutcome o = meta_outcome([&] {
      models::ForwardResult r;
      {
        const at::NoGradGuard no_grad;
        r = model->run(image, settings.forward_options());
      }
      s.add("img", r);
      if (s.explains()) s.explain("img", *model, image);
    });
    std::printf("%-34s %-14s %s\n", mm.name.c_str(), a.name.c_str(), o.describe().c_str());
    EXPECT_NE(o.kind, MetaOutcome::DeviceMixed) << mm.name << " " << a.name << ": " << o.describe();
    EXPECT_NE(o.kind, MetaOutcome::OtherError) << mm.name << " " << a.name << ": " << o.describe();
    for (const std::string& w : s.warnings())  // an error a step turned into a warning
      EXPECT_NE(classify_meta_error(w).kind, MetaOutcome::DeviceMixed) << mm.name << " " << w;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EveryAnalysisOnMeta, ::testing::ValuesIn(meta_models()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace attnlab::testing
