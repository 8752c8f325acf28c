// Sidebar, shortcuts and help; see controls.h.
#include "app/gui/views/controls.h"

#include <GLFW/glfw3.h>  // key codes: ImGui 1.86's GLFW backend indexes keys by them
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/gui/views/edit_view.h"
#include "app/gui/views/model_panel.h"
#include "app/gui/views/option_controls.h"
#include "app/gui/views/series_view.h"
#include "app/gui/views/size_sweep_view.h"
#include "app/gui/views/theme.h"
#include "app/gui/workspace/workspace.h"

namespace attnlab::gui {
namespace {

int layer_count(const Workspace& ws, const ViewState& view) {
  const ResultSlot* r = result_of(ws, view.model, view.image);
  return r && r->analysis ? int(r->analysis->layers.size()) : 0;
}

int head_count(const Workspace& ws, const ViewState& view) {
  const ResultSlot* r = result_of(ws, view.model, view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return 0;
  const int n = int(r->analysis->layers.size());
  const int l = view.layer < 0 ? n - 1 : std::min(view.layer, n - 1);
  return r->analysis->layers[size_t(l)].heads;
}

// A small × before a list entry: closes it at the end of the frame (close_slots.h).
void close_button(uint64_t id, std::vector<uint64_t>& requests, const char* what) {
  ImGui::PushID(static_cast<int>(id));
  if (ImGui::SmallButton("x")) requests.push_back(id);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("close this %s", what);
  ImGui::PopID();
  ImGui::SameLine();
}

void draw_models(const Workspace& ws, ViewState& view, FrameRequests& requests) {
  ImGui::TextDisabled("MODELS");
  for (int m = 0; m < int(ws.models.size()); ++m) {
    const ModelSlot& slot = ws.models[size_t(m)];
    close_button(slot.id, requests.close_models, "model");
    std::string label = slot.info.name;
    if (slot.status == LoadStatus::Loading) label += "  (loading)";
    if (slot.status == LoadStatus::Failed) ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    if (ImGui::Selectable((label + "##m" + std::to_string(m)).c_str(), view.model == m))
      view.model = m;
    if (slot.status == LoadStatus::Failed) {
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", slot.error.c_str());
    } else if (ImGui::IsItemHovered() && !slot.info.describe.empty()) {
      ImGui::SetTooltip("%s\n%s%s%s", slot.arg.c_str(), slot.info.describe.c_str(),
                        slot.info.recognition.empty() ? "" : "\n", slot.info.recognition.c_str());
    }
  }
}

// The --dtype names the precision picker offers.
constexpr const char* kPrecisions[] = {"fp32", "bf16", "fp16"};

// Where the models run: what LibTorch sees here; a pick loads every model there again.
void draw_device_picker(const DeviceState& device, FrameRequests& requests) {
  const DeviceState& d = device;
  if (d.available.empty()) return;
  ImGui::SetNextItemWidth(160.0f);
  if (ImGui::BeginCombo("device", d.current.c_str())) {
    for (const auto& [spec, description] : d.available) {
      if (ImGui::Selectable(spec.c_str(), spec == d.current) && spec != d.current)
        requests.device = spec;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", description.c_str());
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "where the models run (--device, ATTNLAB_DEVICE); CUDA devices are "
        "listed when this build has CUDA and a GPU is visible");
  ImGui::SetNextItemWidth(160.0f);
  if (ImGui::BeginCombo("precision", d.dtype.c_str())) {
    for (const char* name : kPrecisions)
      if (ImGui::Selectable(name, d.dtype == name) && d.dtype != name) requests.dtype = name;
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "the precision of the forward pass (--dtype, ATTNLAB_DTYPE): weights and activations; "
        "ranks, spectra and CKA are still computed in fp32 or better. A precision this "
        "LibTorch cannot run on the device is refused, naming the op; the models stay as they "
        "were");
}

void draw_images(const Workspace& ws, ViewState& view, FrameRequests& requests) {
  ImGui::TextDisabled("IMAGES");
  const float thumb = 40.0f;
  for (int i = 0; i < int(ws.images.size()); ++i) {
    const ImageSlot& slot = ws.images[size_t(i)];
    ImGui::PushID(i);
    close_button(slot.id, requests.close_images, "image");
    const bool selected = view.image == i;
    if (slot.thumb.valid()) {
      const float aspect = float(slot.thumb.height()) / float(std::max(1, slot.thumb.width()));
      ImGui::Image(reinterpret_cast<ImTextureID>(slot.thumb.handle()),
                   ImVec2(thumb, thumb * aspect));
      if (ImGui::IsItemClicked()) view.image = i;
      ImGui::SameLine();
    }
    const std::string name = std::filesystem::path(slot.path).filename().string();
    if (slot.status == LoadStatus::Failed) ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    if (ImGui::Selectable(name.c_str(), selected)) view.image = i;
    if (slot.status == LoadStatus::Failed) {
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", slot.error.c_str());
    }
    ImGui::PopID();
  }
}

// The class Grad-CAM and gradient rollout explain: each model's own top-1, one of the
// current model's top-5 (as the Top-5 tab lists them), or any class index.
void draw_class_picker(const Workspace& ws, ViewState& v) {
  const ResultSlot* r = result_of(ws, v.model, v.image);
  const std::vector<Prediction>* top5 = r && r->analysis ? &r->analysis->top5 : nullptr;
  std::string label = "top-1 of each model";
  if (v.explain_class >= 0) {
    label = "class " + std::to_string(v.explain_class);
    if (r && r->explanation && r->explanation->cls == v.explain_class &&
        r->explanation->map.numel())
      label = r->explanation->class_name + " (" + std::to_string(v.explain_class) + ")";
  }
  if (ImGui::BeginCombo("class", label.c_str())) {
    if (ImGui::Selectable("top-1 of each model", v.explain_class < 0)) v.explain_class = -1;
    if (top5)
      for (const auto& p : *top5) {
        char text[160];
        std::snprintf(text, sizeof text, "%s (%lld)  %.1f%%", p.name.c_str(),
                      static_cast<long long>(p.cls), 100.0 * p.probability);
        if (ImGui::Selectable(text, v.explain_class == int(p.cls))) v.explain_class = int(p.cls);
      }
    ImGui::EndCombo();
  }
  // Shows the class being explained (the top-1 while no class is picked).
  if (v.kind == MapKind::GradCam) {
    // The target module by state-dict path (Enter applies; empty: each model's default).
    if (ImGui::InputTextWithHint("target", "last norm1 / last stage", v.gradcam_target_edit.data(),
                                 v.gradcam_target_edit.size(),
                                 ImGuiInputTextFlags_EnterReturnsTrue))
      v.gradcam_target = v.gradcam_target_edit.data();
    ImGui::Checkbox("signed (no ReLU)", &v.gradcam_signed);
  }
  int any = v.explain_class >= 0     ? v.explain_class
            : top5 && !top5->empty() ? int(top5->front().cls)
                                     : 0;
  if (ImGui::InputInt("class index", &any, 1, 10, ImGuiInputTextFlags_EnterReturnsTrue))
    v.explain_class = std::max(0, any);
}

void draw_map_controls(const Workspace& ws, ViewState& v) {
  ImGui::TextDisabled("MAP");
  int kind = int(v.kind);
  ImGui::RadioButton("query", &kind, 0);
  ImGui::SameLine();
  ImGui::RadioButton("CLS", &kind, 1);
  ImGui::SameLine();
  ImGui::RadioButton("rollout", &kind, 2);
  ImGui::RadioButton("Grad-CAM", &kind, 3);
  ImGui::SameLine();
  ImGui::RadioButton("grad rollout", &kind, 4);
  ImGui::RadioButton("similarity", &kind, 5);
  v.kind = MapKind(kind);
  if (v.kind == MapKind::Similarity) {  // what is compared: the declared option's values
    if (const session::AnalysisOption* o = session::find_analysis_option("similarity-facet"))
      option_controls({o}, v.options);
  }
  if (is_explanation(v.kind)) draw_class_picker(ws, v);
  // The rollouts run through every layer with the mean of heads (as `attnlab analyze` by
  // default), Grad-CAM explains its own target layer: layer, head and fusion do not apply.
  const bool rollout = v.kind == MapKind::Rollout || is_explanation(v.kind);
  ImGui::BeginDisabled(rollout);
  const int layers = layer_count(ws, v);
  if (layers > 0) {
    int layer = v.layer < 0 ? layers - 1 : std::min(v.layer, layers - 1);
    if (ImGui::SliderInt("layer", &layer, 0, layers - 1)) v.layer = layer;
  }
  const int heads = head_count(ws, v);
  std::string head_label = v.head < 0
                               ? std::string(analysis::head_fusion_name(v.fusion)) + " of heads"
                               : "head " + std::to_string(v.head);
  if (ImGui::BeginCombo("head", head_label.c_str())) {
    if (ImGui::Selectable("fusion of heads", v.head < 0)) v.head = -1;
    for (int h = 0; h < heads; ++h)
      if (ImGui::Selectable(("head " + std::to_string(h)).c_str(), v.head == h)) v.head = h;
    ImGui::EndCombo();
  }
  int fusion = int(v.fusion);
  ImGui::Combo("fusion", &fusion, "mean\0max\0min\0");
  v.fusion = analysis::HeadFusion(fusion);
  ImGui::Checkbox("all heads (space)", &v.heads_grid);
  ImGui::EndDisabled();
  if (v.kind == MapKind::Rollout)
    ImGui::TextDisabled("rollout of all layers: see ROLLOUT");
  else if (v.kind == MapKind::GradCam)
    ImGui::TextDisabled("Grad-CAM: of the target module above");
  else if (v.kind == MapKind::GradRollout)
    ImGui::TextDisabled("grad rollout: all layers, explicit attention");
  ImGui::Separator();
  ImGui::TextDisabled("OVERLAY");
  if (ImGui::BeginCombo("colormap", viz::colormap_name(v.style.cmap))) {
    for (viz::Colormap cm : viz::kAllColormaps)
      if (ImGui::Selectable(viz::colormap_name(cm), v.style.cmap == cm)) v.style.cmap = cm;
    ImGui::EndCombo();
  }
  float alpha = float(v.style.alpha);
  if (ImGui::SliderFloat("alpha", &alpha, 0.0f, 1.0f, "%.2f")) v.style.alpha = alpha;
  int up = v.style.upsample == viz::Upsample::Nearest ? 0 : 1;
  ImGui::Combo("upsampling", &up, "nearest\0bilinear\0");
  v.style.upsample = up == 0 ? viz::Upsample::Nearest : viz::Upsample::Bilinear;
  int norm = v.norm == viz::MapNormalisation::MinMax ? 0 : 1;
  ImGui::Combo("normalise", &norm, "min-max\0divide by max\0");
  v.norm = norm == 0 ? viz::MapNormalisation::MinMax : viz::MapNormalisation::DivideByMax;
  ImGui::Checkbox("greyscale image", &v.style.grey_background);
  if (v.kind == MapKind::Rollout) {  // the switches of `attnlab analyze` (--fusion, ...)
    ImGui::Separator();
    ImGui::TextDisabled("ROLLOUT");
    // The rollout analysis's declared switches; a change recomputes the rollouts shown (a
    // newer request supersedes one not yet started).
    option_controls(analysis_gui_options("rollout"), v.options);
  }
  ImGui::Separator();
  ImGui::TextDisabled("COMPARE");
  ImGui::Checkbox("side by side (c)", &v.compare);
  ImGui::Checkbox("shared colour scale", &v.shared_scale);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "off: each model on its own scale (its colorbar beside it)\non: one scale for all, "
        "topped at the 98th percentile of |w| over all maps");
  ImGui::Checkbox("difference A - B", &v.difference);
  if (v.difference && !ws.models.empty()) {
    const auto pick = [&](const char* label, int& index) {
      index = std::clamp(index, 0, int(ws.models.size()) - 1);
      if (ImGui::BeginCombo(label, ws.models[size_t(index)].info.name.c_str())) {
        for (int m = 0; m < int(ws.models.size()); ++m)
          if (ImGui::Selectable((ws.models[size_t(m)].info.name + "##" + std::to_string(m)).c_str(),
                                m == index))
            index = m;
        ImGui::EndCombo();
      }
    };
    pick("A", v.difference_a);
    pick("B", v.difference_b);
  }
}

}  // namespace

void clamp_view(const Workspace& ws, ViewState& v) {
  v.model = std::clamp(v.model, 0, std::max(0, int(ws.models.size()) - 1));
  v.image = std::clamp(v.image, 0, std::max(0, int(ws.images.size()) - 1));
  const int heads = head_count(ws, v);
  if (v.head >= heads) v.head = -1;
}

void draw_sidebar(const Workspace& ws, const SeriesState& series, const SizeSweepState& sweep,
                  const DeviceState& device, ViewState& view, FrameRequests& requests) {
  draw_models(ws, view, requests);
  draw_device_picker(device, requests);
  draw_model_panel(ws, view, requests);
  if (!series_files_of(ws, view.model).empty()) {
    ImGui::Separator();
    draw_series_controls(ws, view, series, requests);
  }
  if (!ws.models.empty()) {
    ImGui::Separator();
    draw_size_sweep_controls(ws, sweep, view, requests);
  }
  ImGui::Separator();
  draw_images(ws, view, requests);
  if (!ws.images.empty()) {
    ImGui::Separator();
    draw_edit_controls(ws, view);
  }
  // The current tab's analysis's own settings; a change analyses the images again.
  if (const auto options = tab_options(view.tab); !options.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("SETTINGS  %s", view.tab.c_str());
    option_controls(options, view.options);
  }
  ImGui::Separator();
  draw_map_controls(ws, view);
  ImGui::Separator();
  if (ImGui::Button("Help (h)")) view.show_help = !view.show_help;
}

void handle_view_keys(const Workspace& ws, ViewState& v) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || io.KeyCtrl) return;
  const auto pressed = [](int key) { return ImGui::IsKeyPressed(key, true); };
  const ResultSlot* r = result_of(ws, v.model, v.image);
  const int rows =
      r && r->analysis && !r->analysis->layers.empty() ? r->analysis->layers.front().rows : 0;
  const int cols =
      r && r->analysis && !r->analysis->layers.empty() ? r->analysis->layers.front().cols : 0;
  if (rows > 0 && (pressed(GLFW_KEY_LEFT) || pressed(GLFW_KEY_RIGHT) || pressed(GLFW_KEY_UP) ||
                   pressed(GLFW_KEY_DOWN))) {
    const MapQuery q = wanted_query(ws, v, v.model);  // on this model's grid
    int row = q.row < 0 || !q.prefix.empty() ? rows / 2 : q.row;
    int col = q.row < 0 || !q.prefix.empty() ? cols / 2 : q.col;
    if (pressed(GLFW_KEY_LEFT)) --col;
    if (pressed(GLFW_KEY_RIGHT)) ++col;
    if (pressed(GLFW_KEY_UP)) --row;
    if (pressed(GLFW_KEY_DOWN)) ++row;
    set_query_cell(ws, v, std::clamp(row, 0, rows - 1), std::clamp(col, 0, cols - 1));
  }
  const int layers = layer_count(ws, v);
  if (layers > 0) {
    int layer = v.layer < 0 ? layers - 1 : v.layer;
    if (pressed(GLFW_KEY_LEFT_BRACKET)) v.layer = std::max(0, layer - 1);
    if (pressed(GLFW_KEY_RIGHT_BRACKET)) v.layer = std::min(layers - 1, layer + 1);
  }
  const int heads = head_count(ws, v);
  if (pressed(GLFW_KEY_COMMA)) v.head = v.head < 0 ? heads - 1 : v.head - 1;
  if (pressed(GLFW_KEY_PERIOD)) v.head = v.head + 1 >= heads ? -1 : v.head + 1;
  if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) v.heads_grid = !v.heads_grid;
  if (ImGui::IsKeyPressed(GLFW_KEY_C, false)) v.compare = !v.compare;
  if (ImGui::IsKeyPressed(GLFW_KEY_1, false)) v.kind = MapKind::Query;
  if (ImGui::IsKeyPressed(GLFW_KEY_2, false)) v.kind = MapKind::Cls;
  if (ImGui::IsKeyPressed(GLFW_KEY_3, false)) v.kind = MapKind::Rollout;
  if (ImGui::IsKeyPressed(GLFW_KEY_4, false)) v.kind = MapKind::GradCam;
  if (ImGui::IsKeyPressed(GLFW_KEY_5, false)) v.kind = MapKind::GradRollout;
  if (ImGui::IsKeyPressed(GLFW_KEY_6, false)) v.kind = MapKind::Similarity;
  if (ImGui::IsKeyPressed(GLFW_KEY_E, false)) v.edit.on = !v.edit.on;
  if (ImGui::IsKeyPressed(GLFW_KEY_U, false)) v.edit.undo = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_H, false) || ImGui::IsKeyPressed(GLFW_KEY_F1, false))
    v.show_help = !v.show_help;
  if (ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false)) v.show_help = false;
}

void draw_help_overlay(ViewState& view) {
  if (!view.show_help) return;
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(0.92f);
  if (ImGui::Begin("Keyboard shortcuts", &view.show_help,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                       ImGuiWindowFlags_NoSavedSettings)) {
    const char* rows[][2] = {
        {"click a token", "make it the query (answered from the traces)"},
        {"arrows", "move the query"},
        {"[  ]", "previous / next layer"},
        {",  .", "previous / next head (past the last: head fusion)"},
        {"space", "all heads of the layer"},
        {"c", "compare the models side by side"},
        {"1 .. 6", "query / CLS / rollout / Grad-CAM / grad rollout / similarity"},
        {"wheel, right-drag", "zoom, pan"},
        {"e", "paint on the map (what-if edits) on / off"},
        {"u", "undo the last edit stroke"},
        {"Ctrl+O, Ctrl+Shift+O", "open an image / a model"},
        {"Ctrl+E", "export the current panel"},
        {"h, F1, Esc", "this help"}};
    for (const auto& r : rows) {
      ImGui::TextUnformatted(r[0]);
      ImGui::SameLine(190.0f);
      ImGui::TextDisabled("%s", r[1]);
    }
  }
  ImGui::End();
}

}  // namespace attnlab::gui
