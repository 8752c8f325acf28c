// Cancelling a running analysis session (the GUI's Cancel, issue 27): the long steps
// (faithfulness: batches of perturbed forwards per map kind; heads: one forward per head)
// stop where they are once the control says so, the session throws AnalysisCancelled
// instead of turning it into a warning, and an ablation stopped mid-way leaves the model's
// weights as they were.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "app/session/analysis_session.h"
#include "models/model_registry.h"

namespace models = attnlab::models;
namespace session = attnlab::session;

namespace {

std::shared_ptr<models::Backbone> tiny_vit() {
  const models::Json config = {{"arch", "vit"},   {"img_size", 32}, {"patch_size", 8},
                               {"embed_dim", 16}, {"depth", 2},     {"num_heads", 2},
                               {"num_classes", 4}};
  at::manual_seed(0);
  auto model = models::make_backbone(config);
  model->eval();
  return model;
}

// A session running `analysis` whose control cancels once progress reports `stop_at` done.
struct CancelAt {
  int64_t stop_at;
  std::vector<std::pair<int64_t, int64_t>> seen;  // every (done, total) reported
  session::AnalysisControl control() {
    return {[this] { return !seen.empty() && seen.back().first >= stop_at; },
            [this](int64_t done, int64_t total) { seen.emplace_back(done, total); }};
  }
};

session::AnalysisSettings only(const std::string& analysis) {
  session::AnalysisSettings s;
  s.analyses = {analysis};
  return s;
}

}  // namespace

TEST(AnalysisCancel, FaithfulnessStopsInsideTheNextMapKind) {
  auto model = tiny_vit();
  const at::Tensor image = at::randn({1, 3, 32, 32});
  // Uncancelled: every map kind is scored, progress runs to the end.
  CancelAt never{1000, {}};
  session::AnalysisSession full(only("faithfulness"), {}, never.control());
  full.explain("img", *model, image);
  ASSERT_FALSE(never.seen.empty());
  const int64_t kinds = never.seen.back().second;
  EXPECT_EQ(never.seen.back().first, kinds);
  EXPECT_GE(kinds, 5);
  ASSERT_FALSE(full.tables().empty());
  // Cancelled after the first kind: the second kind's first batch is never run, and the
  // session throws instead of warning.
  CancelAt early{1, {}};
  session::AnalysisSession s(only("faithfulness"), {}, early.control());
  EXPECT_THROW(s.explain("img", *model, image), session::AnalysisCancelled);
  ASSERT_FALSE(early.seen.empty());
  EXPECT_EQ(early.seen.back().first, 1);
  EXPECT_TRUE(s.warnings().empty()) << s.warnings().front();
}

TEST(AnalysisCancel, HeadAblationStopsAndRestoresTheHeads) {
  auto model = tiny_vit();
  const at::Tensor image = at::randn({1, 3, 32, 32});
  const at::Tensor before = model->run(image, {}).logits;
  CancelAt early{2, {}};
  session::AnalysisSession s(only("heads"), {}, early.control());
  EXPECT_THROW(s.explain("img", *model, image), session::AnalysisCancelled);
  ASSERT_FALSE(early.seen.empty());
  EXPECT_EQ(early.seen.back(), std::make_pair(int64_t(2), int64_t(4)));  // 2 layers × 2 heads
  // The head zeroed when the cancel came is back: the same forward gives the same logits
  // (the same computation on the same machine; 1e-6 leaves room for nothing else).
  EXPECT_TRUE(at::allclose(model->run(image, {}).logits, before, 1e-6, 1e-6));
}

TEST(AnalysisCancel, ACancelledSessionStartsNoAnalysis) {
  auto model = tiny_vit();
  const at::Tensor image = at::randn({1, 3, 32, 32});
  session::AnalysisSettings settings;
  settings.analyses = {"maps", "entropy"};
  int asked = 0;
  session::AnalysisSession s(settings, {}, {[&] { return ++asked > 0; }, {}});
  const models::ForwardResult r = model->run(image, settings.forward_options());
  EXPECT_THROW(s.add("img", r), session::AnalysisCancelled);
  EXPECT_EQ(s.images(), 0);
  EXPECT_TRUE(s.tables().empty());
}
