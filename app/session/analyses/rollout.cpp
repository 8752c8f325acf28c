// rollout: the query row of the attention rollout (the cls token's when the model has one
// and no query was asked for, else the query in the last layer) carried back to the first
// layer's grid, with the engine's switches (fusion, residual, discard, renormalisation).
// Figure: the rollout over the picture.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/rollout.h"
#include "viz/figures/rollout.h"

namespace attnlab::session {
namespace {

void add_rollout(ImageStep& s) {
  std::vector<const attention::AttentionTrace*> chain;
  for (const auto& l : s.layers) chain.push_back(l.trace);
  // The cls row unless the user asked for a query (then that query, in the last layer).
  const QueryRollout qr = rollout_of_query(chain, s.b, s.settings);
  const Query& q = qr.query;
  const analysis::RolloutResult& r = qr.result;
  const int64_t p = r.layout.num_prefix();
  const analysis::ResultKey key{"rollout", s.image, -1, q.tag, "", ""};
  s.session.emit(
      to_array(qr.grid, analysis::format_result_key(key), {"y", "x"},
               "rollout of the " + q.tag + " row of the last layer over the first layer's " +
                   grid_text(r.layout) + " grid (" + analysis::head_fusion_name(r.options.fusion) +
                   " fusion, residual " + std::to_string(r.options.residual) + ", discard " +
                   std::to_string(r.options.discard_ratio) + ")"));
  analysis::Table t = make_table(
      "rollout_summary",
      "rollout of the " + q.tag + " row: mass on the first layer's prefix tokens and on its grid",
      {"token", "weight"}, 1);
  for (int64_t i = 0; i < p; ++i)
    t.add_row({r.layout.prefix[size_t(i)], r.weights[i].item<double>()});
  t.add_row({"grid", r.weights.slice(0, p).sum().item<double>()});
  s.session.accumulate(t);
}

// The first layer's grid, from the model's query maps (a rollout of a prefix token does
// not say where a grid query would sit).
std::pair<int, int> first_grid(const ModelResults& m, const std::string& image) {
  const analysis::Array* first = nullptr;
  int64_t layer = -1;
  for (const auto& [key, a] : m.arrays_of("maps", image))
    if (key.part == "heads" && (layer < 0 || key.layer < layer) && a->shape.size() == 3) {
      first = a;
      layer = key.layer;
    }
  return first ? std::make_pair(int(first->shape[1]), int(first->shape[2])) : std::make_pair(0, 0);
}

}  // namespace

AnalysisInfo rollout_analysis() {
  AnalysisInfo info;
  info.name = "rollout";
  info.summary = "attention rollout of the query (cls by default) over the first layer's grid";
  info.tables = {"rollout_summary"};
  info.arrays = {"rollout__<image>__<query>"};
  info.add = add_rollout;
  info.figure_kinds = {{"rollout", "Attention rollout"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    const FigureOptions& o = in.options;
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        const auto [ref_rows, ref_cols] = first_grid(m, im.tag);
        for (const auto& [key, a] : m.arrays_of("rollout", im.tag)) {
          const viz::MapQuery q = figure_query(key.query, ref_rows, ref_cols);
          const analysis::Array* map = a;
          const viz::RgbaImage* picture = &im.picture;
          const ModelResults* model = &m;
          jobs.push_back({"rollout", "rollout__" + m.name + "__" + im.tag, [=] {
                            return viz::rollout_figure(*picture, *map, q, model->name,
                                                       o.rollout_switches, o.style);
                          }});
        }
      }
  };
  return info;
}

}  // namespace attnlab::session
