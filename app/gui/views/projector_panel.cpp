// The Projector tab's legend and selection; see projector_panel.h.
#include "app/gui/views/projector_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app/gui/projector/projector.h"
#include "app/gui/projector/projector_groups.h"
#include "app/gui/views/projector_colours.h"
#include "app/gui/views/projector_plot.h"
#include "app/gui/views/theme.h"

namespace attnlab::gui {
namespace {

// Counts per category (label, else prediction) over a group of rows.
struct GroupCounts {
  std::vector<int> counts;
  int none = 0, judged = 0, correct = 0, total = 0;
};

void add_group_row(GroupCounts& h, const EmbedRow& r, bool by_label) {
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

std::string group_accuracy(const GroupCounts& h) {
  if (h.judged == 0) return "-";
  char s[48];
  std::snprintf(s, sizeof s, "%.1f%% of %d", 100.0 * h.correct / h.judged, h.judged);
  return s;
}

void legend_swatch(ImU32 c) {
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float s = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddCircleFilled(ImVec2(o.x + s * 0.5f, o.y + s * 0.5f), s * 0.35f, c,
                                              12);
  ImGui::Dummy(ImVec2(s, s));
  ImGui::SameLine();
}

// The group's and the rest's accuracy in folder `d` (a model's predictions).
void draw_group_accuracy(const EmbedFolder& d, const std::vector<uint8_t>& in, const char* who) {
  GroupCounts group, rest;
  for (size_t i = 0; i < size_t(d.n); ++i) add_group_row(in[i] ? group : rest, d.rows[i], true);
  ImGui::Text("accuracy%s: group %s", who, group_accuracy(group).c_str());
  ImGui::Text("%*s  rest  %s", int(std::string(who).size()) + 8, "", group_accuracy(rest).c_str());
}

// A mean map as cells on viridis over [lo, hi] (the two maps share it), `side` px wide.
void draw_mean_map(const MeanAttentionMap& m, float lo, float hi, float side) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float cell = side / float(std::max(m.rows, m.cols));
  const float span = hi > lo ? hi - lo : 1.0f;
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) {
      const float v = m.map[size_t(y) * size_t(m.cols) + size_t(x)];
      dl->AddRectFilled(ImVec2(o.x + cell * float(x), o.y + cell * float(y)),
                        ImVec2(o.x + cell * float(x + 1), o.y + cell * float(y + 1)),
                        projector_confidence_colour(double((v - lo) / span)));
    }
  ImGui::Dummy(ImVec2(cell * float(m.cols), cell * float(m.rows)));
}

// A viridis bar, 200 px wide.
void legend_viridis_bar() {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float w = 200.0f, h = 14.0f;
  for (int k = 0; k < 100; ++k)
    dl->AddRectFilled(ImVec2(o.x + w * k / 100, o.y), ImVec2(o.x + w * (k + 1) / 100 + 1, o.y + h),
                      projector_confidence_colour(k / 99.0));
  ImGui::Dummy(ImVec2(w, h));
}

// One extreme image's row: its picture when it is a dataset's (cheap), "#row value"; hover
// rings the point (and shows its tooltip), a click opens the image.
void draw_head_extreme_row(ProjectorState& p, const EmbedHeadExtreme& e, FrameRequests& requests,
                           StatusBarState& status) {
  const EmbedFolder& d = *p.main.data;
  const int row = int(e.row);
  if (row < 0 || row >= d.n) return;
  const float h = ImGui::GetTextLineHeight();
  if (!d.has_pixels.empty() && d.has_pixels[size_t(row)]) {
    if (const GlTexture* t = projector_thumbnail(p, row)) {
      ImGui::Image(reinterpret_cast<ImTextureID>(t->handle()), ImVec2(h, h));
      ImGui::SameLine();
    }
  }
  char label[64];
  std::snprintf(label, sizeof label, "#%d  %.3f##%s%lld", row, e.entropy, e.sharpest ? "s" : "b",
                static_cast<long long>(e.rank));
  if (ImGui::Selectable(label, p.clicked == row)) open_point(p, row, requests, status);
  if (ImGui::IsItemHovered()) {
    p.hovered = row;  // the plots ring it next frame
    draw_projector_tooltip(p, d, row, nullptr);
  }
}

}  // namespace

void draw_projector_legend(const ProjectorState& p) {
  const EmbedFolder& d = *p.main.data;
  ImGui::TextDisabled("LEGEND");
  if (projector_head_colour(p.colour)) {
    const bool rank = p.colour == ProjectorColour::HeadRank;
    const ProjectorHeadColouring h = projector_head_colouring(d, p.head_layer, p.head_index, rank);
    ImGui::TextWrapped("%s: %s", rank ? "head output rank" : "head entropy",
                       projector_head_name(d, h.layer, h.head).c_str());
    legend_viridis_bar();
    if (h.finite > 0)
      ImGui::Text("%.3f ... %.3f: %s", double(h.lo), double(h.hi),
                  rank ? "exp H(sigma / sum sigma)" : "mean H / ln K");
    else
      ImGui::TextDisabled("no values for this head");
    ImGui::TextDisabled(rank ? "(few directions: dark, many: yellow)"
                             : "(sharp: dark, broad: yellow)");
    if (h.missing > 0) {
      legend_swatch(projector_correct_colour(-1));
      ImGui::Text("no such head  (%d)", h.missing);
    }
    return;
  }
  if (p.colour == ProjectorColour::Confidence) {
    legend_viridis_bar();
    ImGui::TextUnformatted("0 ... 1: the top class's probability");
    return;
  }
  std::vector<int> counts;
  int none = 0;
  for (const EmbedRow& r : d.rows) {
    const int64_t k = projector_category_of(r, p.colour);
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
  for (size_t k = 0; k < counts.size(); ++k) {
    if (p.colour == ProjectorColour::Correct) {
      legend_swatch(projector_correct_colour(int(k)));
      ImGui::Text("%s  (%d)", k == 1 ? "correct" : "wrong", counts[k]);
      continue;
    }
    if (counts[k] == 0) continue;
    const size_t palette =
        p.colour == ProjectorColour::Label ? d.label_names.size() : d.class_names.size();
    legend_swatch(projector_category_colour(int64_t(k), palette));
    ImGui::Text("%s  (%d)", projector_name_of(names, int64_t(k)).c_str(), counts[k]);
  }
  if (none > 0) {
    legend_swatch(projector_correct_colour(-1));
    ImGui::Text("%s  (%d)", p.colour == ProjectorColour::Correct ? "not judged" : "none", none);
  }
  if (p.compare.data && p.colour != ProjectorColour::Label)
    ImGui::TextDisabled("(counts of A; B's points by its own model)");
}

void draw_projector_selection(const ProjectorState& p) {
  const EmbedFolder& d = *p.main.data;
  ImGui::TextDisabled("SELECTION");
  if (!p.has_selection) {
    ImGui::TextWrapped(
        "Shift + drag a box over the points (in either plot) to compare that group with the "
        "rest.");
    return;
  }
  bool by_label = false;
  for (const EmbedRow& r : d.rows) by_label = by_label || r.label >= 0;
  std::vector<uint8_t> in(size_t(d.n), 0);
  for (const int i : p.selected) in[size_t(i)] = 1;
  GroupCounts group, rest;
  for (size_t i = 0; i < size_t(d.n); ++i) add_group_row(in[i] ? group : rest, d.rows[i], by_label);
  ImGui::Text("%d of %lld points (%.1f%%)", group.total, static_cast<long long>(d.n),
              d.n ? 100.0 * group.total / double(d.n) : 0.0);
  const bool two = p.compare.data && p.compare.data->n == d.n;
  draw_group_accuracy(d, in, two ? " A" : "");
  if (two) draw_group_accuracy(*p.compare.data, in, " B");
}

void draw_projector_shares(const ProjectorState& p) {
  const EmbedFolder& d = *p.main.data;
  if (!p.has_selection) return;
  bool by_label = false;
  for (const EmbedRow& r : d.rows) by_label = by_label || r.label >= 0;
  std::vector<uint8_t> in(size_t(d.n), 0);
  for (const int i : p.selected) in[size_t(i)] = 1;
  GroupCounts group, rest;
  for (size_t i = 0; i < size_t(d.n); ++i) add_group_row(in[i] ? group : rest, d.rows[i], by_label);
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
                      projector_category_colour(int64_t(k), palette));
    dl->AddRectFilled(ImVec2(o.x, o.y + h * 0.55f), ImVec2(o.x + bar_w * fr, o.y + h),
                      IM_COL32(140, 140, 140, 255));
    ImGui::Dummy(ImVec2(bar_w, h));
    ImGui::SameLine();
    ImGui::Text("%3.0f%% %3.0f%%  %s", 100.0 * double(fg), 100.0 * double(fr),
                projector_name_of(names, int64_t(k)).c_str());
  }
}

void draw_projector_group_maps(ProjectorState& p, const Workspace& ws, const ViewState& view,
                               StatusBarState& status) {
  ProjectorGroupMaps& g = p.group_maps;
  ImGui::TextDisabled("GROUP MAPS");
  ImGui::BeginDisabled(!p.has_selection || g.computing);
  if (ImGui::Button("Mean attention maps: group vs rest")) {
    std::string error;
    if (!request_group_maps(p, ws, view, &error)) {
      g.error = error;
      status.notice = "projector: " + error;
      status.notice_is_error = true;
    }
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "With the workspace's current model: each image's attention map as the Maps tab shows "
        "it by default (last layer, mean of heads, the cls token or the centre cell), averaged "
        "over the group and over the rest, at most %d images each (evenly spaced).",
        ProjectorGroupMaps::kCap);
  if (g.computing) ImGui::TextDisabled("computing with %s ...", g.model_name.c_str());
  if (!g.error.empty()) ImGui::TextColored(kErrorColor, "%s", g.error.c_str());
  if (g.group.map.empty() || g.rest.map.empty()) return;
  float lo = g.group.map.front(), hi = lo;
  for (const MeanAttentionMap* m : {&g.group, &g.rest})
    for (const float v : m->map) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  ImGui::TextWrapped("%s, %s, query %s, mean of heads; one colour scale", g.model_name.c_str(),
                     g.group.layer.c_str(), g.group.query.c_str());
  const float side = std::min(130.0f, (ImGui::GetContentRegionAvail().x - 8.0f) * 0.5f);
  ImGui::BeginGroup();
  draw_mean_map(g.group, lo, hi, side);
  ImGui::Text("group: %d", g.group.images);
  if (g.group_total > g.group.images) ImGui::TextDisabled("of %d", g.group_total);
  ImGui::EndGroup();
  ImGui::SameLine(0, 8);
  ImGui::BeginGroup();
  draw_mean_map(g.rest, lo, hi, side);
  ImGui::Text("rest: %d", g.rest.images);
  if (g.rest_total > g.rest.images) ImGui::TextDisabled("of %d", g.rest_total);
  ImGui::EndGroup();
  ImGui::TextDisabled("(at most %d images a side)", ProjectorGroupMaps::kCap);
  const size_t failed = g.group.failed.size() + g.rest.failed.size();
  if (failed > 0) ImGui::TextColored(kErrorColor, "%zu images could not be read", failed);
}

void draw_projector_heads(ProjectorState& p, FrameRequests& requests, StatusBarState& status) {
  const EmbedFolder& d = *p.main.data;
  if (!d.heads_error.empty()) ImGui::TextColored(kErrorColor, "%s", d.heads_error.c_str());
  if (!d.has_heads()) return;
  ImGui::TextDisabled("HEADS");
  clamp_projector_head(p);
  ImGui::SetNextItemWidth(110.0f);
  ImGui::SliderInt("layer##head_layer", &p.head_layer, 0, int(d.head_layers) - 1);
  ImGui::SameLine();
  const int heads =
      int(d.head_info[size_t(std::clamp(p.head_layer, 0, int(d.head_layers) - 1))].heads);
  ImGui::SetNextItemWidth(80.0f);
  ImGui::SliderInt("head##head_index", &p.head_index, 0, std::max(0, heads - 1));
  clamp_projector_head(p);
  const EmbedHeadLayer& layer = d.head_info[size_t(p.head_layer)];
  ImGui::TextDisabled("%s (%s), %lld heads", layer.path.c_str(), layer.mechanism.c_str(),
                      static_cast<long long>(layer.heads));
  if (p.colour != ProjectorColour::HeadEntropy) {
    if (ImGui::SmallButton("colour by its entropy")) p.colour = ProjectorColour::HeadEntropy;
  }
  if (p.colour != ProjectorColour::HeadRank && d.has_head_rank()) {
    if (p.colour != ProjectorColour::HeadEntropy) ImGui::SameLine();
    if (ImGui::SmallButton("colour by its output rank")) p.colour = ProjectorColour::HeadRank;
  }
  for (const bool sharpest : {true, false}) {
    ImGui::TextDisabled(sharpest ? "sharpest (lowest entropy)" : "broadest (highest entropy)");
    for (const EmbedHeadExtreme& e : d.head_extremes)
      if (e.layer == p.head_layer && e.head == p.head_index && e.sharpest == sharpest)
        draw_head_extreme_row(p, e, requests, status);
  }
}

}  // namespace attnlab::gui
