// The Projector tab's scatter plots; see projector_plot.h.
#include "app/gui/views/projector_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app/gui/projector/projector.h"
#include "app/gui/views/projector_colours.h"
#include "app/session/embedding_projection.h"

namespace attnlab::gui {
namespace {

constexpr float kPointRadius = 3.0f;
constexpr float kHoverPixels = 7.0f;

// Data <-> screen for this frame: the projection's bounds fitted into the plot (equal
// scales on both axes, y up), then the zoom about the plot's centre and the pan.
struct PlotMap {
  float cx = 0, cy = 0, scale = 1;  // data centre, pixels per unit
  ImVec2 origin, size;              // the plot rectangle
  float pan_x = 0, pan_y = 0;
  ImVec2 to_screen(float x, float y) const {
    return ImVec2(origin.x + size.x * 0.5f + pan_x + (x - cx) * scale,
                  origin.y + size.y * 0.5f + pan_y - (y - cy) * scale);
  }
  void to_data(ImVec2 s, float* x, float* y) const {
    *x = cx + (s.x - origin.x - size.x * 0.5f - pan_x) / scale;
    *y = cy - (s.y - origin.y - size.y * 0.5f - pan_y) / scale;
  }
};

PlotMap plot_map(const ProjectorSide& s, ImVec2 origin, ImVec2 size) {
  float x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (size_t i = 0; i + 1 < s.xy.size(); i += 2) {
    x0 = std::min(x0, s.xy[i]);
    x1 = std::max(x1, s.xy[i]);
    y0 = std::min(y0, s.xy[i + 1]);
    y1 = std::max(y1, s.xy[i + 1]);
  }
  PlotMap m;
  m.origin = origin;
  m.size = size;
  m.cx = 0.5f * (x0 + x1);
  m.cy = 0.5f * (y0 + y1);
  const float dx = std::max(x1 - x0, 1e-6f), dy = std::max(y1 - y0, 1e-6f);
  m.scale = 0.92f * std::min(size.x / dx, size.y / dy) * s.zoom;
  m.pan_x = s.pan_x;
  m.pan_y = s.pan_y;
  return m;
}

}  // namespace

const GlTexture* projector_thumbnail(ProjectorState& p, int i) {
  const auto it = p.thumbs.find(i);
  if (it != p.thumbs.end()) return &it->second;
  const EmbedFolder& d = *p.main.data;
  if (!d.has_pixels.empty() && d.has_pixels[size_t(i)]) {
    const size_t n = size_t(d.thumb_w) * size_t(d.thumb_h);
    std::vector<uint8_t> rgb(n * 3);
    for (size_t k = 0; k < n; ++k)
      rgb[3 * k] = rgb[3 * k + 1] = rgb[3 * k + 2] = d.pixels[size_t(i) * n + k];
    GlTexture t;
    std::string error;
    if (!t.upload_rgb(rgb.data(), d.thumb_w, d.thumb_h, &error)) return nullptr;
    return &(p.thumbs[i] = std::move(t));
  }
  if (!p.thumb_errors.count(i)) p.thumb_wanted = i;
  return nullptr;
}

void draw_projector_tooltip(ProjectorState& p, const EmbedFolder& d, int i, const ImVec2* at) {
  const EmbedRow& r = d.rows[size_t(i)];
  if (at) ImGui::SetNextWindowPos(ImVec2(at->x + 14, at->y + 14));
  ImGui::BeginTooltip();
  if (const GlTexture* t = projector_thumbnail(p, i)) {
    const float side = 112.0f;
    const float s = side / float(std::max(t->width(), t->height()));
    ImGui::Image(reinterpret_cast<ImTextureID>(t->handle()),
                 ImVec2(float(t->width()) * s, float(t->height()) * s));
  } else if (p.thumb_errors.count(i)) {
    ImGui::TextDisabled("(no picture: %s)", p.thumb_errors[i].c_str());
  } else {
    ImGui::TextDisabled("(loading the picture...)");
  }
  ImGui::Text("#%d  %s", i, r.image.c_str());
  ImGui::Text("label: %s", projector_name_of(d.label_names, r.label).c_str());
  if (r.prediction >= 0) {
    ImGui::Text("prediction: %s", projector_name_of(d.class_names, r.prediction).c_str());
    if (r.confidence >= 0) ImGui::Text("confidence: %.3f", r.confidence);
  }
  if (r.correct >= 0)
    ImGui::TextColored(r.correct ? ImVec4(0.4f, 0.85f, 0.4f, 1) : ImVec4(1, 0.45f, 0.4f, 1), "%s",
                       r.correct ? "correct" : "wrong");
  if (d.has_heads() && projector_head_colour(p.colour)) {
    const bool rank = p.colour == ProjectorColour::HeadRank;
    const char* what = rank ? "head output rank" : "head entropy";
    const float v = d.head_value(i, p.head_layer, p.head_index, rank);
    if (std::isfinite(v))
      ImGui::Text("%s: %.3f", what, double(v));
    else
      ImGui::TextDisabled("%s: none (no such head)", what);
  }
  ImGui::TextDisabled("click: open it in the workspace");
  ImGui::EndTooltip();
}

namespace {

// The row nearest the mouse within kHoverPixels, or -1.
int point_under_mouse(const ProjectorSide& s, const PlotMap& m, ImVec2 mouse) {
  int hovered = -1;
  float best = kHoverPixels * kHoverPixels;
  for (size_t i = 0; 2 * i + 1 < s.xy.size(); ++i) {
    const ImVec2 at = m.to_screen(s.xy[2 * i], s.xy[2 * i + 1]);
    const float dx = at.x - mouse.x, dy = at.y - mouse.y;
    if (dx * dx + dy * dy < best) {
      best = dx * dx + dy * dy;
      hovered = int(i);
    }
  }
  return hovered;
}

// The captions: the model (top left), the method and what it reports (bottom left), the
// gestures (top right, on the main plot).
void draw_captions(ImDrawList* dl, const ProjectorSide& s, bool main, ImVec2 origin, ImVec2 size) {
  const float line = ImGui::GetTextLineHeight();
  std::string title = main ? "A: " : "B: ";
  title += s.data->description.empty() ? s.data->dir : s.data->description;
  dl->AddText(ImVec2(origin.x + 8, origin.y + 6), IM_COL32(220, 220, 220, 255), title.c_str());
  std::string caption = session::projection_method_title(s.shown);
  if (!s.note.empty()) caption += ": " + s.note;
  char took[32];
  std::snprintf(took, sizeof took, " (%.1f s)", s.seconds);
  caption += took;
  dl->AddText(ImVec2(origin.x + 8, origin.y + size.y - line - 6), IM_COL32(200, 200, 200, 255),
              caption.c_str());
  if (!main) return;
  const char* help = "wheel: zoom  right-drag: pan  shift-drag: select  click: open";
  const float help_w = ImGui::CalcTextSize(help).x;
  if (help_w + 16 > size.x) return;  // a narrow plot (two side by side): the docs say it
  dl->AddText(ImVec2(origin.x + size.x - help_w - 8, origin.y + line + 10),
              IM_COL32(150, 150, 150, 255), help);
}

}  // namespace

int draw_projector_plot(ProjectorState& p, ProjectorPlot plot, FrameRequests& requests,
                        StatusBarState& status, ImVec2 size) {
  ProjectorSide& s = p.side(plot);
  const EmbedFolder& d = *s.data;
  const size_t n = std::min(size_t(d.n), s.xy.size() / 2);
  const bool main = plot == ProjectorPlot::Main;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(main ? "##plot" : "##plot_compare", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered_plot = ImGui::IsItemHovered();
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y),
                    IM_COL32(24, 24, 28, 255));
  dl->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  PlotMap m = plot_map(s, origin, size);
  const ImGuiIO& io = ImGui::GetIO();

  // Zoom about the mouse, pan with the right button.
  if (hovered_plot && io.MouseWheel != 0.0f) {
    const float factor = std::pow(1.15f, io.MouseWheel);
    const float mx = io.MousePos.x - origin.x - size.x * 0.5f;
    const float my = io.MousePos.y - origin.y - size.y * 0.5f;
    s.pan_x = mx - (mx - s.pan_x) * factor;
    s.pan_y = my - (my - s.pan_y) * factor;
    s.zoom *= factor;
    m = plot_map(s, origin, size);
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Right)) {
    s.pan_x += io.MouseDelta.x;
    s.pan_y += io.MouseDelta.y;
    m = plot_map(s, origin, size);
  }

  // The row under the mouse here; else the one hovered in the other plot last frame, or
  // the one a script hovers (its tooltip on the main plot).
  const int own = hovered_plot && !p.dragging ? point_under_mouse(s, m, io.MousePos) : -1;
  const bool scripted = own < 0 && main && p.script_hover >= 0 && p.script_hover < int(n);
  const int ring = own >= 0 ? own : scripted ? p.script_hover : p.hovered < int(n) ? p.hovered : -1;

  // Shift + left drag: a box; a left click on a point: open it.
  if (hovered_plot && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    if (io.KeyShift) {
      p.dragging = true;
      p.drag_plot = plot;
      m.to_data(io.MousePos, &p.drag_x0, &p.drag_y0);
    } else if (own >= 0) {
      open_point(p, own, requests, status);
    } else {
      clear_selection(p);
    }
  }
  if (p.dragging && p.drag_plot == plot) {
    float x = 0, y = 0;
    m.to_data(io.MousePos, &x, &y);
    const ImVec2 a = m.to_screen(p.drag_x0, p.drag_y0);
    dl->AddRectFilled(a, io.MousePos, IM_COL32(255, 255, 255, 30));
    dl->AddRect(a, io.MousePos, IM_COL32(255, 255, 255, 200));
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      p.dragging = false;
      select_box(p, p.drag_x0, p.drag_y0, x, y, plot);
    }
  }

  // The points: the selection (when there is one) over the rest, which fades.
  const bool sel = p.has_selection;
  std::vector<uint8_t> in_sel;
  if (sel) {
    in_sel.assign(n, 0);
    for (const int i : p.selected)
      if (i >= 0 && size_t(i) < n) in_sel[size_t(i)] = 1;
  }
  int drawn_selected = 0;
  const ProjectorHeadColouring heads =
      projector_head_colour(p.colour)
          ? projector_head_colouring(d, p.head_layer, p.head_index,
                                     p.colour == ProjectorColour::HeadRank)
          : ProjectorHeadColouring{};
  // The points without ImGui's anti-aliased fringe: a 3-pixel disc gains little from it, and
  // it triples the vertices (10 000 points: the frame's CPU time and the rasteriser's).
  const ImDrawListFlags flags = dl->Flags;
  dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
  for (int pass = 0; pass < (sel ? 2 : 1); ++pass)
    for (size_t i = 0; i < n; ++i) {
      if (sel && in_sel[i] != pass) continue;
      const ImVec2 at = m.to_screen(s.xy[2 * i], s.xy[2 * i + 1]);
      if (at.x < origin.x - 4 || at.y < origin.y - 4 || at.x > origin.x + size.x + 4 ||
          at.y > origin.y + size.y + 4)
        continue;
      const int alpha = sel && !in_sel[i] ? 60 : 220;
      drawn_selected += sel && in_sel[i];
      dl->AddCircleFilled(at, kPointRadius, projector_point_colour(d, i, p.colour, alpha, heads),
                          8);
    }
  dl->Flags = flags;
  s.drawn_selected = drawn_selected;
  if (sel && p.sel_plot == plot) {
    const ImVec2 a = m.to_screen(p.sel_x0, p.sel_y1), b = m.to_screen(p.sel_x1, p.sel_y0);
    dl->AddRect(a, b, IM_COL32(255, 255, 255, 170), 0, 0, 1.5f);
  }
  // Patch retrieval: the matches' images ringed in yellow, the query's image boxed.
  const ProjectorRetrieval& found = p.retrieval;
  for (const RetrievalMatch& mt : found.matches)
    if (mt.row >= 0 && size_t(mt.row) < n)
      dl->AddCircle(m.to_screen(s.xy[2 * size_t(mt.row)], s.xy[2 * size_t(mt.row) + 1]),
                    kPointRadius + 2.5f, IM_COL32(255, 220, 0, 230), 12, 1.5f);
  if (!found.matches.empty() && found.query_row >= 0 && size_t(found.query_row) < n) {
    const ImVec2 q =
        m.to_screen(s.xy[2 * size_t(found.query_row)], s.xy[2 * size_t(found.query_row) + 1]);
    const float h = kPointRadius + 4.0f;
    dl->AddRect(ImVec2(q.x - h, q.y - h), ImVec2(q.x + h, q.y + h), IM_COL32(255, 220, 0, 255), 0,
                0, 2.0f);
  }
  ImVec2 ring_at;
  if (ring >= 0) {
    ring_at = m.to_screen(s.xy[2 * size_t(ring)], s.xy[2 * size_t(ring) + 1]);
    dl->AddCircle(ring_at, kPointRadius + 3.5f, IM_COL32(255, 255, 255, 255), 16, 2.0f);
  }
  draw_captions(dl, s, main, origin, size);
  dl->PopClipRect();
  if (own >= 0) draw_projector_tooltip(p, d, own, nullptr);
  if (scripted) draw_projector_tooltip(p, d, ring, &ring_at);
  return own >= 0 ? own : scripted ? p.script_hover : -1;
}

}  // namespace attnlab::gui
