// The Maps tab; see map_view.h.
#include "app/gui/views/map_view.h"

#include <imgui.h>

#include <algorithm>
#include <functional>
#include <variant>
#include <cmath>
#include <cstdio>

#include "app/gui/views/compare_figure.h"
#include "app/gui/views/edit_view.h"
#include "app/gui/views/figure_tabs.h"
#include "app/gui/views/figure_view.h"
#include "app/gui/views/input_view.h"
#include "app/gui/views/map_source.h"
#include "app/gui/workspace/workspace.h"
#include "core/io/text.h"
#include "viz/figure_layout.h"
#include "viz/figures/map_panels.h"

namespace attnlab::gui {
namespace {

// Three significant digits: what the map view shows of a weight.
std::string fmt3(double v) {
  return text::format_g(v, 3);
}

constexpr int kOverlayMinSide = 448;  // overlays are built at least this large: crisp when zoomed

// The hovered token and its weight; on an AnchorFormer layer also the token's soft
// assignment over the anchors (of the shown head, or the mean over heads).
void token_tooltip(const Workspace& ws, const ViewState& view, int model, const ShownMap& map,
                   int row, int col) {
  ImGui::BeginTooltip();
  ImGui::Text("token (%d, %d)  weight %s", row, col,
              fmt3(map.values[size_t(row * map.cols + col)]).c_str());
  const ResultSlot* r = result_of(ws, model, view.image);
  const int layer = map.layer < 0 ? 0 : map.layer;
  // Anchor assignments belong to attention layers, not to a class explanation's grid.
  if (r && r->analysis && !is_explanation(view.kind) &&
      size_t(layer) < r->analysis->layers.size()) {
    const LayerInfo& l = r->analysis->layers[size_t(layer)];
    if (l.rows == map.rows && l.cols == map.cols) {
      const int token = int(l.prefix.size()) + row * l.cols + col;
      const int head = view.head < l.heads ? view.head : -1;
      const std::vector<float> p = anchor_distribution(*r->analysis, layer, token, head);
      if (!p.empty()) {
        const auto top = std::max_element(p.begin(), p.end());
        ImGui::Text("anchors of layer %d, %s: mostly anchor %d (%.0f%%; uniform %.0f%%)", layer,
                    head < 0 ? "mean of heads" : ("head " + std::to_string(head)).c_str(),
                    int(top - p.begin()), 100.0 * double(*top), 100.0 / double(p.size()));
        ImGui::PlotHistogram("##anchor_distribution", p.data(), int(p.size()), 0, nullptr, 0.0f,
                             *top, ImVec2(260.0f, 60.0f));
      }
    }
  }
  ImGui::EndTooltip();
}

void draw_prefix_chips(const Workspace& ws, ViewState& view) {
  const ResultSlot* r = result_of(ws, view.model, view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return;
  const auto& prefix = r->analysis->layers.front().prefix;
  if (prefix.empty()) return;
  ImGui::TextDisabled("prefix tokens:");
  for (const auto& name : prefix) {
    ImGui::SameLine();
    const bool on = view.query.prefix == name;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::SmallButton(name.c_str())) {
      view.query.prefix = name;
      view.kind = MapKind::Query;
    }
    if (on) ImGui::PopStyleColor();
  }
}

// The view's figure fitted into `region` (a pixel short: the window clips its last
// column), recorded as the view's shown figure.
std::optional<FigureHover> show_view_figure(ViewState& view, TextureCache& cache, const char* slot,
                                            const std::string& key,
                                            const std::function<FigureJob()>& make,
                                            ImVec2 region) {
  const int w = std::max(200, int(region.x) - 2), h = std::max(150, int(region.y));
  return show_figure(cache, slot, key + "|" + std::to_string(w) + "x" + std::to_string(h), make,
                     w, h, &view.shown_figure);
}

// The token of `map` under the mouse on a map panel (data coordinates are pixels of the
// panel's picture, possibly zoomed: the picture's full extent is its image layer's):
// hover shows it, a click picks it as the query; the wheel zooms and a right-drag pans
// when `zoomable`.
void hover_token(const Workspace& ws, ViewState& v, int model, const ShownMap& map,
                 const FigureHover& at, bool zoomable) {
  if (!map.ok || map.rows <= 0 || map.cols <= 0) return;
  const viz::Panel& panel = at.geometry->figure.panels[size_t(at.panel)];
  double full_w = 0, full_h = 0;
  for (const auto& item : panel.items)
    if (const auto* im = std::get_if<viz::ImageLayer>(&item)) full_w = im->x1, full_h = im->y1;
  if (full_w <= 0 || full_h <= 0) return;
  const double u = at.x / full_w, w = at.y / full_h;  // 0..1 over the whole picture
  const int col = std::clamp(int(u * map.cols), 0, map.cols - 1);
  const int row = std::clamp(int(w * map.rows), 0, map.rows - 1);
  v.hover_row = row;
  v.hover_col = col;
  token_tooltip(ws, v, model, map, row, col);
  // The query and the edits live on the first layer's grid: map the cell there by area.
  const viz::GridCell c =
      viz::map_cell(viz::GridCell{row, col}, map.rows, map.cols, map.first_rows, map.first_cols);
  if (v.edit.on) {  // what-if editing: a press paints, a drag goes on painting
    if (ImGui::IsMouseClicked(0))
      request_paint(ws, v, c.row, c.col, true);
    else if (ImGui::IsMouseDown(0) && v.edit.last_row >= 0)
      request_paint(ws, v, c.row, c.col, false);
  } else if (ImGui::IsMouseClicked(0)) {
    set_query_cell(ws, v, c.row, c.col);
  }
  if (!zoomable) return;
  const float z = std::max(1.0f, v.zoom);
  const float wheel = ImGui::GetIO().MouseWheel;
  if (wheel != 0.0f) {
    const float nz = std::clamp(z * (wheel > 0 ? 1.25f : 0.8f), 1.0f, 16.0f);
    // Keep the point under the mouse fixed.
    v.pan_x = std::clamp(float(u) - (float(u) - v.pan_x) * z / nz, 0.0f, 1.0f - 1.0f / nz);
    v.pan_y = std::clamp(float(w) - (float(w) - v.pan_y) * z / nz, 0.0f, 1.0f - 1.0f / nz);
    v.zoom = nz;
  }
  if (ImGui::IsMouseDragging(1)) {
    const ImVec2 d = ImGui::GetIO().MouseDelta;
    const viz::Rect& plot = at.geometry->layout.panels[size_t(at.panel)].plot;
    const double px = plot.w * at.geometry->dpi / 72.0;  // the panel's width in pixels
    v.pan_x = std::clamp(v.pan_x - float(double(d.x) / px) / z, 0.0f, 1.0f - 1.0f / z);
    v.pan_y = std::clamp(v.pan_y - float(double(d.y) / px) / z, 0.0f, 1.0f - 1.0f / z);
  }
}

void draw_single(const Workspace& ws, const FrameView& frame, ViewState& view,
                 TextureCache& cache) {
  const int m = view.model;
  const ShownMap none;
  const ShownMap& map = m >= 0 && m < int(frame.models.size()) ? frame.models[size_t(m)] : none;
  const std::string title = ws.models.empty() ? "" : ws.models[size_t(m)].info.name;
  std::string query = "query -";
  if (map.ok && is_explanation(view.kind)) {  // a class, not a query
    query =
        std::to_string(std::lround(1000.0 * map.seconds)) + " ms: a forward and a backward pass";
  } else if (map.ok) {  // the query the map answers, and how long it took from the traces
    const MapQuery& q = map.query;
    query =
        "query " + (!q.prefix.empty() ? q.prefix + " token"
                    : q.row < 0       ? std::string("grid centre")
                                : "(" + std::to_string(q.row) + ", " + std::to_string(q.col) + ")");
    query += " (" + std::to_string(std::lround(1000.0 * map.seconds)) + " ms from the trace)";
  }
  ImGui::Text("%s  |  %s  |  %s", title.c_str(), map.ok ? map.label.c_str() : "-", query.c_str());
  if (!map.grid_note.empty()) ImGui::TextDisabled("%s", map.grid_note.c_str());
  draw_prefix_chips(ws, view);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float footer = ImGui::GetTextLineHeightWithSpacing() * 1.2f;
  const ImVec2 region(avail.x, avail.y - footer);
  if (view.show_input) {  // the sidebar's "the picture the model saw"
    draw_input_picture(ws, view, cache, m, ImVec2(avail.x - 90.0f, avail.y - footer),
                       kOverlayMinSide);
    return;
  }
  if (!map.ok) {
    ImGui::TextWrapped("%s", map.why.c_str());
    return;
  }
  // Each view is the figure Export writes: a class explanation's row, the heads grid
  // (the report's head_maps: input, every head, their mean), or the map with its colorbar
  // (the report's "map", zoomed as the view is).
  if (is_explanation(view.kind)) {
    show_view_figure(
        view, cache, "single", explanation_figure_key(ws, view),
        [&] { return maps_figure(ws, view); }, region);
    return;
  }
  if (!frame.heads.empty()) {
    const auto at = show_view_figure(
        view, cache, "single", heads_figure_key(ws, view, frame),
        [&] { return maps_figure(ws, view); }, region);
    // Panels: the input, then one per head (then their mean).
    if (at && at->panel >= 1 && at->panel <= int(frame.heads.size()))
      hover_token(ws, view, m, frame.heads[size_t(at->panel - 1)], *at, false);
    return;
  }
  if (edit_difference_shown(ws, view)) {  // original, edited, edited − original
    const auto at = show_view_figure(
        view, cache, "single", edit_difference_figure_key(ws, view, frame),
        [&] { return edit_difference_figure_job(ws, view); }, region);
    if (at && (at->panel == 0 || at->panel == 1))
      hover_token(ws, view, m, at->panel == 0 ? frame.original : map, *at, false);
    return;
  }
  const auto at = show_view_figure(
      view, cache, "single", single_map_figure_key(ws, view, frame),
      [&] { return single_map_figure_job(ws, view); }, region);
  if (at && at->panel == 0) hover_token(ws, view, m, map, *at, true);
  if (view.hover_row >= 0)
    ImGui::Text("hover: token (%d, %d)   zoom %.0f%%   (wheel: zoom, right-drag: pan, click: %s)",
                view.hover_row, view.hover_col, double(view.zoom * 100),
                view.edit.on ? "edit" : "query");
}

// The compare view: every model's map side by side (compare_figure.h).
void draw_compare(const Workspace& ws, const FrameView& frame, ViewState& view,
                  TextureCache& cache) {
  bool any = false;
  for (const auto& m : ws.models) any |= m.status == LoadStatus::Ready;
  if (!any) {
    ImGui::TextUnformatted("No model loaded yet.");
    return;
  }
  const ComparePanels panels = compare_panels(ws, view);
  if (view.difference && !panels.difference)
    ImGui::TextDisabled("difference: pick two different models with maps (sidebar, A and B)");
  if (view.edit.difference && !current_edits_text(ws, view).empty())
    ImGui::TextDisabled(
        "edited − original shows in the single view (c); these are the edited maps");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 region(avail.x, avail.y - 30.0f);
  if (is_explanation(view.kind)) {
    // Class explanations have their own figure (one row per model, each on its own scale).
    show_view_figure(
        view, cache, "compare", explanation_figure_key(ws, view),
        [&] { return maps_figure(ws, view); }, region);
    return;
  }
  const auto at = show_view_figure(
      view, cache, "compare", compare_figure_key(ws, view, frame, panels),
      [&] { return compare_figure_job(ws, view); }, region);
  if (!at) return;
  const int model = panels.model_of(at->panel);
  if (model >= 0 && model < int(frame.models.size()))
    hover_token(ws, view, model, frame.models[size_t(model)], *at, false);
}

}  // namespace

void draw_maps_tab(const Workspace& ws, const FrameView& frame, ViewState& view,
                   TextureCache& cache) {
  view.hover_row = view.hover_col = -1;  // set again below while hovered
  if (!ImGui::IsMouseDown(0)) view.edit.last_row = view.edit.last_col = -1;  // the stroke ended
  view.shown_figure = {};                // set again by a view drawn as a figure
  if (ws.models.empty() || ws.images.empty()) {
    ImGui::TextWrapped("Open an image and a model (File menu, or drop files onto the window).");
    return;
  }
  if (view.compare)
    draw_compare(ws, frame, view, cache);
  else
    draw_single(ws, frame, view, cache);
}

}  // namespace attnlab::gui
