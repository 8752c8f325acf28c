// The analysis registry: one line per analysis in ATTNLAB_ANALYSES below; each name refers
// to `AnalysisInfo <name>_analysis()` defined in app/session/analyses/<name>.cpp. The
// order is the order of --help, the report's index and the GUI's tabs.
#include "app/session/analysis_registry.h"
#include "app/session/cost_figures.h"
#include "core/io/text.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

// clang-format off
#define ATTNLAB_ANALYSES(X) \
  X(maps)                   \
  X(rollout)                \
  X(gradcam)                \
  X(gradrollout)            \
  X(spectra)                \
  X(rank)                   \
  X(anchors)                \
  X(mask)                   \
  X(channel_maps)           \
  X(locality)               \
  X(entropy)                \
  X(map_rank)               \
  X(outliers)               \
  X(segmentation)           \
  X(similarity)             \
  X(cka)                    \
  X(lens)                   \
  X(erf)                    \
  X(heads)                  \
  X(faithfulness)           \
  X(feature_pca)
// clang-format on

namespace attnlab::session {

#define ATTNLAB_DECLARE(name) AnalysisInfo name##_analysis();
ATTNLAB_ANALYSES(ATTNLAB_DECLARE)
#undef ATTNLAB_DECLARE

namespace {

std::vector<AnalysisInfo>& registry() {
#define ATTNLAB_ENTRY(name) name##_analysis(),
  static std::vector<AnalysisInfo> all = [] {
    std::vector<AnalysisInfo> list{ATTNLAB_ANALYSES(ATTNLAB_ENTRY)};
    for (const auto& a : list)
      if (a.key_shape) analysis::register_result_key_shape(a.name, *a.key_shape);
    return list;
  }();
#undef ATTNLAB_ENTRY
  return all;
}

}  // namespace

const std::vector<AnalysisInfo>& analyses() {
  return registry();
}

std::vector<std::string> analysis_names() {
  std::vector<std::string> names;
  for (const auto& a : analyses()) names.push_back(a.name);
  return names;
}

const AnalysisInfo* find_analysis(const std::string& name) {
  for (const auto& a : analyses())
    if (a.name == name) return &a;
  return nullptr;
}

void register_analysis(AnalysisInfo info) {
  if (info.name.empty() || info.name == "all")
    throw std::invalid_argument("an analysis needs a name other than '" + info.name + "'");
  if (find_analysis(info.name))
    throw std::invalid_argument("an analysis named '" + info.name + "' is already registered");
  if (!info.add && !info.explain)
    throw std::invalid_argument("analysis '" + info.name + "' has no compute step");
  if (info.key_shape) analysis::register_result_key_shape(info.name, *info.key_shape);
  registry().push_back(std::move(info));
}

std::set<std::string> parse_analyses(const std::string& list) {
  const std::vector<std::string> known = analysis_names();
  std::set<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    if (item == "all") {
      for (const auto& a : analyses())
        if (!a.opt_in) out.insert(a.name);
      continue;
    }
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      throw std::invalid_argument("unknown analysis '" + item + "' (known: " + text::join(known) +
                                  ", all)");
    }
    out.insert(item);
  }
  if (out.empty()) throw std::invalid_argument("no analysis named in '" + list + "'");
  return out;
}

std::vector<FigureKind> figure_kinds() {
  std::vector<FigureKind> kinds;
  for (const auto& a : analyses())
    for (const auto& k : a.figure_kinds)
      if (std::none_of(kinds.begin(), kinds.end(),
                       [&](const FigureKind& have) { return have.id == k.id; }))
        kinds.push_back(k);
  // Not analyses of images but of the models themselves, drawn last (cost_figures.h).
  for (const auto& k : cost_figure_kinds()) kinds.push_back(k);
  return kinds;
}

std::vector<FigureJob> report_figure_jobs(const std::vector<ModelResults>& models,
                                          const std::optional<SeriesResults>& series,
                                          const FigureOptions& options,
                                          const std::vector<SeriesResults>& sweeps) {
  std::vector<FigureJob> jobs;
  const ReportInputs in{models, series, options};
  for (const auto& a : analyses())
    if (a.report_figures) a.report_figures(in, jobs);
  // A series figure for each series analysis that ran over the series or sweep (its
  // tables are there).
  const auto add_series_figures = [&](const SeriesResults& s, bool sweep) {
    for (const auto& a : analyses()) {
      if (!a.series || !a.series_figure || (sweep && !a.over_sizes)) continue;
      const bool ran = std::any_of(a.tables.begin(), a.tables.end(), [&](const std::string& n) {
        return std::any_of(s.tables.begin(), s.tables.end(),
                           [&](const analysis::Table& t) { return t.name == n + s.suffix; });
      });
      if (!ran) continue;
      const auto figure = a.series_figure;
      const std::string kind = a.figure_kinds.empty() ? a.name : a.figure_kinds.front().id;
      jobs.push_back({kind, kind + "__" + s.name, [s, figure] { return figure(s); }});
    }
  };
  if (series) add_series_figures(*series, false);
  for (const auto& s : sweeps) add_series_figures(s, true);
  // Order by kind as the index shows them, keeping the order within a kind.
  const std::vector<FigureKind> kinds = figure_kinds();
  const auto rank = [&](const std::string& id) {
    return std::find_if(kinds.begin(), kinds.end(),
                        [&](const FigureKind& f) { return f.id == id; }) -
           kinds.begin();
  };
  std::stable_sort(jobs.begin(), jobs.end(), [&](const FigureJob& x, const FigureJob& y) {
    return rank(x.kind) < rank(y.kind);
  });
  return jobs;
}

}  // namespace attnlab::session
