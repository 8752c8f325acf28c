// spectra's figures (see spectra.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/hilo_spectra.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {
namespace {

// The layers with HiLo's two branches (other models record only their output's spectrum).
std::vector<int64_t> branch_layers(const ModelResults& m) {
  std::vector<int64_t> layers;
  for (const auto& [key, a] : m.arrays_of("spectra"))
    if (key.branch == "hifi" && key.part == "log_amplitude") layers.push_back(key.layer);
  return layers;
}

}  // namespace

void spectra_figures(AnalysisInfo& info) {
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(
        s, {"spectra_layers", "high_frequency_ratio_mean", "high-frequency energy ratio",
            "High-frequency energy ratio of each branch output (mean over channels)", "branch"});
  };
  info.figure_kinds = {{"hilo_spectra", "HiLo Hi-Fi / Lo-Fi frequency spectra"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models) {
      const std::vector<int64_t> layers = branch_layers(m);
      for (const int64_t layer : layers)
        jobs.push_back({"hilo_spectra", "hilo_spectra__" + m.name + "__L" + std::to_string(layer),
                        [&m, layer] {
                          viz::HiloSpectraOptions o;
                          o.layer = layer;
                          return viz::hilo_spectra_grid(m.arrays, o);
                        }});
      if (!layers.empty())
        jobs.push_back({"hilo_spectra", "hilo_spectra__" + m.name + "__profiles",
                        [&m] { return viz::hilo_spectra_profiles(m.arrays, m.tables); }});
    }
  };
  info.tab = AnalysisTab{"spectra",
                         "HiLo spectra",
                         false,
                         false,
                         [](const TabInputs& in) {
                           viz::HiloSpectraOptions o;
                           o.layer = in.layer;
                           return viz::hilo_spectra_grid(in.models.front().arrays, o);
                         },
                         ""};
  info.tab->group = "spectral";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
