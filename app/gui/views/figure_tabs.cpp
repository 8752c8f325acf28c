// Analysis tabs and exports; see figure_tabs.h.
#include "app/gui/views/figure_tabs.h"

#include <imgui.h>

#include <filesystem>

#include "app/gui/views/compare_figure.h"
#include "app/gui/views/cost_view.h"
#include "app/gui/views/edit_view.h"
#include "app/gui/views/figure_view.h"
#include "app/gui/views/map_source.h"
#include "app/gui/views/series_view.h"
#include "app/gui/views/size_sweep_view.h"
#include "app/gui/views/tab_table.h"
#include "app/gui/workspace/workspace.h"
#include "app/session/edited_input.h"
#include "app/session/query.h"
#include "core/analysis/output_folder.h"
#include "core/io/file_bytes.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/explanations.h"
#include "viz/render.h"

namespace fs = std::filesystem;

namespace attnlab::gui {
namespace {

viz::MapStyle map_style(const ViewState& view) {
  viz::MapStyle s;
  s.overlay = view.style;
  s.norm = view.norm;
  return s;
}

// Grad-CAM / gradient rollout of the current image: one row for the shown model, or one
// per model in the compare view (AnchorFormer's Fig. 4 layout, one image column).
FigureJob explanation_figure(const Workspace& ws, const ViewState& view,
                             const viz::MapStyle& style) {
  struct Row {
    std::string model, label;
    analysis::Array map;
    std::shared_ptr<const ImageAnalysis> analysis;
  };
  std::vector<Row> rows;
  for (int k = 0; k < int(ws.models.size()); ++k) {
    if (!view.compare && k != view.model) continue;
    ShownMap sm = shown_map(ws, view, k);
    const ResultSlot* rk = result_of(ws, k, view.image);
    if (!sm.ok || !rk || !rk->explanation || !rk->analysis) continue;
    Row row{ws.models[size_t(k)].info.name,
            rk->explanation->class_name + " (" + std::to_string(rk->explanation->cls) + ")",
            {},
            rk->analysis};
    row.map.name = "map";
    row.map.shape = {sm.rows, sm.cols};
    row.map.axes = {"y", "x"};
    row.map.data = std::move(sm.values);
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return no_figure("no explanation yet");
  // The report's titles for the same figure (app/session/analyses/gradcam.cpp, gradrollout.cpp).
  const std::string what =
      view.kind == MapKind::GradCam ? "Grad-CAM" : "Gradient-weighted attention rollout";
  const std::string image =  // the report's image tag (app/cli/image_list.cpp)
      analysis::file_safe(fs::path(ws.images[size_t(view.image)].path).stem().string());
  return [rows, what, image, style](std::string*) {
    std::vector<viz::ExplanationRow> er;
    for (const Row& row : rows)
      er.push_back({row.model, {{&row.map, &row.analysis->picture, row.label}}});
    return std::optional<viz::CaptionedFigure>(
        viz::explanation_grid_figure({{image, &rows.front().analysis->picture}}, er, what, style));
  };
}

// The results an analysis tab reads: the current model's on the current image, or every
// model's in workspace order (a tab that compares them), as session::ModelResults.
std::vector<std::pair<std::string, std::shared_ptr<const ImageAnalysis>>> tab_results(
    const Workspace& ws, const ViewState& view, bool all_models) {
  std::vector<std::pair<std::string, std::shared_ptr<const ImageAnalysis>>> out;
  for (int m = 0; m < int(ws.models.size()); ++m) {
    if (!all_models && m != view.model) continue;
    const ResultSlot* r = result_of(ws, m, view.image);
    if (r && r->analysis) out.emplace_back(ws.models[size_t(m)].info.name, r->analysis);
  }
  return out;
}

session::ModelResults as_results(const std::string& name, const ImageAnalysis& a) {
  session::ModelResults r;
  r.name = name;
  r.images.push_back({kImageTag, a.picture});
  r.tables = a.tables;
  r.arrays = a.arrays;
  r.class_names = a.class_names;
  return r;
}

// An analysis tab's figure (AnalysisTab::figure) of the current view.
FigureJob analysis_tab_figure(const Workspace& ws, const ViewState& view,
                              const session::AnalysisTab& tab) {
  if (!tab.all_models) {
    const ResultSlot* r = result_of(ws, view.model, view.image);
    if (!r || !r->analysis)
      return no_figure(r && r->status == LoadStatus::Failed ? r->error : "analysing...");
  }
  auto results = tab_results(ws, view, tab.all_models);
  int layer = view.layer;  // the current model's layer, clamped to its layers
  if (const ResultSlot* r = result_of(ws, view.model, view.image); r && r->analysis) {
    const int n = int(r->analysis->layers.size());
    layer = layer < 0 ? n - 1 : std::min(layer, n - 1);
  }
  // The query the Maps tab shows (the views of one query: agents, routing, sampling).
  std::optional<viz::MapQuery> query;
  if (const ShownMap shown = shown_map(ws, view, view.model); shown.ok)
    query = shown_figure_query(ws, view, view.model, shown);
  return [results = std::move(results), figure = tab.figure, layer, query,
          style = map_style(view)](std::string* why) -> std::optional<viz::CaptionedFigure> {
    try {
      session::TabInputs in;
      for (const auto& [name, a] : results) in.models.push_back(as_results(name, *a));
      in.layer = layer;
      in.style = style;
      in.query = query;
      return figure(in);
    } catch (const std::exception& e) {
      *why = e.what();
      return std::nullopt;
    }
  };
}

}  // namespace

// The Maps tab's figure, as the view shows it: a class explanation's rows, the compare
// view, the heads grid (the report's head_maps) or the single map (the report's "map").
FigureJob maps_figure(const Workspace& ws, const ViewState& view) {
  const int m = view.model;
  const ResultSlot* r = result_of(ws, m, view.image);
  const ShownMap shown = shown_map(ws, view, m);
  if (!r || !shown.ok) return no_figure(shown.why);
  const std::string& name = ws.models[size_t(m)].info.name;
  const viz::MapStyle style = map_style(view);
  if (is_explanation(view.kind)) return explanation_figure(ws, view, style);
  if (view.compare) return compare_figure_job(ws, view);
  if (!view.heads_grid || view.kind == MapKind::Rollout)
    return edit_difference_shown(ws, view) ? edit_difference_figure_job(ws, view)
                                           : single_map_figure_job(ws, view);
  const viz::MapQuery fq = shown_figure_query(ws, view, m, shown);
  return
      [analysis = r->analysis, maps = r->maps, layer = shown.layer, fq, name, style](std::string*) {
        return std::optional<viz::CaptionedFigure>(
            viz::head_maps_figure(analysis->picture, maps->heads[size_t(layer)], fq, name,
                                  "layer " + std::to_string(layer), style));
      };
}

FigureJob tab_figure_job(const Workspace& ws, const ViewState& view, const SeriesState& series,
                         const CostState& cost, const std::string& tab) {
  if (tab == "cost") return cost_tab_figure(cost);  // of the models alone, no image needed
  if (ws.models.empty() || ws.images.empty()) return no_figure("open an image and a model first");
  if (tab == "maps") return maps_figure(ws, view);
  const std::optional<TabEntry> entry = find_tab(tab);
  if (entry && entry->kind == TabKind::Figure)
    return analysis_tab_figure(ws, view, *entry->analysis->tab);
  if (entry && entry->kind == TabKind::Series)
    return series_tab_figure(ws, series, *entry->analysis);
  return no_figure("the " + (entry ? entry->title : tab) + " tab has no figure to export");
}

std::optional<viz::CaptionedFigure> tab_figure(const Workspace& ws, const ViewState& view,
                                               const SeriesState& series, const CostState& cost,
                                               const std::string& tab, std::string* why) {
  return tab_figure_job(ws, view, series, cost, tab)(why);
}

namespace {

// What a tab's figure is drawn from: the analyses it reads (by identity: a new analysis,
// e.g. another checkpoint of a series, is a new object), the layer, and the panel size.
std::string tab_figure_key(const Workspace& ws, const ViewState& view,
                           const session::AnalysisTab& tab, int w, int h) {
  std::string key = std::to_string(view.layer) + "|" + std::to_string(w) + "x" + std::to_string(h) +
                    "|" + view.query.tag();  // the query-view tabs follow the clicked query
  const auto add = [&](int m) {
    const ResultSlot* r = result_of(ws, m, view.image);
    char id[32];
    std::snprintf(id, sizeof id, "|%p", r ? static_cast<const void*>(r->analysis.get()) : nullptr);
    key += id;
  };
  if (tab.all_models)
    for (int m = 0; m < int(ws.models.size()); ++m) add(m);
  else
    add(view.model);
  return key;
}

}  // namespace

void draw_figure_tab(const Workspace& ws, const ViewState& view, const SeriesState& series,
                     const SizeSweepState& sweep, const CostState& cost, TextureCache& cache,
                     const TabEntry& tab) {
  const session::AnalysisTab& spec = *tab.analysis->tab;
  // With the current model's training series analysed, the statistic over the series
  // goes below the image's figure (the analysis's series figure).
  const bool with_series =
      tab.analysis->series_figure && series.model == view.model && !series.files.empty();
  // And with a resolution sweep of it on this image, the statistic against the size.
  const bool with_sweep = tab.analysis->over_sizes && has_size_sweep(ws, view, sweep);
  const int below = int(with_series) + int(with_sweep);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const int w = std::max(200, int(avail.x));
  const int h = std::max(150, below ? int(avail.y) / (below + 1) - 30 : int(avail.y) - 40);
  const std::string slot = "tab|" + tab.id, key = tab_figure_key(ws, view, spec, w, h);
  value_tooltip(show_figure(
      cache, slot, key, [&] { return tab_figure_job(ws, view, series, cost, tab.id); }, w, h));
  if (!spec.hint.empty() && cache.geometry(slot)) {
    // Wrapped: a hint longer than the panel is wide must not run off its edge.
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s  (hover: values; right click: copy)", spec.hint.c_str());
    ImGui::PopStyleColor();
  }
  if (with_series) draw_series_figure(ws, series, cache, *tab.analysis, w, h);
  if (with_sweep) draw_size_sweep_figure(ws, view, sweep, cache, *tab.analysis, w, h);
}

void draw_predictions_tab(const Workspace& ws, ViewState& view) {
  for (int m = 0; m < int(ws.models.size()); ++m) {
    const ResultSlot* r = result_of(ws, m, view.image);
    ImGui::TextUnformatted(ws.models[size_t(m)].info.name.c_str());
    if (!r || !r->analysis) {
      ImGui::TextDisabled("%s",
                          r && r->status == LoadStatus::Failed ? r->error.c_str() : "analysing...");
      continue;
    }
    if (r->analysis->embedding > 0)
      ImGui::TextDisabled("an embedding of %lld values: no classes to rank",
                          static_cast<long long>(r->analysis->embedding));
    for (const auto& p : r->analysis->top5) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * p.probability);
      ImGui::ProgressBar(float(p.probability), ImVec2(160.0f, 0.0f), pct);
      ImGui::SameLine();
      // A click explains this class: the map view switches to Grad-CAM of it (or stays
      // on gradient rollout when that is shown).
      ImGui::PushID(int(p.cls) * 64 + m);
      if (ImGui::Selectable(p.name.c_str(),
                            view.explain_class == int(p.cls) && is_explanation(view.kind))) {
        view.explain_class = int(p.cls);
        if (!is_explanation(view.kind)) view.kind = MapKind::GradCam;
        view.tab = "maps";
        view.tab_requested = true;
      }
      ImGui::PopID();
    }
    ImGui::TextDisabled(r->analysis->top5.empty()
                            ? "analysed in %.0f ms"
                            : "analysed in %.0f ms; click a class to explain it (Grad-CAM)",
                        1000.0 * r->analysis->seconds);
    ImGui::Spacing();
  }
}

bool export_panel(const Workspace& ws, const ViewState& view, const SeriesState& series,
                  const CostState& cost, const std::string& path, std::string* message,
                  double dpi) {
  const std::string ext = fs::path(path).extension().string();
  const auto format = viz::figure_format_from_name(ext.empty() ? "" : ext.substr(1));
  if (!format) {
    *message = "export: " + path + ": the name must end in .png, .svg or .pdf";
    return false;
  }
  std::string why;
  const std::string tab = view.tab == "predictions" ? "maps" : view.tab;
  auto fig = tab_figure(ws, view, series, cost, tab, &why);
  if (!fig) {
    *message = "export: nothing to export yet (" + why + ")";
    return false;
  }
  try {
    if (!fs::path(path).parent_path().empty()) fs::create_directories(fs::path(path).parent_path());
    viz::write_figure(fig->figure, path, *format, dpi);
  } catch (const std::exception& e) {
    *message = "export failed: " + std::string(e.what());
    return false;
  }
  *message = "wrote " + path + " — " + fig->caption;
  // An edited image's figure: its edits beside it, so the figure can be made again.
  const int shown = view.image;  // (the Cost tab exports with no image open)
  if (shown >= 0 && shown < int(ws.images.size()) && !ws.images[size_t(shown)].edits.empty()) {
    const ImageSlot& image = ws.images[size_t(shown)];
    const std::string beside =
        (fs::path(path).parent_path() / fs::path(path).stem()).string() + ".edits.txt";
    try {
      io::write_file_atomic(beside, session::edits_file_text(image.edits, image.path));
      *message += "; its image's edits in " + beside;
    } catch (const std::exception& e) {
      *message += "; but its edits were not written: " + std::string(e.what());
      return false;
    }
  }
  return true;
}

bool export_stats(const Workspace& ws, const ViewState& view, const std::string& dir,
                  std::string* message) {
  const ResultSlot* r = result_of(ws, view.model, view.image);
  if (!r || !r->analysis) {
    *message = "export: no analysis yet";
    return false;
  }
  try {
    analysis::OutputFolder folder(dir, ws.models[size_t(view.model)].info.name);
    for (const auto& t : r->analysis->tables) folder.write_table(t);
    if (const ImageSlot& image = ws.images[size_t(view.image)]; !image.edits.empty())
      io::write_file_atomic((fs::path(dir) / session::kEditsFile).string(),
                            session::edits_file_text(image.edits, image.path));
    *message = "wrote " + std::to_string(folder.files_written()) + " statistics files to " + dir;
    return true;
  } catch (const std::exception& e) {
    *message = "export failed: " + std::string(e.what());
    return false;
  }
}

}  // namespace attnlab::gui
