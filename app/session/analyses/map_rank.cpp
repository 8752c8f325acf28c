// map_rank: the rank of each head's attention map itself (FLatten's Fig. 5), from the
// map's factors where the mechanism has them (never N×N) and by SVD of the explicit map
// otherwise, plus the rank of the map with the layer's added depthwise mixing (dwc, LePE,
// dconv) — core/analysis/map_rank.h. Figure: rank / min(N, K) per head and layer for every
// model, lifted maps beside; the GUI's Map rank tab compares every open model.
// Its figures (report, series, GUI tab): map_rank_figures.cpp.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/map_rank.h"

namespace attnlab::session {
namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

void add_map_rank(ImageStep& s) {
  warn_reduced_precision_ranks(s, "map_rank");
  analysis::MapRankOptions options;
  options.rank = rank_options(s.settings.options);
  const std::string rules =
      "rank: singular values (float64) above the float32 rule's tolerance " +
      rank_options(s.settings.options).describe() +
      " for the N x K map; precision_rank: above 2*sqrt(max(N,K))*eps(float32)*sigma_max; "
      "form: factored (singular values from the map's factors, rank <= bound = factor width), "
      "explicit (SVD of the N x K rows) or skipped (more than " +
      std::to_string(options.max_explicit_tokens) +
      " tokens); lifted_*: the same of A + W_c, the depthwise token mixing the layer adds "
      "beside A (mixing) for " +
      std::to_string(options.lift_channels) +
      " evenly spaced channels c of the head (mean, min, max over them; nan: none)";
  analysis::Table heads = make_table(
      "map_rank_heads", "attention-map rank per layer and head; " + rules,
      {"layer", "path", "mechanism", "head", "form", "mixing", "tokens", "keys", "bound", "rank",
       "tolerance", "rank_ambiguous", "precision_rank", "effective_rank", "stable_rank",
       "lifted_rank", "lifted_rank_min", "lifted_rank_max", "lifted_effective_rank"},
      6);
  analysis::Table layers = make_table(
      "map_rank_layers",
      "attention-map rank per layer, mean over heads; full = min(N, K); as map_rank_heads",
      {"layer", "path", "mechanism", "full", "bound", "rank", "precision_rank", "effective_rank",
       "stable_rank", "lifted_rank"},
      3);
  for (const auto& l : s.layers) {
    const std::vector<analysis::HeadMapRank> ranks = analysis::map_ranks(*l.trace, s.b, options);
    double sum[6] = {0, 0, 0, 0, 0, 0};
    int counted = 0;
    for (const auto& r : ranks) {
      const bool skipped = r.form == "skipped";
      const double rank = skipped ? kNone : double(r.stats.rank);
      double lifted = kNone, lo = kNone, hi = kNone, lifted_eff = kNone;
      if (!r.lifted.empty()) {
        double total = 0, eff = 0;
        lo = INFINITY, hi = -INFINITY;
        for (const auto& st : r.lifted) {
          total += double(st.rank), eff += st.effective_rank;
          lo = std::min(lo, double(st.rank)), hi = std::max(hi, double(st.rank));
        }
        lifted = total / double(r.lifted.size());
        lifted_eff = eff / double(r.lifted.size());
      }
      heads.add_row({l.index, l.path, l.trace->mechanism, r.head, r.form, r.mixing, r.tokens,
                     r.keys, r.bound, rank, skipped ? kNone : r.stats.tolerance,
                     int64_t(r.stats.rank_ambiguous), skipped ? kNone : double(r.stats.precision_rank),
                     skipped ? kNone : r.stats.effective_rank,
                     skipped ? kNone : r.stats.stable_rank, lifted, lo, hi, lifted_eff});
      const double v[6] = {double(r.bound), rank, skipped ? kNone : double(r.stats.precision_rank),
                           skipped ? kNone : r.stats.effective_rank,
                           skipped ? kNone : r.stats.stable_rank, lifted};
      for (int i = 0; i < 6; ++i) sum[i] += v[i];
      ++counted;
    }
    const double n = std::max(1, counted);
    const int64_t full = ranks.empty() ? 0 : std::min(ranks[0].tokens, ranks[0].keys);
    layers.add_row({l.index, l.path, l.trace->mechanism, full, sum[0] / n, sum[1] / n, sum[2] / n,
                    sum[3] / n, sum[4] / n, sum[5] / n});
  }
  s.session.accumulate(heads);
  s.session.accumulate(layers);
}

}  // namespace

AnalysisInfo map_rank_analysis() {
  AnalysisInfo info;
  info.name = "map_rank";
  info.summary =
      "rank of each head's attention map (from its factors, or by SVD) and with the layer's "
      "depthwise mixing (dwc, LePE, dconv)";
  info.tables = {"map_rank_heads", "map_rank_layers"};
  info.in_image_analysis = true;
  info.series = true;  // over a checkpoint series: the per-layer value against the step
  info.over_sizes = true;  // and against the input size of a resolution sweep
  info.add = add_map_rank;
  info.reads_options = {"rank-rtol", "rank-atol"};
  return info;
}

}  // namespace attnlab::session
