// rank: per layer and head, the rank of the attention output (rows · V) and of the
// matrices the mechanism declares (AttentionTrace::rank_matrices: linear attention's and
// Castling's KV buffer, RALA's buffers and gated output) under every definition of
// core/analysis/rank.h, with their singular values averaged over the images. Figure: the
// ranks per layer and the normalised spectra (RALA's Figs. 4/5/8); the GUI's Rank tab.
// Its figures (report, series, GUI tab): rank_figures.cpp.
#include <ATen/ATen.h>

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/rank.h"

namespace attnlab::session {
namespace {

void add_rank(ImageStep& s) {
  warn_reduced_precision_ranks(s, "rank");
  // Every definition in both tables (analysis/rank.h); the sidecar states their rules.
  const std::string rules = "rank: float32 rule as torch.linalg.matrix_rank, tolerance " +
                            rank_options(s.settings.options).describe() +
                            "; precision_rank: float64 singular values above "
                            "2*sqrt(max(m,n))*eps(float32)*sigma_max; *_ambiguous: a singular "
                            "value within " +
                            std::to_string(static_cast<int>(analysis::kRankAmbiguityFactor)) +
                            "x of the tolerance";
  analysis::Table heads =
      make_table("rank_heads", "rank statistics per layer, matrix kind and head; " + rules,
                 {"layer", "path", "mechanism", "matrix", "head", "rows", "cols", "rank",
                  "tolerance", "rank_ambiguous", "precision_rank", "precision_tolerance",
                  "precision_ambiguous", "effective_rank", "stable_rank", "sigma_max"},
                 5);
  analysis::Table summary = make_table(
      "rank_layers",
      "rank statistics per layer and matrix kind, averaged over heads; full = min(rows, cols); "
      "*_ambiguous = share of heads flagged; *_tolerance_rel = tolerance / sigma_max; " +
          rules,
      {"layer", "path", "mechanism", "matrix", "full", "rank", "precision_rank", "effective_rank",
       "stable_rank", "rank_ambiguous", "precision_ambiguous", "tolerance_rel",
       "precision_tolerance_rel"},
      4);
  // Every layer's matrices first, then one rank_statistics call per dtype and shape (a
  // ViT's 12 layers × 6 heads of output features in one stack): each matrix's statistics
  // are its own whatever it is stacked with, and one call spreads all of them over the
  // cores at once instead of a layer's few at a time.
  struct Subject {
    const SessionLayer* layer;
    analysis::RankSubject subject;
    size_t first = 0;  // its first matrix in `stats`
  };
  std::vector<Subject> subjects;
  for (const auto& l : s.layers)
    for (auto& subject : analysis::rank_subjects(*l.trace, s.b)) {
      if (subject.matrices.dim() == 2) subject.matrices = subject.matrices.unsqueeze(0);
      subjects.push_back({&l, std::move(subject)});
    }
  std::map<std::tuple<at::ScalarType, std::string, int64_t, int64_t>, std::vector<size_t>> groups;
  for (size_t i = 0; i < subjects.size(); ++i) {
    const at::Tensor& m = subjects[i].subject.matrices;
    groups[{m.scalar_type(), m.device().str(), m.size(1), m.size(2)}].push_back(i);
  }
  std::vector<analysis::RankStats> stats;
  for (const auto& [shape, members] : groups) {
    std::vector<at::Tensor> group;
    size_t next = stats.size();
    for (const size_t i : members) {
      subjects[i].first = next;
      next += size_t(subjects[i].subject.matrices.size(0));
      group.push_back(subjects[i].subject.matrices);
    }
    const auto group_stats = analysis::rank_statistics(
        group.size() == 1 ? group.front() : at::cat(group), rank_options(s.settings.options));
    stats.insert(stats.end(), group_stats.begin(), group_stats.end());
  }
  for (const auto& [layer, subject, first] : subjects) {
    const SessionLayer& l = *layer;
    const int64_t rows = subject.matrices.size(-2), cols = subject.matrices.size(-1);
    const size_t count = size_t(subject.matrices.size(0));
    // Sums over heads of: rank, precision rank, effective, stable, the two flags, and the
    // two tolerances relative to each head's σ_max.
    std::array<double, 8> sum{};
    std::vector<at::Tensor> sigmas;
    for (size_t h = 0; h < count; ++h) {
      const auto& st = stats[first + h];
      // The largest values (first: descending, float64 on the CPU), read in place.
      const double sigma_max = st.sigma.numel() ? st.sigma.data_ptr<double>()[0] : 0.0;
      const double native_max =
          st.sigma_native.numel() ? st.sigma_native.data_ptr<double>()[0] : 0.0;
      heads.add_row({l.index, l.path, l.trace->mechanism, subject.name, int64_t(h), rows, cols,
                     st.rank, st.tolerance, int64_t(st.rank_ambiguous), st.precision_rank,
                     st.precision_tolerance, int64_t(st.precision_ambiguous), st.effective_rank,
                     st.stable_rank, sigma_max});
      const std::array<double, 8> v{double(st.rank),
                                    double(st.precision_rank),
                                    st.effective_rank,
                                    st.stable_rank,
                                    double(st.rank_ambiguous),
                                    double(st.precision_ambiguous),
                                    native_max > 0 ? st.tolerance / native_max : 0.0,
                                    sigma_max > 0 ? st.precision_tolerance / sigma_max : 0.0};
      for (size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
      sigmas.push_back(st.sigma);
    }
    const double n = double(std::max<size_t>(1, count));
    summary.add_row({l.index, l.path, l.trace->mechanism, subject.name, std::min(rows, cols),
                     sum[0] / n, sum[1] / n, sum[2] / n, sum[3] / n, sum[4] / n, sum[5] / n,
                     sum[6] / n, sum[7] / n});
    s.session.add_sum(
        analysis::format_result_key({"rank_sigma", "", l.index, "", "", subject.name}),
        "singular values (float64 SVD, descending) of each head's " + subject.name + " matrix in " +
            l.path,
        {"head", "index"}, at::stack(sigmas));
  }
  s.session.accumulate(heads);
  s.session.accumulate(summary);
}

}  // namespace

analysis::RankOptions rank_options(const OptionValues& options) {
  analysis::RankOptions o;
  o.rtol = options.real("rank-rtol");
  o.atol = options.real("rank-atol");
  return o;
}

AnalysisInfo rank_analysis() {
  AnalysisInfo info;
  info.name = "rank";
  info.summary =
      "singular values and ranks (float32 rule, above float32 precision, effective, stable) of "
      "every head's output and KV buffer";
  info.tables = {"rank_heads", "rank_layers"};
  info.arrays = {"rank_sigma__L<ll>__<matrix>"};
  info.in_image_analysis = true;
  info.series = true;      // over a checkpoint series: the per-layer value against the step
  info.over_sizes = true;  // and against the input size of a resolution sweep
  info.add = add_rank;
  AnalysisOption rtol{"rank-rtol", AnalysisOption::Kind::Real, "X", 0.0,
                      "torch.linalg.matrix_rank's, max(m,n)*eps*sigma_max"};
  rtol.min = 0;
  rtol.gui_max = 0.1;
  rtol.help = "rank tolerance relative to the largest singular value (0: the default)";
  AnalysisOption atol{"rank-atol", AnalysisOption::Kind::Real, "X", 0.0, "none"};
  atol.min = 0;
  atol.gui_max = 1;
  atol.help = "absolute rank tolerance; wins over --rank-rtol when > 0";
  info.options = {rtol, atol};
  info.describe = [](const AnalysisSettings& st) {
    const analysis::RankOptions rank = rank_options(st.options);
    nlohmann::json definitions = nlohmann::json::array();
    for (const auto& d : analysis::rank_definitions(rank))
      definitions.push_back({{"column", d.column}, {"label", d.label}, {"rule", d.rule}});
    return nlohmann::json{{"tolerance", rank.describe()},
                          {"atol", rank.atol},
                          {"rtol", rank.rtol},
                          {"definitions", definitions},
                          {"ambiguity_factor", analysis::kRankAmbiguityFactor},
                          {"ambiguity", analysis::rank_ambiguity_rule()}};
  };
  return info;
}

}  // namespace attnlab::session
