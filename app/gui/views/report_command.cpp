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
int prefix_index(const Workspace& ws, const ViewState& view, int m, const std::string& name) {
  const ResultSlot* r = result_of(ws, m, view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return -1;
  const auto& prefix = r->analysis->layers.front().prefix;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (prefix[i] == name) return int(i);
  return -1;
}

// --query-token / --query as model `ref` (the first model the figure shows) asks it; the
// report puts a cell on each model's own first-layer grid (the GUI maps it by area, the
// same cell where the grids agree). Nothing for the default query (the grid's centre).
std::string query_options(const Workspace& ws, const ViewState& view, int ref) {
  const MapQuery q = wanted_query(ws, view, ref);  // the cls token for the CLS map kind
  if (!q.prefix.empty()) {
    const int token = prefix_index(ws, view, ref, q.prefix);
    return token >= 0 ? " --query-token " + std::to_string(token) : "";
  }
  if (q.row < 0) return "";
  return " --query " + std::to_string(q.row) + "," + std::to_string(q.col);
}

// The Maps tab's analyses, figure kind and view options.
std::string maps_options(const Workspace& ws, const ViewState& view, int ref) {
  if (is_explanation(view.kind)) {
    const bool cam = view.kind == MapKind::GradCam;
    std::string out =
        std::string(" --analyses ") + (cam ? "gradcam" : "gradrollout") + " --figures explanations";
    if (view.explain_class >= 0) out += " --class " + std::to_string(view.explain_class);
    if (cam && !view.gradcam_target.empty())
      out += " --gradcam-target " + shell_quote(view.gradcam_target);
    if (cam && view.gradcam_signed) out += " --signed-cam";
    return out;
  }
  if (view.kind == MapKind::Similarity)  // the similarity analysis's figure of the query
    return " --analyses similarity --figures similarity" + query_options(ws, view, ref) +
           view.options.command_line(declared_by("similarity"));
  const session::MapView shown = map_view(ws, view);
  std::string out = view.kind == MapKind::Rollout ? " --analyses maps,rollout" : " --analyses maps";
  out += query_options(ws, view, ref);
  if (view.kind == MapKind::Rollout)  // the rollout's switches that differ from the defaults
    out += view.options.command_line(declared_by("rollout"));
  if (!view.compare && view.heads_grid && view.kind != MapKind::Rollout)  // the heads grid
    return out + " --figures head_maps --layer " +
           (shown.layer < 0 ? "last" : std::to_string(shown.layer));
  if (!view.compare) {
    out += " --figures map";  // the single view: the current model's map
  } else {
    out += " --figures compare";
    if (view.shared_scale) out += " --compare-scale shared";
  }
  const ComparePanels panels = compare_panels(ws, view);
  if (view.compare && panels.difference)  // positions among the models listed (those with maps)
    out += " --compare-difference " + std::to_string(panels.difference->first) + "," +
           std::to_string(panels.difference->second);
  out += " --map ";
  if (shown.rollout) return out + "rollout";
  out += "query --layer " +
         (shown.layer < 0 ? std::string("last")
                          : std::to_string(shown.layer) + "/" + std::to_string(shown.layer_of));
  return out + (shown.head >= 0
                    ? " --head " + std::to_string(shown.head)
                    : std::string(" --head-fusion ") + session::fusion_name(shown.fusion));
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

std::string report_command(const Workspace& ws, const ViewState& view, const CostState& cost) {
  const std::string tab = view.tab == "predictions" ? "maps" : view.tab;  // as export_panel
  const std::optional<TabEntry> entry = find_tab(tab);
  // The models the figure shows: in the compare view those with a map (in workspace
  // order, as the export draws them), a comparing tab's all, else the current.
  std::vector<int> shown;
  const bool every = tab == "maps"   ? view.compare
                     : tab == "cost" ? true  // every open model is counted
                                     : entry && entry->analysis && entry->analysis->tab &&
                                           entry->analysis->tab->all_models;
  for (int m = 0; m < int(ws.models.size()); ++m) {
    if (ws.models[size_t(m)].status != LoadStatus::Ready || (!every && m != view.model)) continue;
    if (tab == "maps" && view.compare && !shown_map(ws, view, m).ok) continue;
    shown.push_back(m);
  }
  std::string cmd = "attnlab report --models";
  for (const int m : shown) cmd += " " + shell_quote(ws.models[size_t(m)].arg);
  // The report takes one names file for every model: given when the models shown share one.
  std::string names =
      shown.empty() ? "" : ws.models[size_t(shown.front())].options.class_names_path;
  for (const int m : shown)
    if (ws.models[size_t(m)].options.class_names_path != names) names.clear();
  if (!names.empty()) cmd += " --class-names " + shell_quote(names);
  // Likewise one input size for every model: given when the models shown share one.
  std::vector<int64_t> size =
      shown.empty() ? std::vector<int64_t>{} : ws.models[size_t(shown.front())].options.img_size;
  for (const int m : shown)
    if (ws.models[size_t(m)].options.img_size != size) size.clear();
  if (size.size() == 2)
    cmd += " --img-size " + std::to_string(size[0]) + "," + std::to_string(size[1]);
  // And token merging: --merge when the models shown share an r.
  int64_t merge = shown.empty() ? -1 : ws.models[size_t(shown.front())].options.merge;
  for (const int m : shown)
    if (ws.models[size_t(m)].options.merge != merge) merge = -1;
  if (merge >= 0) cmd += " --merge " + std::to_string(merge);
  cmd += " --images";
  if (!ws.images.empty()) cmd += " " + shell_quote(ws.images[size_t(view.image)].path);
  // The image's what-if edits (edit_view.h): the report draws the edited picture's maps.
  if (const std::string edits = current_edits_text(ws, view); !edits.empty())
    cmd += " --edit " + shell_quote(edits);
  if (tab == "maps") {
    cmd += maps_options(ws, view, shown.empty() ? view.model : shown.front());
  } else if (tab == "cost") {  // the complexity sweep, or the bench of the mechanisms
    cmd += cost.shown == CostState::Shown::Macs ? " --figures complexity"
                                                : " --figures attention_bench --bench";
  } else if (entry && entry->analysis) {  // an analysis tab: its analysis and figures
    std::vector<std::string> kinds;
    for (const auto& k : entry->analysis->figure_kinds) kinds.push_back(k.id);
    cmd += " --analyses " + entry->analysis->name + " --figures " + text::join(kinds, ",");
    cmd += view.options.command_line(declared_by(entry->analysis->name));  // its settings
    if (entry->kind == TabKind::Series) {
      cmd += " --series";
      for (const auto& f : series_files_of(ws, view.model)) cmd += " " + shell_quote(f);
    }
  }
  cmd += std::string(" --colormap ") + viz::colormap_name(view.style.cmap) + " --alpha " +
         text::shortest_decimal(view.style.alpha, true) + " --upsample " +
         viz::upsample_name(view.style.upsample) + " --norm " +
         session::normalisation_option_name(view.norm);
  return cmd + " --dpi " + text::shortest_decimal(kExportDpi, true) + " --out attnlab-report";
}

}  // namespace attnlab::gui
