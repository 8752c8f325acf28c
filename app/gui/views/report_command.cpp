// The report command of the view; see report_command.h.
#include "app/gui/views/report_command.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/gui/views/compare_figure.h"
#include "app/gui/views/edit_view.h"
#include "app/gui/views/figure_tabs.h"
#include "app/gui/views/map_source.h"
#include "app/gui/views/series_view.h"
#include "app/gui/views/tab_table.h"
#include "app/gui/workspace/workspace.h"
#include "app/session/figure_view_options.h"
#include "core/io/text.h"

namespace attnlab::gui {
namespace {

// The options an analysis declares or reads (app/session/analysis_options.h).
std::vector<std::string> declared_by(const std::string& analysis) {
  std::vector<std::string> names;
  if (const session::AnalysisInfo* a = session::find_analysis(analysis)) {
    for (const auto& o : a->options) names.push_back(o.name);
    names.insert(names.end(), a->reads_options.begin(), a->reads_options.end());
  }
  return names;
}

// The token index of prefix token `name` in model m's first layer, or -1.
int prefix_index(const GuiState& state, int m, const std::string& name) {
  const ResultSlot* r = result_of(state, m, state.view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return -1;
  const auto& prefix = r->analysis->layers.front().prefix;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (prefix[i] == name) return int(i);
  return -1;
}

// --query-token / --query as model `ref` (the first model the figure shows) asks it; the
// report puts a cell on each model's own first-layer grid (the GUI maps it by area, the
// same cell where the grids agree). Nothing for the default query (the grid's centre).
std::string query_options(const GuiState& state, int ref) {
  const MapQuery q = wanted_query(state, ref);  // the cls token for the CLS map kind
  if (!q.prefix.empty()) {
    const int token = prefix_index(state, ref, q.prefix);
    return token >= 0 ? " --query-token " + std::to_string(token) : "";
  }
  if (q.row < 0) return "";
  return " --query " + std::to_string(q.row) + "," + std::to_string(q.col);
}

// The Maps tab's analyses, figure kind and view options.
std::string maps_options(const GuiState& state, int ref) {
  const ViewState& v = state.view;
  if (is_explanation(v.kind)) {
    const bool cam = v.kind == MapKind::GradCam;
    std::string out =
        std::string(" --analyses ") + (cam ? "gradcam" : "gradrollout") + " --figures explanations";
    if (v.explain_class >= 0) out += " --class " + std::to_string(v.explain_class);
    if (cam && !v.gradcam_target.empty())
      out += " --gradcam-target " + shell_quote(v.gradcam_target);
    if (cam && v.gradcam_signed) out += " --signed-cam";
    return out;
  }
  if (v.kind == MapKind::Similarity)  // the similarity analysis's figure of the query
    return " --analyses similarity --figures similarity" + query_options(state, ref) +
           v.options.command_line(declared_by("similarity"));
  const session::MapView view = map_view(state);
  std::string out = v.kind == MapKind::Rollout ? " --analyses maps,rollout" : " --analyses maps";
  out += query_options(state, ref);
  if (v.kind == MapKind::Rollout)  // the rollout's switches that differ from the defaults
    out += v.options.command_line(declared_by("rollout"));
  if (!v.compare && v.heads_grid && v.kind != MapKind::Rollout)  // the heads grid
    return out + " --figures head_maps --layer " +
           (view.layer < 0 ? "last" : std::to_string(view.layer));
  if (!v.compare) {
    out += " --figures map";  // the single view: the current model's map
  } else {
    out += " --figures compare";
    if (v.shared_scale) out += " --compare-scale shared";
  }
  const ComparePanels panels = compare_panels(state);
  if (v.compare && panels.difference)  // positions among the models listed (those with maps)
    out += " --compare-difference " + std::to_string(panels.difference->first) + "," +
           std::to_string(panels.difference->second);
  out += " --map ";
  if (view.rollout) return out + "rollout";
  out += "query --layer " +
         (view.layer < 0 ? std::string("last")
                         : std::to_string(view.layer) + "/" + std::to_string(view.layer_of));
  return out + (view.head >= 0
                    ? " --head " + std::to_string(view.head)
                    : std::string(" --head-fusion ") + session::fusion_name(view.fusion));
}

}  // namespace

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-+./:,=@%") == std::string::npos;
  if (plain) return text;
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string report_command(const GuiState& state) {
  const ViewState& v = state.view;
  const std::string tab = v.tab == "predictions" ? "maps" : v.tab;  // as export_panel
  const std::optional<TabEntry> entry = find_tab(tab);
  // The models the figure shows: in the compare view those with a map (in workspace
  // order, as the export draws them), a comparing tab's all, else the current.
  std::vector<int> shown;
  const bool every = tab == "maps"   ? v.compare
                     : tab == "cost" ? true  // every open model is counted
                                     : entry && entry->analysis && entry->analysis->tab &&
                                           entry->analysis->tab->all_models;
  for (int m = 0; m < int(state.models.size()); ++m) {
    if (state.models[size_t(m)].status != LoadStatus::Ready || (!every && m != v.model)) continue;
    if (tab == "maps" && v.compare && !shown_map(state, m).ok) continue;
    shown.push_back(m);
  }
  std::string cmd = "attnlab report --models";
  for (const int m : shown) cmd += " " + shell_quote(state.models[size_t(m)].arg);
  // The report takes one names file for every model: given when the models shown share one.
  std::string names =
      shown.empty() ? "" : state.models[size_t(shown.front())].options.class_names_path;
  for (const int m : shown)
    if (state.models[size_t(m)].options.class_names_path != names) names.clear();
  if (!names.empty()) cmd += " --class-names " + shell_quote(names);
  // Likewise one input size for every model: given when the models shown share one.
  std::vector<int64_t> size =
      shown.empty() ? std::vector<int64_t>{} : state.models[size_t(shown.front())].options.img_size;
  for (const int m : shown)
    if (state.models[size_t(m)].options.img_size != size) size.clear();
  if (size.size() == 2)
    cmd += " --img-size " + std::to_string(size[0]) + "," + std::to_string(size[1]);
  cmd += " --images";
  if (!state.images.empty()) cmd += " " + shell_quote(state.images[size_t(v.image)].path);
  // The image's what-if edits (edit_view.h): the report draws the edited picture's maps.
  if (const std::string edits = current_edits_text(state); !edits.empty())
    cmd += " --edit " + shell_quote(edits);
  if (tab == "maps") {
    cmd += maps_options(state, shown.empty() ? v.model : shown.front());
  } else if (tab == "cost") {  // the complexity sweep, or the bench of the mechanisms
    cmd += state.cost.shown == CostState::Shown::Macs ? " --figures complexity"
                                                      : " --figures attention_bench --bench";
  } else if (entry && entry->analysis) {  // an analysis tab: its analysis and figures
    std::vector<std::string> kinds;
    for (const auto& k : entry->analysis->figure_kinds) kinds.push_back(k.id);
    cmd += " --analyses " + entry->analysis->name + " --figures " + text::join(kinds, ",");
    cmd += v.options.command_line(declared_by(entry->analysis->name));  // its settings
    if (entry->kind == TabKind::Series) {
      cmd += " --series";
      for (const auto& f : series_files_of(state, v.model)) cmd += " " + shell_quote(f);
    }
  }
  cmd += std::string(" --colormap ") + viz::colormap_name(v.style.cmap) + " --alpha " +
         text::shortest_decimal(v.style.alpha, true) + " --upsample " +
         viz::upsample_name(v.style.upsample) + " --norm " +
         session::normalisation_option_name(v.norm);
  return cmd + " --dpi " + text::shortest_decimal(kExportDpi, true) + " --out attnlab-report";
}

}  // namespace attnlab::gui
