// channel_maps's figures (see channel_maps.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/channel_maps.h"

namespace attnlab::session {
namespace {

// The tab shows the layer the GUI shows when it has maps, else every layer that has.
viz::CaptionedFigure tab_figure(const TabInputs& in) {
  const ModelResults& m = in.models.front();
  const ResultImage& im = m.images.front();
  viz::ChannelMapFigureOptions options;
  if (m.array({kName, im.tag, in.layer, "", "", "map"})) options.layers = {in.layer};
  return viz::channel_map_figure(m.arrays, im.tag, options);
}

}  // namespace

void channel_maps_figures(AnalysisInfo& info) {
  info.figure_kinds = {{kName, "Channel-to-channel attention maps"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of(kName, im.tag).empty()) continue;
        const std::string tag = im.tag;
        jobs.push_back({kName, std::string(kName) + "__" + m.name + "__" + tag,
                        [&m, tag] { return viz::channel_map_figure(m.arrays, tag); }});
      }
  };
  info.tab = AnalysisTab{kName,
                         "Channel maps",
                         false,
                         false,
                         tab_figure,
                         "Rows: output channels, columns: the value channels they read. "
                         "The token-to-token attention of these layers is the identity."};
  info.tab->group = "spectral";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
