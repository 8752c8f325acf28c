// The views of one query's mechanism internals (app/session/analyses/agents.cpp, routing.cpp,
// sampling.cpp; viz/figures/agents.h, routing.h, sampling.h) on small random ViTs, each tied
// to the attention it explains rather than to the arrays' own code:
//  * agents (one head): a query's weights over the agents times the agents' maps, summed,
//    is that query's attention row from the trace;
//  * routing: the region map is the S x S tiling written out with loops, the route the
//    trace's, and a query's attention row is zero outside its region's routed regions;
//  * sampling (raw offsets: every sample on the grid): a query's weights over the samples
//    sum to 1 and their centroid (Σ w_s·pos_s) is the centroid of its attention row over
//    the tokens (bilinear sampling keeps the centroid);
// and each figure draws at a given query, and names what is missing.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/analysis/result_key.h"
#include "models/model_registry.h"
#include "viz/figures/agents.h"
#include "viz/figures/routing.h"
#include "viz/figures/sampling.h"

namespace attnlab::testing {
namespace {

struct ViewRun {
  std::map<std::string, analysis::Array> arrays;
  models::ForwardResult forward;
};

// A 2-block ViT on 32 px with 4 px patches (an 8×8 grid, no class token), `heads` heads.
ViewRun view_run(const std::string& mechanism, const models::Json& options, int64_t heads,
                 const std::string& analysis) {
  at::manual_seed(7);
  auto model = models::make_backbone({{"arch", "vit"},
                                      {"attention", mechanism},
                                      {"attention_options", options},
                                      {"img_size", 32},
                                      {"patch_size", 4},
                                      {"embed_dim", 32},
                                      {"depth", 2},
                                      {"num_heads", heads},
                                      {"num_classes", 3},
                                      {"class_token", false}});
  model->eval();
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses(analysis);
  at::NoGradGuard no_grad;
  ViewRun run;
  run.forward = model->run(at::randn({1, 3, 32, 32}), s.forward_options());
  session::AnalysisSession session(s, [&](const analysis::Array& a) { run.arrays[a.name] = a; });
  session.add("im", run.forward);
  session.finish();
  return run;
}

const analysis::Array& view_array(const ViewRun& run, const std::string& analysis, int64_t layer,
                                  const std::string& part) {
  const auto it =
      run.arrays.find(analysis::format_result_key({analysis, "im", layer, "", "", part}));
  if (it == run.arrays.end()) throw std::runtime_error("no array " + analysis + " " + part);
  return it->second;
}

std::vector<analysis::Array> view_list(const ViewRun& run) {
  std::vector<analysis::Array> out;
  for (const auto& [name, a] : run.arrays) out.push_back(a);
  return out;
}

viz::RgbaImage view_picture_of(int side) {
  viz::RgbaImage im;
  im.width = im.height = side;
  im.rgba.assign(size_t(side * side * 4), 128);
  return im;
}

// Tolerance: float32 rows against sums of float32 products over ≤ 64 terms, all ≤ 1.
constexpr double kViewTol = 1e-5;

TEST(QueryViews, AgentsWeightsTimesMapsAreTheQuerysRow) {
  const ViewRun run = view_run("agent", {{"agent_num", 16}, {"window", 8}}, 1, "agents");
  for (int64_t layer = 0; layer < 2; ++layer) {
    const analysis::Array& maps = view_array(run, "agents", layer, "maps");
    const analysis::Array& weights = view_array(run, "agents", layer, "weights");
    ASSERT_EQ(maps.shape, (std::vector<int64_t>{16, 8, 8}));
    ASSERT_EQ(weights.shape, (std::vector<int64_t>{8, 8, 16}));
    const auto& trace = *run.forward.traces[size_t(layer)].trace;
    for (int64_t q : {0, 27, 63}) {
      const at::Tensor row = trace.rows(0, 0, at::tensor({q}, at::kLong))[0].to(at::kDouble);
      for (int64_t key = 0; key < 64; ++key) {
        double implied = 0;
        for (int64_t a = 0; a < 16; ++a)
          implied +=
              double(weights.data[size_t(q * 16 + a)]) * double(maps.data[size_t(a * 64 + key)]);
        EXPECT_NEAR(implied, row[key].item<double>(), kViewTol) << "query " << q << " key " << key;
      }
    }
  }
  viz::AgentFigureOptions o;
  o.query = viz::MapQuery{"q", viz::GridCell{2, 5}, 8, 8};
  const auto fig = viz::agent_figure(view_list(run), "im", view_picture_of(32), o);
  EXPECT_EQ(fig.figure.panels.size(), 4u);  // the weights and the 3 strongest agents
  EXPECT_NE(fig.caption.find("16 agents"), std::string::npos) << fig.caption;
  EXPECT_THROW(viz::agent_figure({}, "im", view_picture_of(32), o), std::invalid_argument);
}

TEST(QueryViews, RoutingIsTheTilingAndTheRowsStayInTheRoutedRegions) {
  const ViewRun run = view_run("biformer", {{"n_win", 4}, {"topk", 3}}, 2, "routing");
  for (int64_t layer = 0; layer < 2; ++layer) {
    const analysis::Array& region = view_array(run, "routing", layer, "region");
    const analysis::Array& route = view_array(run, "routing", layer, "route");
    ASSERT_EQ(region.shape, (std::vector<int64_t>{8, 8}));
    ASSERT_EQ(route.shape, (std::vector<int64_t>{16, 3}));
    for (int64_t y = 0; y < 8; ++y)
      for (int64_t x = 0; x < 8; ++x)
        EXPECT_EQ(region.data[size_t(y * 8 + x)], float((y / 2) * 4 + x / 2));
    const auto& trace = *run.forward.traces[size_t(layer)].trace;
    const at::Tensor idx = trace.internal("biformer.route_idx")[0];
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_EQ(route.data[size_t(r * 3 + k)], float(idx[r][k].item<int64_t>()));
    for (int64_t q : {0, 21, 63}) {
      const auto own = static_cast<int64_t>(region.data[size_t(q)]);
      for (int64_t h = 0; h < 2; ++h) {
        const at::Tensor row = trace.rows(0, h, at::tensor({q}, at::kLong))[0];
        for (int64_t key = 0; key < 64; ++key) {
          bool routed = false;
          for (int64_t k = 0; k < 3; ++k)
            routed = routed || route.data[size_t(own * 3 + k)] == region.data[size_t(key)];
          if (!routed) {
            EXPECT_EQ(row[key].item<double>(), 0.0) << "query " << q << " key " << key;
          }
        }
        EXPECT_NEAR(row.sum().item<double>(), 1.0, kViewTol);
      }
    }
  }
  viz::RoutingFigureOptions o;
  o.query = viz::MapQuery{"q", viz::GridCell{5, 1}, 8, 8};
  const auto fig = viz::routing_figure(view_list(run), "im", view_picture_of(32), o);
  EXPECT_EQ(fig.figure.panels.size(), 2u);
  EXPECT_NE(fig.caption.find("3 regions numbered"), std::string::npos) << fig.caption;
}

TEST(QueryViews, SamplingWeightsCentreWhereTheRowDoes) {
  const ViewRun run = view_run(
      "dat", {{"stride", 2}, {"ksize", 3}, {"q_h", 8}, {"q_w", 8}, {"offset_range_factor", -1}}, 1,
      "sampling");
  for (int64_t layer = 0; layer < 2; ++layer) {
    const analysis::Array& points = view_array(run, "sampling", layer, "points");
    const analysis::Array& weights = view_array(run, "sampling", layer, "weights");
    ASSERT_EQ(points.shape, (std::vector<int64_t>{1, 16, 4}));
    ASSERT_EQ(weights.shape, (std::vector<int64_t>{1, 8, 8, 16}));
    const auto& trace = *run.forward.traces[size_t(layer)].trace;
    for (int64_t q : {0, 30, 63}) {
      const at::Tensor row = trace.rows(0, 0, at::tensor({q}, at::kLong))[0].to(at::kDouble);
      double wsum = 0, cy = 0, cx = 0, ry = 0, rx = 0;
      for (int64_t s = 0; s < 16; ++s) {
        const double w = weights.data[size_t(q * 16 + s)];
        wsum += w;
        cy += w * double(points.data[size_t(s * 4 + 2)]);
        cx += w * double(points.data[size_t(s * 4 + 3)]);
      }
      for (int64_t key = 0; key < 64; ++key) {
        ry += row[key].item<double>() * double(key / 8);
        rx += row[key].item<double>() * double(key % 8);
      }
      EXPECT_NEAR(wsum, 1.0, kViewTol);
      // Cells ≤ 7: the centroid's float32 rounding scales with the grid.
      EXPECT_NEAR(cy, ry, 8 * kViewTol) << "query " << q;
      EXPECT_NEAR(cx, rx, 8 * kViewTol) << "query " << q;
    }
  }
  viz::SamplingFigureOptions o;
  const auto fig = viz::sampling_figure(view_list(run), "im", view_picture_of(32), o);
  EXPECT_EQ(fig.figure.panels.size(), 1u);
  EXPECT_THROW(viz::sampling_figure({}, "im", view_picture_of(32), o), std::invalid_argument);
}

TEST(QueryViews, OtherMechanismsSkipWithTheReason) {
  at::manual_seed(8);
  auto model = models::make_backbone({{"arch", "vit"},
                                      {"img_size", 32},
                                      {"patch_size", 4},
                                      {"embed_dim", 32},
                                      {"depth", 1},
                                      {"num_heads", 2},
                                      {"num_classes", 3}});
  model->eval();
  session::AnalysisSettings s;
  s.analyses = session::parse_analyses("agents,routing,sampling");
  at::NoGradGuard no_grad;
  const auto r = model->run(at::randn({1, 3, 32, 32}), s.forward_options());
  session::AnalysisSession session(s, [](const analysis::Array&) {});
  session.add("im", r);
  session.finish();
  ASSERT_EQ(session.skipped().size(), 3u);
  EXPECT_NE(session.skipped()[0].find("offers agent tokens"), std::string::npos);
}

}  // namespace
}  // namespace attnlab::testing
