// AnalysisSession: statistics over an image set are streamed — the mean and std of a set
// equal those of the images analysed one by one, per-image arrays reach the sink as each
// image is added, and nothing the session keeps grows with the number of images.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "app/session/analysis_session.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "tests/support/fixtures.h"

namespace {

using attnlab::analysis::Table;
using attnlab::session::AnalysisSession;
using attnlab::session::AnalysisSettings;

std::shared_ptr<attnlab::models::Backbone> deit_mini() {
  const std::string dir = attnlab::testing::parity_dir();
  auto m =
      attnlab::models::load_model(attnlab::models::config_from_file(dir + "/deit_mini.config.json"),
                                  dir + "/deit_mini.safetensors")
          .model;
  m->eval();
  return m;
}

const Table& find(const std::vector<Table>& tables, const std::string& name) {
  for (const auto& t : tables)
    if (t.name == name) return t;
  throw std::runtime_error("no table " + name);
}

TEST(AnalysisSession, SetStatisticsEqualThoseOfSingleImages) {
  auto model = deit_mini();
  AnalysisSettings s;
  s.analyses = attnlab::session::parse_analyses("locality,rank,spectra");
  at::manual_seed(3);
  const at::Tensor a = at::randn({1, 3, 224, 224}), b = at::randn({1, 3, 224, 224});
  at::NoGradGuard no_grad;
  auto run = [&](std::vector<at::Tensor> images) {
    AnalysisSession session(s, nullptr);
    for (size_t i = 0; i < images.size(); ++i)
      session.add("img" + std::to_string(i), model->run(images[i], s.forward_options()));
    return session.tables();
  };
  const auto both = run({a, b}), only_a = run({a}), only_b = run({b});
  for (const char* name : {"locality_heads", "rank_layers", "spectra_layers"}) {
    const Table& t = find(both, name);
    const Table& ta = find(only_a, name);
    const Table& tb = find(only_b, name);
    ASSERT_EQ(t.rows.size(), ta.rows.size()) << name;
    const size_t n_values = (t.columns.size() - t.key_columns - 1) / 2;
    ASSERT_GT(n_values, 0u);
    for (size_t r = 0; r < t.rows.size(); ++r) {
      EXPECT_EQ(t.rows[r].back().i, 2) << name;  // images
      for (size_t v = 0; v < n_values; ++v) {
        const size_t mean_col = t.key_columns + 2 * v;
        const double x = ta.rows[r][mean_col].number(), y = tb.rows[r][mean_col].number();
        EXPECT_NEAR(t.rows[r][mean_col].number(), (x + y) / 2, 1e-9 * (1 + std::abs(x)))
            << name << " " << t.columns[mean_col];
        EXPECT_NEAR(t.rows[r][mean_col + 1].number(), std::abs(x - y) / 2, 1e-9 * (1 + std::abs(x)))
            << name << " " << t.columns[mean_col + 1];
      }
    }
  }
}

TEST(AnalysisSession, ArraysReachTheSinkPerImageAndStateDoesNotGrow) {
  auto model = deit_mini();
  AnalysisSettings s;
  s.analyses = attnlab::session::parse_analyses("maps,rollout,locality");
  std::vector<std::string> seen;
  AnalysisSession session(s,
                          [&](const attnlab::analysis::Array& arr) { seen.push_back(arr.name); });
  at::NoGradGuard no_grad;
  session.add("first", model->run(at::randn({1, 3, 224, 224}), s.forward_options()));
  const size_t per_image = seen.size();
  // 2 layers × (heads + fused) + the cls row of the last layer + rollout.
  EXPECT_EQ(per_image, 2u * 2u + 1u + 1u);
  const size_t rows_after_one = find(session.tables(), "locality_heads").rows.size();
  for (int i = 0; i < 3; ++i)
    session.add("more" + std::to_string(i),
                model->run(at::randn({1, 3, 224, 224}), s.forward_options()));
  EXPECT_EQ(seen.size(), 4 * per_image);
  EXPECT_EQ(find(session.tables(), "locality_heads").rows.size(), rows_after_one);
  EXPECT_EQ(session.images(), 4);
  EXPECT_TRUE(session.warnings().empty());
}

TEST(AnalysisSession, RefusesImagesOutsideTheBatchAndUnknownNames) {
  EXPECT_THROW(attnlab::session::parse_analyses("maps,nope"), std::invalid_argument);
  // "all" is every analysis but the opt-in ones (erf, heads), which run when named.
  size_t opt_in = 0;
  for (const auto& a : attnlab::session::analyses()) opt_in += a.opt_in;
  EXPECT_GT(opt_in, 0u);
  EXPECT_EQ(attnlab::session::parse_analyses("all").size(),
            attnlab::session::analysis_names().size() - opt_in);
  EXPECT_EQ(attnlab::session::parse_analyses("all,heads").count("heads"), 1u);
  auto model = deit_mini();
  AnalysisSettings s;
  s.analyses = {"locality"};
  AnalysisSession session(s, nullptr);
  at::NoGradGuard no_grad;
  const auto result = model->run(at::randn({2, 3, 224, 224}), s.forward_options());
  EXPECT_THROW(session.add("b", result, 2), std::invalid_argument);
  EXPECT_THROW(session.add("b", result, -1), std::invalid_argument);
  EXPECT_EQ(session.images(), 0);
}

// Images analysed out of one batched forward give what each gives through a forward of
// its own: the same arrays and the same mean/std tables. Not bit for bit: the batch's
// GEMMs are blocked differently, so floats agree to rounding (relative 1e-4, far above
// float32 rounding of these sums, far below any real difference). Integer cells (ranks,
// counts) agree exactly: a rank would change only with a singular value within rounding
// of its tolerance.
TEST(AnalysisSession, ImagesOfABatchGiveWhatEachGivesAlone) {
  auto model = deit_mini();
  AnalysisSettings s;
  s.analyses = attnlab::session::parse_analyses("maps,rollout,rank,spectra,locality");
  at::manual_seed(3);
  const at::Tensor images = at::randn({3, 3, 224, 224});
  std::map<std::string, attnlab::analysis::Array> alone_arrays, batch_arrays;
  AnalysisSession alone(s, [&](const auto& a) { alone_arrays[a.name] = a; });
  AnalysisSession batched(s, [&](const auto& a) { batch_arrays[a.name] = a; });
  at::NoGradGuard no_grad;
  const auto together = model->run(images, s.forward_options());
  for (int64_t b = 0; b < 3; ++b) {
    const std::string tag = "image" + std::to_string(b);
    alone.add(tag, model->run(images.narrow(0, b, 1), s.forward_options()));
    batched.add(tag, together, b);
  }
  const auto close = [](double x, double y) {
    return std::abs(x - y) <= 1e-4 * std::max({1.0, std::abs(x), std::abs(y)});
  };
  ASSERT_EQ(batch_arrays.size(), alone_arrays.size());
  EXPECT_GE(batch_arrays.size(), 3u * 6u);  // per image: maps of 2 layers and more
  for (const auto& [name, a] : alone_arrays) {
    ASSERT_TRUE(batch_arrays.count(name)) << name;
    const auto& b = batch_arrays.at(name);
    ASSERT_EQ(a.shape, b.shape) << name;
    for (size_t i = 0; i < a.data.size(); ++i)
      ASSERT_TRUE(close(a.data[i], b.data[i])) << name << "[" << i << "]: " << a.data[i]
                                               << " vs " << b.data[i];
  }
  const auto tables_alone = alone.tables(), tables_batch = batched.tables();
  ASSERT_EQ(tables_alone.size(), tables_batch.size());
  for (size_t t = 0; t < tables_alone.size(); ++t) {
    const Table &x = tables_alone[t], &y = tables_batch[t];
    ASSERT_EQ(x.name, y.name);
    ASSERT_EQ(x.rows.size(), y.rows.size()) << x.name;
    for (size_t r = 0; r < x.rows.size(); ++r)
      for (size_t c = 0; c < x.rows[r].size(); ++c) {
        const auto &u = x.rows[r][c], &v = y.rows[r][c];
        ASSERT_EQ(int(u.kind), int(v.kind)) << x.name;
        if (u.kind == attnlab::analysis::Cell::Kind::Real)
          EXPECT_TRUE(close(u.r, v.r)) << x.name << " row " << r << " column " << x.columns[c]
                                       << ": " << u.r << " vs " << v.r;
        else
          EXPECT_EQ(u.str(), v.str()) << x.name << " row " << r << " column " << x.columns[c];
      }
  }
  EXPECT_EQ(alone.arrays().size(), batched.arrays().size());
}

}  // namespace
