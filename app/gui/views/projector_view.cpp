// The Projector tab; see projector_view.h.
#include "app/gui/views/projector_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app/gui/projector/projector.h"
#include "app/gui/views/theme.h"
#include "viz/colormap.h"

namespace attnlab::gui {
namespace {

constexpr float kSidePanelWidth = 290.0f;
constexpr float kPointRadius = 3.0f;
constexpr float kHoverPixels = 7.0f;

// matplotlib's tab10 and tab20 (the categorical palettes of its scatter plots).
constexpr uint32_t kTab10[10] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
constexpr uint32_t kTab20[20] = {0x1f77b4, 0xaec7e8, 0xff7f0e, 0xffbb78, 0x2ca02c,
                                 0x98df8a, 0xd62728, 0xff9896, 0x9467bd, 0xc5b0d5,
                                 0x8c564b, 0xc49c94, 0xe377c2, 0xf7b6d2, 0x7f7f7f,
                                 0xc7c7c7, 0xbcbd22, 0xdbdb8d, 0x17becf, 0x9edae5};

ImU32 hex_colour(uint32_t hex, int alpha = 255) {
  return IM_COL32((hex >> 16) & 0xff, (hex >> 8) & 0xff, hex & 0xff, alpha);
}

// Category k of `count`: tab10 up to 10, tab20 up to 20, then hues around the circle.
ImU32 category_colour(int64_t k, size_t count, int alpha = 255) {
  if (k < 0) return IM_COL32(150, 150, 150, alpha);
  if (count <= 10) return hex_colour(kTab10[k % 10], alpha);
  if (count <= 20) return hex_colour(kTab20[k % 20], alpha);
  float r = 0, g = 0, b = 0;
  ImGui::ColorConvertHSVtoRGB(std::fmod(float(k) * 0.618034f, 1.0f), 0.65f, 0.9f, r, g, b);
  return IM_COL32(int(r * 255), int(g * 255), int(b * 255), alpha);
}

ImU32 confidence_colour(double c, int alpha = 255) {
  if (c < 0) return IM_COL32(150, 150, 150, alpha);
  const viz::Rgba8 v = viz::colormap_at(viz::Colormap::Viridis, float(std::clamp(c, 0.0, 1.0)));
  return IM_COL32(v.r, v.g, v.b, alpha);
}

// The category a row is coloured by (label or prediction), or for correct/wrong 1 / 0 / -1.
int64_t category_of(const EmbedRow& r, ProjectorColour c) {
  switch (c) {
    case ProjectorColour::Label:
      return r.label;
    case ProjectorColour::Prediction:
      return r.prediction;
    case ProjectorColour::Correct:
      return r.correct;
    case ProjectorColour::Confidence:
      break;
  }
  return -1;
}

ImU32 point_colour(const EmbedFolder& d, size_t i, ProjectorColour c, int alpha) {
  const EmbedRow& r = d.rows[i];
  switch (c) {
    case ProjectorColour::Label:
      return category_colour(r.label, d.label_names.size(), alpha);
    case ProjectorColour::Prediction:
      return category_colour(r.prediction, d.class_names.size(), alpha);
    case ProjectorColour::Correct:
      return r.correct == 1   ? IM_COL32(44, 160, 44, alpha)
             : r.correct == 0 ? IM_COL32(214, 39, 40, alpha)
                              : IM_COL32(150, 150, 150, alpha);
    case ProjectorColour::Confidence:
      return confidence_colour(r.confidence, alpha);
  }
  return IM_COL32(150, 150, 150, alpha);
}

std::string name_or_index(const std::vector<std::string>& names, int64_t k) {
  if (k < 0) return "none";
  if (k < int64_t(names.size()) && !names[size_t(k)].empty()) return names[size_t(k)];
  return std::to_string(k);
}

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

PlotMap plot_map(const ProjectorState& p, ImVec2 origin, ImVec2 size) {
  float x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (size_t i = 0; i + 1 < p.xy.size(); i += 2) {
    x0 = std::min(x0, p.xy[i]);
    x1 = std::max(x1, p.xy[i]);
    y0 = std::min(y0, p.xy[i + 1]);
    y1 = std::max(y1, p.xy[i + 1]);
  }
  PlotMap m;
  m.origin = origin;
  m.size = size;
  m.cx = 0.5f * (x0 + x1);
  m.cy = 0.5f * (y0 + y1);
  const float dx = std::max(x1 - x0, 1e-6f), dy = std::max(y1 - y0, 1e-6f);
  m.scale = 0.92f * std::min(size.x / dx, size.y / dy) * p.zoom;
  m.pan_x = p.pan_x;
  m.pan_y = p.pan_y;
  return m;
}

// The point's picture for the tooltip: a dataset's pixels uploaded here (28×28, cheap), a
// file's asked of the load worker (the frame loop submits it).
const GlTexture* point_thumbnail(ProjectorState& p, int i) {
  const auto it = p.thumbs.find(i);
  if (it != p.thumbs.end()) return &it->second;
  const EmbedFolder& d = *p.data;
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

void draw_point_tooltip(ProjectorState& p, int i, const ImVec2* at) {
  const EmbedFolder& d = *p.data;
  const EmbedRow& r = d.rows[size_t(i)];
  if (at) ImGui::SetNextWindowPos(ImVec2(at->x + 14, at->y + 14));
  ImGui::BeginTooltip();
  if (const GlTexture* t = point_thumbnail(p, i)) {
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
  ImGui::Text("label: %s", name_or_index(d.label_names, r.label).c_str());
  if (r.prediction >= 0) {
    ImGui::Text("prediction: %s", name_or_index(d.class_names, r.prediction).c_str());
    if (r.confidence >= 0) ImGui::Text("confidence: %.3f", r.confidence);
  }
  if (r.correct >= 0)
    ImGui::TextColored(r.correct ? ImVec4(0.4f, 0.85f, 0.4f, 1) : ImVec4(1, 0.45f, 0.4f, 1), "%s",
                       r.correct ? "correct" : "wrong");
  ImGui::TextDisabled("click: open it in the workspace");
  ImGui::EndTooltip();
}

void draw_controls(ProjectorState& p) {
  ImGui::SetNextItemWidth(300.0f);
  const bool enter =
      ImGui::InputTextWithHint("##dir", "an `attnlab embed` folder", p.dir_edit.data(),
                               p.dir_edit.size(), ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || enter) && p.dir_edit[0] != '\0') {
    p.dir = p.dir_edit.data();
    p.load_wanted = true;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("reads embeddings.npy, images.csv and embed.json (attnlab embed --out DIR)");
  ImGui::SameLine(0, 20);
  int method = int(p.method);
  ImGui::RadioButton("PCA", &method, 0);
  ImGui::SameLine();
  ImGui::RadioButton("t-SNE", &method, 1);
  ImGui::SameLine();
  ImGui::RadioButton("UMAP", &method, 2);
  p.method = ProjectionMethod(method);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(70.0f);
  if (p.method == ProjectionMethod::Tsne) {
    ImGui::InputFloat("perplexity", &p.perplexity, 0, 0, "%.0f");
    p.perplexity = std::clamp(p.perplexity, 1.0f, 500.0f);
    ImGui::SameLine();
  } else if (p.method == ProjectionMethod::Umap) {
    ImGui::InputInt("neighbours", &p.n_neighbors, 0);
    p.n_neighbors = std::clamp(p.n_neighbors, 2, 500);
    ImGui::SameLine();
  }
  if (p.method != ProjectionMethod::Pca) {
    ImGui::SetNextItemWidth(50.0f);
    ImGui::InputInt("seed", &p.seed, 0);
    p.seed = std::max(p.seed, 0);
    ImGui::SameLine();
  }
  ImGui::BeginDisabled(!p.data || p.computing || p.loading);
  if (ImGui::Button("Project")) p.project_wanted = true;
  ImGui::EndDisabled();

  ImGui::TextUnformatted("colour by");
  ImGui::SameLine();
  int colour = int(p.colour);
  ImGui::RadioButton("label", &colour, 0);
  ImGui::SameLine();
  ImGui::RadioButton("prediction", &colour, 1);
  ImGui::SameLine();
  ImGui::RadioButton("correct / wrong", &colour, 2);
  ImGui::SameLine();
  ImGui::RadioButton("confidence", &colour, 3);
  p.colour = ProjectorColour(colour);
  ImGui::SameLine(0, 20);
  if (p.loading) {
    ImGui::TextDisabled("reading %s ...", p.dir.c_str());
  } else if (p.computing) {
    ImGui::TextDisabled("computing %s (progress and Cancel below) ...",
                        projection_method_name(p.method));
  } else if (p.data) {
    ImGui::TextDisabled("%lld points x %lld dims  %s", static_cast<long long>(p.data->n),
                        static_cast<long long>(p.data->dims), p.data->description.c_str());
  }
  if (!p.error.empty()) ImGui::TextColored(kErrorColor, "%s", p.error.c_str());
}

void draw_plot(ProjectorState& p, FrameRequests& requests, StatusBarState& status, ImVec2 size) {
  const EmbedFolder& d = *p.data;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##plot", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered_plot = ImGui::IsItemHovered();
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y),
                    IM_COL32(24, 24, 28, 255));
  dl->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  PlotMap m = plot_map(p, origin, size);
  const ImGuiIO& io = ImGui::GetIO();

  // Zoom about the mouse, pan with the right button.
  if (hovered_plot && io.MouseWheel != 0.0f) {
    const float factor = std::pow(1.15f, io.MouseWheel);
    const float mx = io.MousePos.x - origin.x - size.x * 0.5f;
    const float my = io.MousePos.y - origin.y - size.y * 0.5f;
    p.pan_x = mx - (mx - p.pan_x) * factor;
    p.pan_y = my - (my - p.pan_y) * factor;
    p.zoom *= factor;
    m = plot_map(p, origin, size);
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Right)) {
    p.pan_x += io.MouseDelta.x;
    p.pan_y += io.MouseDelta.y;
    m = plot_map(p, origin, size);
  }

  // The point under the mouse, or the one a script hovers.
  int hovered = -1;
  if (hovered_plot && !p.dragging) {
    float best = kHoverPixels * kHoverPixels;
    for (size_t i = 0; i < size_t(d.n); ++i) {
      const ImVec2 s = m.to_screen(p.xy[2 * i], p.xy[2 * i + 1]);
      const float dx = s.x - io.MousePos.x, dy = s.y - io.MousePos.y;
      if (dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        hovered = int(i);
      }
    }
  }
  const bool scripted = hovered < 0 && p.script_hover >= 0 && p.script_hover < d.n;
  if (scripted) hovered = p.script_hover;
  p.hovered = hovered;

  // Shift + left drag: a box; a left click on a point: open it.
  if (hovered_plot && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    if (io.KeyShift) {
      p.dragging = true;
      m.to_data(io.MousePos, &p.drag_x0, &p.drag_y0);
    } else if (hovered >= 0 && !scripted) {
      open_point(p, hovered, requests, status);
    } else {
      clear_selection(p);
    }
  }
  if (p.dragging) {
    float x = 0, y = 0;
    m.to_data(io.MousePos, &x, &y);
    const ImVec2 a = m.to_screen(p.drag_x0, p.drag_y0);
    dl->AddRectFilled(a, io.MousePos, IM_COL32(255, 255, 255, 30));
    dl->AddRect(a, io.MousePos, IM_COL32(255, 255, 255, 200));
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      p.dragging = false;
      select_box(p, p.drag_x0, p.drag_y0, x, y);
    }
  }

  // The points: the selection (when there is one) over the rest, which fades.
  const bool sel = p.has_selection;
  std::vector<uint8_t> in_sel;
  if (sel) {
    in_sel.assign(size_t(d.n), 0);
    for (const int i : p.selected) in_sel[size_t(i)] = 1;
  }
  for (int pass = 0; pass < (sel ? 2 : 1); ++pass)
    for (size_t i = 0; i < size_t(d.n); ++i) {
      if (sel && in_sel[i] != pass) continue;
      const ImVec2 s = m.to_screen(p.xy[2 * i], p.xy[2 * i + 1]);
      if (s.x < origin.x - 4 || s.y < origin.y - 4 || s.x > origin.x + size.x + 4 ||
          s.y > origin.y + size.y + 4)
        continue;
      const int alpha = sel && !in_sel[i] ? 60 : 220;
      dl->AddCircleFilled(s, kPointRadius, point_colour(d, i, p.colour, alpha), 8);
    }
  if (sel) {
    const ImVec2 a = m.to_screen(p.sel_x0, p.sel_y1), b = m.to_screen(p.sel_x1, p.sel_y0);
    dl->AddRect(a, b, IM_COL32(255, 255, 255, 170), 0, 0, 1.5f);
  }
  ImVec2 hovered_at;
  if (hovered >= 0) {
    hovered_at = m.to_screen(p.xy[2 * size_t(hovered)], p.xy[2 * size_t(hovered) + 1]);
    dl->AddCircle(hovered_at, kPointRadius + 3.5f, IM_COL32(255, 255, 255, 255), 16, 2.0f);
  }
  // Caption: the method and what it reports, bottom left; the gestures, bottom right.
  std::string caption = std::string(projection_method_name(p.shown));
  if (!p.note.empty()) caption += ": " + p.note;
  char took[32];
  std::snprintf(took, sizeof took, " (%.1f s)", p.seconds);
  caption += took;
  const float line = ImGui::GetTextLineHeight();
  dl->AddText(ImVec2(origin.x + 8, origin.y + size.y - line - 6), IM_COL32(200, 200, 200, 255),
              caption.c_str());
  const char* help = "wheel: zoom  right-drag: pan  shift-drag: select  click: open";
  dl->AddText(ImVec2(origin.x + size.x - ImGui::CalcTextSize(help).x - 8, origin.y + 6),
              IM_COL32(150, 150, 150, 255), help);
  dl->PopClipRect();
  if (hovered >= 0) draw_point_tooltip(p, hovered, scripted ? &hovered_at : nullptr);
}

// Counts per category (label, else prediction) over the rows in `rows` (or every row).
struct Histogram {
  std::vector<int> counts;
  int none = 0, judged = 0, correct = 0, total = 0;
};

void add_row(Histogram& h, const EmbedRow& r, bool by_label) {
  const int64_t k = by_label ? r.label : r.prediction;
  if (k >= 0) {
    if (int64_t(h.counts.size()) <= k) h.counts.resize(size_t(k) + 1, 0);
    ++h.counts[size_t(k)];
  } else {
    ++h.none;
  }
  h.judged += r.correct >= 0;
  h.correct += r.correct == 1;
  ++h.total;
}

std::string accuracy_text(const Histogram& h) {
  if (h.judged == 0) return "-";
  char s[48];
  std::snprintf(s, sizeof s, "%.1f%% of %d", 100.0 * h.correct / h.judged, h.judged);
  return s;
}

void draw_legend(const ProjectorState& p) {
  const EmbedFolder& d = *p.data;
  ImGui::TextDisabled("LEGEND");
  if (p.colour == ProjectorColour::Confidence) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float w = 200.0f, h = 14.0f;
    for (int k = 0; k < 100; ++k)
      dl->AddRectFilled(ImVec2(o.x + w * k / 100, o.y),
                        ImVec2(o.x + w * (k + 1) / 100 + 1, o.y + h), confidence_colour(k / 99.0));
    ImGui::Dummy(ImVec2(w, h));
    ImGui::TextUnformatted("0 ... 1: the top class's probability");
    return;
  }
  std::vector<int> counts;
  int none = 0;
  for (const EmbedRow& r : d.rows) {
    const int64_t k = category_of(r, p.colour);
    if (p.colour == ProjectorColour::Correct) {
      counts.resize(2, 0);
      if (k >= 0)
        ++counts[size_t(k)];
      else
        ++none;
      continue;
    }
    if (k < 0) {
      ++none;
      continue;
    }
    if (int64_t(counts.size()) <= k) counts.resize(size_t(k) + 1, 0);
    ++counts[size_t(k)];
  }
  const std::vector<std::string>& names =
      p.colour == ProjectorColour::Prediction ? d.class_names : d.label_names;
  const auto swatch = [](ImU32 c) {
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float s = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddCircleFilled(ImVec2(o.x + s * 0.5f, o.y + s * 0.5f), s * 0.35f,
                                                c, 12);
    ImGui::Dummy(ImVec2(s, s));
    ImGui::SameLine();
  };
  for (size_t k = 0; k < counts.size(); ++k) {
    if (p.colour == ProjectorColour::Correct) {
      swatch(k == 1 ? IM_COL32(44, 160, 44, 255) : IM_COL32(214, 39, 40, 255));
      ImGui::Text("%s  (%d)", k == 1 ? "correct" : "wrong", counts[k]);
      continue;
    }
    if (counts[k] == 0) continue;
    const size_t palette =
        p.colour == ProjectorColour::Label ? d.label_names.size() : d.class_names.size();
    swatch(category_colour(int64_t(k), palette));
    ImGui::Text("%s  (%d)", name_or_index(names, int64_t(k)).c_str(), counts[k]);
  }
  if (none > 0) {
    swatch(IM_COL32(150, 150, 150, 255));
    ImGui::Text("%s  (%d)", p.colour == ProjectorColour::Correct ? "not judged" : "none", none);
  }
}

void draw_selection(const ProjectorState& p) {
  const EmbedFolder& d = *p.data;
  ImGui::TextDisabled("SELECTION");
  if (!p.has_selection) {
    ImGui::TextWrapped("Shift + drag a box over the points to compare that group with the rest.");
    return;
  }
  bool by_label = false;
  for (const EmbedRow& r : d.rows) by_label = by_label || r.label >= 0;
  std::vector<uint8_t> in(size_t(d.n), 0);
  for (const int i : p.selected) in[size_t(i)] = 1;
  Histogram group, rest;
  for (size_t i = 0; i < size_t(d.n); ++i) add_row(in[i] ? group : rest, d.rows[i], by_label);
  ImGui::Text("%d of %lld points (%.1f%%)", group.total, static_cast<long long>(d.n),
              d.n ? 100.0 * group.total / double(d.n) : 0.0);
  ImGui::Text("accuracy: group %s", accuracy_text(group).c_str());
  ImGui::Text("          rest  %s", accuracy_text(rest).c_str());
  ImGui::TextDisabled("%s: group vs rest (share)", by_label ? "labels" : "predictions");
  const std::vector<std::string>& names = by_label ? d.label_names : d.class_names;
  const size_t classes = std::max(group.counts.size(), rest.counts.size());
  const size_t palette = by_label ? d.label_names.size() : d.class_names.size();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float bar_w = 70.0f, h = ImGui::GetTextLineHeight();
  for (size_t k = 0; k < classes; ++k) {
    const int g = k < group.counts.size() ? group.counts[k] : 0;
    const int r = k < rest.counts.size() ? rest.counts[k] : 0;
    if (g == 0 && r == 0) continue;
    const float fg = group.total ? float(g) / float(group.total) : 0.0f;
    const float fr = rest.total ? float(r) / float(rest.total) : 0.0f;
    const ImVec2 o = ImGui::GetCursorScreenPos();
    // Two bars: the group's share (the class colour) over the rest's (grey).
    dl->AddRectFilled(o, ImVec2(o.x + bar_w * fg, o.y + h * 0.5f),
                      category_colour(int64_t(k), palette));
    dl->AddRectFilled(ImVec2(o.x, o.y + h * 0.55f), ImVec2(o.x + bar_w * fr, o.y + h),
                      IM_COL32(140, 140, 140, 255));
    ImGui::Dummy(ImVec2(bar_w, h));
    ImGui::SameLine();
    ImGui::Text("%3.0f%% %3.0f%%  %s", 100.0 * double(fg), 100.0 * double(fr),
                name_or_index(names, int64_t(k)).c_str());
  }
  ImGui::TextDisabled("(mean attention maps of the group: not yet)");
}

}  // namespace

void draw_projector_tab(ProjectorState& p, FrameRequests& requests, StatusBarState& status) {
  if (p.dir_edit[0] == '\0' && !p.dir.empty())
    std::snprintf(p.dir_edit.data(), p.dir_edit.size(), "%s", p.dir.c_str());
  draw_controls(p);
  ImGui::Separator();
  if (!p.data || p.xy.empty()) {
    p.hovered = -1;
    ImGui::TextWrapped(
        p.data ? "Projecting..."
               : "Open a folder written by `attnlab embed --model M --dataset fashion-mnist:test "
                 "--limit 2000 --out DIR` (or --images FOLDER): its embeddings are projected to "
                 "2-D by PCA, t-SNE or UMAP, one point per image.");
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 plot(std::max(200.0f, avail.x - kSidePanelWidth - 8.0f), std::max(150.0f, avail.y));
  ImGui::BeginChild("##projector_plot", plot, false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_plot(p, requests, status, plot);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##projector_side", ImVec2(0, plot.y));
  draw_legend(p);
  ImGui::Separator();
  draw_selection(p);
  ImGui::EndChild();
}

}  // namespace attnlab::gui
