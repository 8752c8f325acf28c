// The Maps tab; see map_view.h.
#include "app/gui/map_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/gui/input_view.h"
#include "app/gui/map_source.h"
#include "app/gui/workspace.h"
#include "core/io/text.h"
#include "viz/figures/map_panels.h"

namespace attnlab::gui {
namespace {

// Three significant digits: what the map view shows of a weight.
std::string fmt3(double v) {
  return text::format_g(v, 3);
}

constexpr int kOverlayMinSide = 448;  // overlays are built at least this large: crisp when zoomed

// The overlay texture of `map` over the model's picture drawn with `style`, from the
// cache. `slot` names the place on screen (single view, head 3 of the grid, compare
// column 2); the slot's previous overlay while the new one is drawn, nullptr before any.
const GlTexture* overlay_texture(const GuiState& state, TextureCache& cache, int model,
                                 const ShownMap& map, viz::ValueRange range,
                                 const viz::OverlayStyle& style, const std::string& slot) {
  const ResultSlot* r = result_of(state, model, state.view.image);
  if (!r || !r->analysis) return nullptr;
  char id[32];
  std::snprintf(id, sizeof id, "%p", map.source);
  // The grid and picture sizes too: a model loaded again at another input size may get
  // its maps at the address its old ones had.
  const std::string key = std::to_string(model) + "|" + std::to_string(state.view.image) + "|" +
                          id + "|" + std::to_string(map.rows) + "x" + std::to_string(map.cols) +
                          "|" + std::to_string(r->analysis->picture.height) + "x" +
                          std::to_string(r->analysis->picture.width) + "|" + map.label + "|" +
                          viz::colormap_name(style.cmap) + "|" + fmt3(style.alpha) + "|" +
                          viz::upsample_name(style.upsample) + "|" +
                          (style.grey_background ? "grey" : "colour") + "|" + fmt3(range.lo) + "|" +
                          fmt3(range.hi);
  return cache.get(slot, key, false, [&]() -> RenderWorker::Job {
    // Owns what it reads: the analysis (immutable, shared) and a copy of the map.
    return [analysis = r->analysis, map, range, style]() {
      const viz::RgbaImage& pic = analysis->picture;
      const viz::RgbaImage big =
          viz::scale_image_nearest(pic, viz::upscale_factor(pic, kOverlayMinSide));
      return viz::overlay_map(big, map.values.data(), map.rows, map.cols, range, style);
    };
  });
}

// A vertical colorbar with its range, drawn with ImGui primitives.
void draw_colorbar(viz::Colormap cm, viz::ValueRange range, float height) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = 14.0f;
  constexpr int kSteps = 64;
  for (int i = 0; i < kSteps; ++i) {
    const viz::Rgba8 c = viz::colormap_at(cm, 1.0f - (float(i) + 0.5f) / kSteps);
    dl->AddRectFilled(ImVec2(p.x, p.y + height * i / kSteps),
                      ImVec2(p.x + w, p.y + height * (i + 1) / kSteps),
                      IM_COL32(c.r, c.g, c.b, 255));
  }
  dl->AddRect(p, ImVec2(p.x + w, p.y + height), IM_COL32(200, 200, 200, 255));
  dl->AddText(ImVec2(p.x + w + 4, p.y - 2), IM_COL32(220, 220, 220, 255), fmt3(range.hi).c_str());
  dl->AddText(ImVec2(p.x + w + 4, p.y + height - ImGui::GetFontSize()),
              IM_COL32(220, 220, 220, 255), fmt3(range.lo).c_str());
  ImGui::Dummy(ImVec2(w + 60.0f, height));
}

// The query cell on the map's grid (the query lives on the model's first-layer grid).
std::optional<viz::GridCell> query_cell(const GuiState& state, int model, const ShownMap& m) {
  const MapQuery q = wanted_query(state, model);
  if (!q.prefix.empty() || state.view.kind == MapKind::Cls || is_explanation(state.view.kind) ||
      m.first_rows <= 0)
    return std::nullopt;
  const viz::GridCell c =
      q.row < 0 ? viz::GridCell{m.first_rows / 2, m.first_cols / 2} : viz::GridCell{q.row, q.col};
  return viz::map_cell(c, m.first_rows, m.first_cols, m.rows, m.cols);
}

// The hovered token and its weight; on an AnchorFormer layer also the token's soft
// assignment over the anchors (of the shown head, or the mean over heads).
void token_tooltip(const GuiState& state, int model, const ShownMap& map, int row, int col) {
  ImGui::BeginTooltip();
  ImGui::Text("token (%d, %d)  weight %s", row, col,
              fmt3(map.values[size_t(row * map.cols + col)]).c_str());
  const ResultSlot* r = result_of(state, model, state.view.image);
  const int layer = map.layer < 0 ? 0 : map.layer;
  // Anchor assignments belong to attention layers, not to a class explanation's grid.
  if (r && r->analysis && !is_explanation(state.view.kind) &&
      size_t(layer) < r->analysis->layers.size()) {
    const LayerInfo& l = r->analysis->layers[size_t(layer)];
    if (l.rows == map.rows && l.cols == map.cols) {
      const int token = int(l.prefix.size()) + row * l.cols + col;
      const int head = state.view.head < l.heads ? state.view.head : -1;
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

// One map view of `size`; interactive views take hover, click, zoom and pan.
void draw_map_image(const GuiState& state, ViewState& v, TextureCache& cache, int model,
                    const ShownMap& map, viz::ValueRange range, const viz::OverlayStyle& style,
                    ImVec2 size, bool interactive, const char* id) {
  ImGui::PushID(id);
  if (!map.ok) {
    ImGui::BeginChild("##pending", size, true);
    ImGui::TextWrapped("%s", map.why.c_str());
    ImGui::EndChild();
    ImGui::PopID();
    return;
  }
  const GlTexture* tex = overlay_texture(state, cache, model, map, range, style, id);
  if (!tex) {
    ImGui::BeginChild("##drawing", size, true);
    ImGui::TextUnformatted("drawing...");
    ImGui::EndChild();
    ImGui::PopID();
    return;
  }
  const float aspect = float(tex->height()) / float(tex->width());
  ImVec2 s = size;
  if (s.x * aspect > s.y)
    s.x = s.y / aspect;
  else
    s.y = s.x * aspect;
  const float z = std::max(1.0f, v.zoom);
  const ImVec2 uv0(v.pan_x, v.pan_y), uv1(v.pan_x + 1.0f / z, v.pan_y + 1.0f / z);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Image(reinterpret_cast<ImTextureID>(tex->handle()), s, uv0, uv1);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const auto to_screen = [&](double gx, double gy) {  // grid coordinates -> screen
    const float u = float(gx / map.cols), w = float(gy / map.rows);
    return ImVec2(origin.x + (u - uv0.x) * z * s.x, origin.y + (w - uv0.y) * z * s.y);
  };
  dl->PushClipRect(origin, ImVec2(origin.x + s.x, origin.y + s.y), true);
  if (map.rows * map.cols <= 64 * 64 &&
      s.x / map.cols * z >= 6.0f) {  // grid when cells are visible
    for (int c = 1; c < map.cols; ++c)
      dl->AddLine(to_screen(c, 0), to_screen(c, map.rows), IM_COL32(255, 255, 255, 40));
    for (int r = 1; r < map.rows; ++r)
      dl->AddLine(to_screen(0, r), to_screen(map.cols, r), IM_COL32(255, 255, 255, 40));
  }
  if (map.window > 1 && s.x / map.cols * z * map.window >= 6.0f) {
    // Local attention windows (HiLo), tiled from the top-left: a query attends within its
    // own window in the Hi-Fi heads, and each window is one pooled key of the Lo-Fi heads.
    // Swin's shifted windows start at (shift, shift); the image border cuts the wrapped ones.
    const ImU32 edge = IM_COL32(255, 170, 40, 150);
    const int first = map.window_shift > 0 ? map.window_shift : map.window;
    for (int c = first; c < map.cols; c += map.window)
      dl->AddLine(to_screen(c, 0), to_screen(c, map.rows), edge, 1.5f);
    for (int r = first; r < map.rows; r += map.window)
      dl->AddLine(to_screen(0, r), to_screen(map.cols, r), edge, 1.5f);
  }
  if (const auto q = query_cell(state, model, map))
    dl->AddRect(to_screen(q->col, q->row), to_screen(q->col + 1, q->row + 1),
                IM_COL32(255, 40, 40, 255), 0, 0, 2.0f);
  if (hovered) {
    const ImVec2 mouse = ImGui::GetMousePos();
    const float u = uv0.x + (mouse.x - origin.x) / (z * s.x),
                w = uv0.y + (mouse.y - origin.y) / (z * s.y);
    const int hc = std::clamp(int(u * map.cols), 0, map.cols - 1),
              hr = std::clamp(int(w * map.rows), 0, map.rows - 1);
    v.hover_row = hr;
    v.hover_col = hc;
    dl->AddRect(to_screen(hc, hr), to_screen(hc + 1, hr + 1), IM_COL32(255, 255, 255, 200), 0, 0,
                1.5f);
    token_tooltip(state, model, map, hr, hc);
    if (interactive && ImGui::IsMouseClicked(0)) {
      // The query lives on the first layer's grid: map the clicked cell there by area.
      const viz::GridCell c =
          viz::map_cell(viz::GridCell{hr, hc}, map.rows, map.cols, map.first_rows, map.first_cols);
      set_query_cell(state, v, c.row, c.col);
    }
    const float wheel = ImGui::GetIO().MouseWheel;
    if (interactive && wheel != 0.0f) {
      const float nz = std::clamp(z * (wheel > 0 ? 1.25f : 0.8f), 1.0f, 16.0f);
      // Keep the point under the mouse fixed.
      v.pan_x = std::clamp(u - (u - v.pan_x) * z / nz, 0.0f, 1.0f - 1.0f / nz);
      v.pan_y = std::clamp(w - (w - v.pan_y) * z / nz, 0.0f, 1.0f - 1.0f / nz);
      v.zoom = nz;
    }
    if (interactive && ImGui::IsMouseDragging(1)) {
      const ImVec2 d = ImGui::GetIO().MouseDelta;
      v.pan_x = std::clamp(v.pan_x - d.x / (z * s.x), 0.0f, 1.0f - 1.0f / z);
      v.pan_y = std::clamp(v.pan_y - d.y / (z * s.y), 0.0f, 1.0f - 1.0f / z);
    }
  }
  dl->PopClipRect();
  ImGui::PopID();
}

void draw_prefix_chips(const GuiState& state, ViewState& view) {
  const ResultSlot* r = result_of(state, state.view.model, state.view.image);
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

void draw_single(const GuiState& state, ViewState& view, TextureCache& cache) {
  const int m = state.view.model;
  const ShownMap none;
  const ShownMap& map =
      m >= 0 && m < int(state.frame.models.size()) ? state.frame.models[size_t(m)] : none;
  const viz::ValueRange range = map.ok ? map_value_range(state, map, {}) : viz::ValueRange{};
  const std::string title = state.models.empty() ? "" : state.models[size_t(m)].info.name;
  std::string query = "query -";
  if (map.ok && is_explanation(state.view.kind)) {  // a class, not a query
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
  draw_prefix_chips(state, view);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float footer = ImGui::GetTextLineHeightWithSpacing() * 1.2f;
  if (state.view.show_input) {  // the sidebar's "the picture the model saw"
    draw_input_picture(state, cache, m, ImVec2(avail.x - 90.0f, avail.y - footer), kOverlayMinSide);
    return;
  }
  if (!state.frame.heads.empty()) {  // the heads grid (compute_frame_view filled it)
    const int heads = int(state.frame.heads.size());
    const int cols = int(std::ceil(std::sqrt(double(heads))));
    const float cell =
        std::min(avail.x / cols, (avail.y - footer) / float(std::ceil(double(heads) / cols))) -
        8.0f;
    for (int h = 0; h < heads; ++h) {
      if (h % cols) ImGui::SameLine();
      ImGui::BeginGroup();
      const ShownMap& hm = state.frame.heads[size_t(h)];
      ImGui::Text("head %d", h);
      draw_map_image(state, view, cache, m, hm,
                     hm.ok ? map_value_range(state, hm, {}) : viz::ValueRange{}, state.view.style,
                     ImVec2(cell, cell - ImGui::GetTextLineHeight()), true,
                     ("h" + std::to_string(h)).c_str());
      ImGui::EndGroup();
    }
    return;
  }
  draw_map_image(state, view, cache, m, map, range, state.view.style,
                 ImVec2(avail.x - 90.0f, avail.y - footer), true, "single");
  if (map.ok) {
    ImGui::SameLine();
    draw_colorbar(state.view.style.cmap, range, std::min(avail.y - footer, 300.0f));
  }
  if (state.view.hover_row >= 0)
    ImGui::Text(
        "hover: token (%d, %d)   zoom %.0f%%   (wheel: zoom, right-drag: pan, click: query)",
        state.view.hover_row, state.view.hover_col, double(state.view.zoom * 100));
}

void draw_compare(const GuiState& state, ViewState& view, TextureCache& cache) {
  std::vector<int> ready;
  for (int m = 0; m < int(state.models.size()); ++m)
    if (state.models[size_t(m)].status == LoadStatus::Ready) ready.push_back(m);
  if (ready.empty()) {
    ImGui::TextUnformatted("No model loaded yet.");
    return;
  }
  std::vector<ShownMap> maps;
  for (int m : ready)
    maps.push_back(m < int(state.frame.models.size()) ? state.frame.models[size_t(m)] : ShownMap{});
  std::vector<const ShownMap*> all;
  for (const auto& m : maps) all.push_back(&m);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const int n = int(ready.size()) + (state.view.difference ? 1 : 0);
  // Every model in view at once (the whole zoo side by side): the column count that gives
  // the largest square panels, each under its two header lines.
  const float header = 2.0f * ImGui::GetTextLineHeightWithSpacing() + 8.0f;
  int cols = 1;
  float w = 0;
  for (int c = 1; c <= n; ++c) {
    const int r = (n + c - 1) / c;
    const float side = std::min(avail.x / float(c) - 10.0f, avail.y / float(r) - header);
    if (side > w) w = side, cols = c;
  }
  w = std::max(w, 80.0f);
  const viz::ValueRange shared_range =
      maps.front().ok ? map_value_range(state, maps.front(), all) : viz::ValueRange{};
  // Class explanations of different models are gradients of different logits: no common
  // scale means anything there, so each is scaled on its own (map_value_range agrees).
  const bool shared = state.view.shared_scale && !is_explanation(state.view.kind);
  // Signed maps on the shared scale (Castling) read right only on a diverging colormap.
  viz::OverlayStyle style = state.view.style;
  if (shared && shared_range.lo < 0) style.cmap = viz::signed_colormap(style.cmap);
  for (size_t k = 0; k < ready.size(); ++k) {
    if (k % size_t(cols)) ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::Text("%s", state.models[size_t(ready[k])].info.name.c_str());
    ImGui::TextDisabled("%s", maps[k].ok ? maps[k].label.c_str() : "");
    const viz::ValueRange range =
        shared ? shared_range
               : (maps[k].ok ? map_value_range(state, maps[k], {}) : viz::ValueRange{});
    draw_map_image(state, view, cache, ready[k], maps[k], range, style, ImVec2(w, w), true,
                   ("c" + std::to_string(k)).c_str());
    ImGui::EndGroup();
  }
  if (state.view.difference) {
    if (ready.size() % size_t(cols)) ImGui::SameLine();
    ImGui::BeginGroup();
    if (ready.size() < 2 || !maps[0].ok || !maps[1].ok) {
      ImGui::TextWrapped("difference: needs two models with maps");
    } else if (maps[0].rows != maps[1].rows || maps[0].cols != maps[1].cols) {
      ImGui::TextWrapped("difference: the two maps have different grids");
    } else {
      ShownMap d = maps[0];
      for (size_t i = 0; i < d.values.size(); ++i) d.values[i] -= maps[1].values[i];
      d.label = "difference";
      double mx = 0;
      for (float x : d.values) mx = std::max(mx, double(std::abs(x)));
      viz::OverlayStyle diff_style = state.view.style;
      diff_style.cmap = viz::signed_colormap(diff_style.cmap);
      ImGui::Text("%s - %s", state.models[size_t(ready[0])].info.name.c_str(),
                  state.models[size_t(ready[1])].info.name.c_str());
      ImGui::TextDisabled("blue: %s more", state.models[size_t(ready[1])].info.name.c_str());
      draw_map_image(state, view, cache, ready[0], d, viz::ValueRange{-mx, mx}, diff_style,
                     ImVec2(w, w), false, "diff");
    }
    ImGui::EndGroup();
  }
  if (is_explanation(state.view.kind))
    ImGui::TextDisabled("each map on its own scale: the models explain different logits");
  if (maps.front().ok && shared) {
    draw_colorbar(style.cmap, shared_range, 120.0f);
    if (style.cmap != state.view.style.cmap)
      ImGui::TextDisabled("some weights are negative: a diverging map, symmetric about 0");
  }
}

}  // namespace

void draw_maps_tab(const GuiState& state, ViewState& view, TextureCache& cache) {
  view.hover_row = view.hover_col = -1;  // set again below while hovered
  if (state.models.empty() || state.images.empty()) {
    ImGui::TextWrapped("Open an image and a model (File menu, or drop files onto the window).");
    return;
  }
  if (view.compare)
    draw_compare(state, view, cache);
  else
    draw_single(state, view, cache);
}

}  // namespace attnlab::gui
