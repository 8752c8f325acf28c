// rollout: the query row of the attention rollout (the cls token's when the model has one
// and no query was asked for, else the query in the last layer) carried back to the first
// layer's grid, with the engine's switches (fusion, residual, discard, renormalisation).
// Figure: the rollout over the picture.
// Its figures (report, series, GUI tab): rollout_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/rollout.h"

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

// The rollout switches: `attnlab analyze --fusion --residual --discard --no-renormalize`,
// the GUI's rollout controls, and gradrollout's rollout (which reads them too).
std::vector<AnalysisOption> rollout_switches() {
  using Kind = AnalysisOption::Kind;
  AnalysisOption fusion{"fusion", Kind::Choice, "mean|max|min", "mean"};
  fusion.choices = {"mean", "max", "min"};
  fusion.help = "how a layer's heads are fused before the product";
  AnalysisOption residual{"residual", Kind::Real, "R", 0.5};
  residual.min = 0;
  residual.max = 1;
  residual.help = "weight r of the attention in r*A + (1-r)*I";
  AnalysisOption discard{"discard", Kind::Real, "F", 0.0};
  discard.min = 0;
  discard.max = 1;
  discard.max_open = true;
  discard.help = "share of each row's smallest weights dropped";
  AnalysisOption keep_rows{"no-renormalize", Kind::Flag, "", false};
  keep_rows.help = "leave the rows of r*A + (1-r)*I unnormalised";
  return {fusion, residual, discard, keep_rows};
}

}  // namespace

analysis::RolloutOptions rollout_options(const OptionValues& options) {
  analysis::RolloutOptions o;
  o.fusion = analysis::parse_head_fusion(options.text("fusion"));
  o.residual = options.real("residual");
  o.discard_ratio = options.real("discard");
  o.renormalize = !options.flag("no-renormalize");
  return o;
}

AnalysisInfo rollout_analysis() {
  AnalysisInfo info;
  info.name = "rollout";
  info.summary = "attention rollout of the query (cls by default) over the first layer's grid";
  info.tables = {"rollout_summary"};
  info.arrays = {"rollout__<image>__<query>"};
  info.add = add_rollout;
  info.options = rollout_switches();
  info.describe = [](const AnalysisSettings& st) {
    const analysis::RolloutOptions o = rollout_options(st.options);
    return nlohmann::json{{"head_fusion", analysis::head_fusion_name(o.fusion)},
                          {"residual_weight", o.residual},
                          {"discard_ratio", o.discard_ratio},
                          {"renormalize_rows", o.renormalize},
                          {"max_tokens_explicit", o.max_tokens},
                          {"query", "the cls token when the model has one and no query was given"}};
  };
  return info;
}

}  // namespace attnlab::session
