// What-if editing in the GUI; see edit_view.h.
#include "app/gui/views/edit_view.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>

#include "app/gui/workspace/workspace.h"

namespace attnlab::gui {
namespace {

using Kind = image::EditOp::Kind;

// The current model's first-layer grid on the current image ({0, 0} before its analysis):
// the grid the brush paints on.
std::pair<int, int> edit_grid(const Workspace& ws, const ViewState& view) {
  const ResultSlot* r = result_of(ws, view.model, view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return {0, 0};
  return {r->analysis->layers.front().rows, r->analysis->layers.front().cols};
}

// "airplane 83%" of a slot's top-1 ("" without an analysis or classes).
std::string top1(const ResultSlot* r) {
  if (!r || !r->analysis || r->analysis->top5.empty()) return "";
  const Prediction& p = r->analysis->top5.front();
  char pct[16];
  std::snprintf(pct, sizeof pct, " %.0f%%", 100.0 * p.probability);
  return p.name + pct;
}

}  // namespace

image::EditOp brush_edit(const Workspace& ws, const ViewState& view, int row, int col) {
  const EditToolState& e = view.edit;
  const auto [rows, cols] = edit_grid(ws, view);
  image::EditOp op;
  op.kind = e.tool;
  op.size = std::max(1, e.brush);
  op.y = std::max(0, row - (op.size - 1) / 2);
  op.x = std::max(0, col - (op.size - 1) / 2);
  if (e.tool == Kind::Occlude || e.tool == Kind::Paint) op.color = e.color;
  if (e.tool == Kind::Paste) {
    const int source = e.paste_image;
    if (source >= 0 && source < int(ws.images.size())) op.source = ws.images[size_t(source)].path;
    op.from_y = std::clamp(op.y + e.paste_dy, 0, std::max(0, rows - 1));
    op.from_x = std::clamp(op.x + e.paste_dx, 0, std::max(0, cols - 1));
  }
  return op;
}

void request_paint(const Workspace& ws, ViewState& view, int row, int col, bool new_stroke) {
  EditToolState& e = view.edit;
  const auto [rows, cols] = edit_grid(ws, view);
  if (rows <= 0 || cols <= 0) return;  // no grid to paint on yet
  row = std::clamp(row, 0, rows - 1);
  col = std::clamp(col, 0, cols - 1);
  if (!new_stroke && row == e.last_row && col == e.last_col) return;
  e.last_row = row;
  e.last_col = col;
  e.pending.push_back({row, col, new_stroke});
}

void apply_edit_requests(Workspace& ws, ViewState& view, StatusBarState& status) {
  EditToolState& e = view.edit;
  if (e.pending.empty() && !e.undo && !e.clear) return;
  if (ws.images.empty()) {
    e.pending.clear();
    e.undo = e.clear = false;
    return;
  }
  ImageSlot& image = ws.images[size_t(std::clamp(view.image, 0, int(ws.images.size()) - 1))];
  const std::vector<image::EditOp> before = image.edits;
  for (const EditToolState::Cell& c : e.pending) {
    if (e.tool == Kind::Paste && (e.paste_image < 0 || e.paste_image >= int(ws.images.size()))) {
      status.notice = "paste: pick the image to paste from (sidebar, EDIT)";
      status.notice_is_error = true;
      break;
    }
    if (c.new_stroke || image.strokes.empty()) image.strokes.push_back(image.edits.size());
    image.edits.push_back(brush_edit(ws, view, c.row, c.col));
  }
  if (e.undo && !image.strokes.empty()) {
    image.edits.resize(image.strokes.back());
    image.strokes.pop_back();
  }
  if (e.clear) {
    image.edits.clear();
    image.strokes.clear();
  }
  if (image.edits != before) ++*image.edits_version;
  e.pending.clear();
  e.undo = e.clear = false;
}

std::string current_edits_text(const Workspace& ws, const ViewState& view) {
  const int i = view.image;
  if (i < 0 || i >= int(ws.images.size())) return "";
  return image::edits_text(ws.images[size_t(i)].edits);
}

void draw_edit_controls(const Workspace& ws, ViewState& view) {
  EditToolState& e = view.edit;
  ImGui::TextDisabled("EDIT  what if the picture were different?");
  ImGui::Checkbox("paint on the map (e)", &e.on);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "on: a press or drag on the Maps tab's picture edits the image for every\n"
        "model (off: it picks the query)");
  int tool = int(e.tool);
  ImGui::RadioButton("occlude", &tool, int(Kind::Occlude));
  ImGui::SameLine();
  ImGui::RadioButton("blur", &tool, int(Kind::Blur));
  ImGui::SameLine();
  ImGui::RadioButton("paint", &tool, int(Kind::Paint));
  ImGui::SameLine();
  ImGui::RadioButton("paste", &tool, int(Kind::Paste));
  e.tool = Kind(tool);
  ImGui::SliderInt("brush", &e.brush, 1, 8);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the square's side, in tokens of the first layer");
  if (e.tool == Kind::Occlude || e.tool == Kind::Paint) {
    float rgb[3] = {e.color[0] / 255.0f, e.color[1] / 255.0f, e.color[2] / 255.0f};
    if (ImGui::ColorEdit3("colour", rgb, ImGuiColorEditFlags_NoInputs | ImGuiColorEditFlags_Uint8))
      for (int k = 0; k < 3; ++k) e.color[size_t(k)] = uint8_t(std::lround(rgb[k] * 255.0f));
  }
  if (e.tool == Kind::Paste) {
    const std::string shown =
        e.paste_image >= 0 && e.paste_image < int(ws.images.size())
            ? std::filesystem::path(ws.images[size_t(e.paste_image)].path).filename().string()
            : std::string("(pick an image)");
    if (ImGui::BeginCombo("from", shown.c_str())) {
      for (int i = 0; i < int(ws.images.size()); ++i) {
        const std::string name =
            std::filesystem::path(ws.images[size_t(i)].path).filename().string();
        if (ImGui::Selectable((name + "##paste" + std::to_string(i)).c_str(), i == e.paste_image))
          e.paste_image = i;
      }
      ImGui::EndCombo();
    }
    ImGui::SliderInt("rows off", &e.paste_dy, -16, 16);
    ImGui::SliderInt("cols off", &e.paste_dx, -16, 16);
  }
  const int i = view.image;
  const bool edited = i >= 0 && i < int(ws.images.size()) && !ws.images[size_t(i)].edits.empty();
  ImGui::BeginDisabled(!edited);
  if (ImGui::Button("Undo (u)")) e.undo = true;
  ImGui::SameLine();
  if (ImGui::Button("Clear")) e.clear = true;
  ImGui::SameLine();
  ImGui::Checkbox("edited − original", &e.difference);
  ImGui::EndDisabled();
  if (!edited) return;
  const std::vector<image::EditOp>& edits = ws.images[size_t(i)].edits;
  ImGui::TextDisabled("%zu edit(s), %zu stroke(s)", edits.size(),
                      ws.images[size_t(i)].strokes.size());
  const ResultSlot* r = result_of(ws, view.model, i);
  if (r && r->analysis && r->analysis->edits_key != r->edits_key)
    ImGui::TextDisabled("analysing the edited picture...");
  const std::string after = top1(r), before = top1(r ? r->original.get() : nullptr);
  if (!after.empty())
    ImGui::TextWrapped("top-1: %s -> %s", before.empty() ? "(original not kept)" : before.c_str(),
                       after.c_str());
}

}  // namespace attnlab::gui
