// The current model's section of the sidebar; see model_panel.h.
#include "app/gui/views/model_panel.h"

#include <imgui.h>

#include <cstdio>

#include "app/gui/views/theme.h"
#include "app/gui/workspace/model_options.h"
#include "app/session/model_source.h"
#include "models/presets.h"

namespace attnlab::gui {
namespace {

void wrapped_disabled(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());  // never as a format string: paths may hold '%'
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

// How a config-less checkpoint was recognised: the verdict, and under it (collapsible)
// what was read from the shapes and what was assumed.
void draw_recognition(const std::string& line) {
  if (line.empty()) return;
  const size_t colon = line.find(": ");
  if (colon == std::string::npos) {
    wrapped_disabled(line);
    return;
  }
  wrapped_disabled(line.substr(0, colon));
  if (!ImGui::TreeNodeEx("what was read and assumed", ImGuiTreeNodeFlags_DefaultOpen)) return;
  wrapped_disabled(line.substr(colon + 2));
  ImGui::TreePop();
}

// The fields show what the model is loaded with until the user types.
void refill(const ModelSlot& slot, int m, ModelOptionsEdit& e) {
  e.model = m;
  e.loads = slot.loads;
  e.height = slot.info.input_size.size() == 2 ? int(slot.info.input_size[0]) : 0;
  e.width = slot.info.input_size.size() == 2 ? int(slot.info.input_size[1]) : 0;
  std::snprintf(e.names_path.data(), e.names_path.size(), "%s",
                slot.options.class_names_path.c_str());
  e.merge = slot.options.merge >= 0 ? int(slot.options.merge) : 8;
  std::string lines;
  for (const auto& p : slot.options.prompts) lines += (lines.empty() ? "" : "\n") + p;
  std::snprintf(e.prompts.data(), e.prompts.size(), "%s", lines.c_str());
}

// A whole CLIP's text prompts (as --text): one per line; applied, they are the model's
// classes and the Prompts tab shows where each is in the image, its score and Grad-CAM.
void draw_prompts(const ModelSlot& slot, ModelOptionsEdit& e, FrameRequests& requests) {
  if (!slot.info.reads_text) return;
  ImGui::TextUnformatted(
      slot.options.prompts.empty()
          ? "text prompts: none (one per line)"
          : ("text prompts: " + std::to_string(slot.options.prompts.size()) + " (the Prompts tab)")
                .c_str());
  ImGui::InputTextMultiline("##prompts", e.prompts.data(), e.prompts.size(),
                            ImVec2(-1.0f, ImGui::GetTextLineHeight() * 4.5f));
  ModelOptions options = slot.options;
  if (ImGui::Button("Apply##prompts")) {
    options.prompts = session::split_prompts(e.prompts.data(), '\n');
    if (!options.prompts.empty()) options.class_names_path.clear();  // the prompts are the classes
    requests.model_options.emplace_back(slot.id, options);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("each line a prompt, used as written (as --text): loaded again, re-analysed");
  if (!slot.options.prompts.empty()) {
    ImGui::SameLine();
    if (ImGui::Button("No prompts")) {
      options.prompts.clear();
      requests.model_options.emplace_back(slot.id, options);
    }
  }
}

// Token merging (ToMe) on a ViT-family model: r tokens merged away per block, as --merge.
void draw_merge(const ModelSlot& slot, ModelOptionsEdit& e, FrameRequests& requests) {
  if (!slot.info.mergeable && slot.options.merge < 0) return;
  ImGui::TextUnformatted(
      slot.options.merge < 0
          ? "token merging: off"
          : ("token merging: r = " + std::to_string(slot.options.merge)).c_str());
  ImGui::SetNextItemWidth(72.0f);
  ImGui::InputInt("##merge", &e.merge, 1);
  if (e.merge < 0) e.merge = 0;
  ImGui::SameLine();
  ModelOptions options = slot.options;
  if (ImGui::Button("Merge")) {
    options.merge = e.merge;
    requests.model_options.emplace_back(slot.id, options);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "ToMe: r tokens merged away in every block (as --merge); maps and rollout are "
        "carried back to the patches, the Merges tab shows the groups");
  if (slot.options.merge >= 0) {
    ImGui::SameLine();
    if (ImGui::Button("No merging")) {
      options.merge = -1;
      requests.model_options.emplace_back(slot.id, options);
    }
  }
}

void draw_input_size(const ModelSlot& slot, ModelOptionsEdit& e, FrameRequests& requests) {
  ImGui::TextUnformatted(("input " + input_size_label(slot.info)).c_str());
  if (!slot.info.preprocessing.empty() && ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", slot.info.preprocessing.c_str());
  ImGui::SetNextItemWidth(56.0f);
  ImGui::InputInt("##h", &e.height, 0);
  ImGui::SameLine(0.0f, 4.0f);
  ImGui::TextUnformatted("x");
  ImGui::SameLine(0.0f, 4.0f);
  ImGui::SetNextItemWidth(56.0f);
  ImGui::InputInt("##w", &e.width, 0);
  ImGui::SameLine();
  ModelOptions options = slot.options;
  if (ImGui::Button("Apply##size")) {
    options.img_size = {e.height, e.width};
    requests.model_options.emplace_back(slot.id, options);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("run the model at H x W (as --img-size): loaded again, then re-analysed");
  if (!slot.options.img_size.empty()) {
    ImGui::SameLine();
    if (ImGui::Button("Own size")) {
      options.img_size.clear();
      requests.model_options.emplace_back(slot.id, options);
    }
  }
}

void draw_class_names(const ModelSlot& slot, ModelOptionsEdit& e, FrameRequests& requests) {
  const std::string classes =
      slot.info.classes > 0 ? " (" + std::to_string(slot.info.classes) + " classes)" : "";
  ImGui::TextUnformatted(slot.options.class_names_path.empty()
                             ? "class names: the model's own"
                             : ("class names from a file" + classes).c_str());
  if (!slot.options.class_names_path.empty() && ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", slot.options.class_names_path.c_str());
  ImGui::SetNextItemWidth(-1.0f);
  ImGui::InputTextWithHint("##names", "names file (.txt, .json)", e.names_path.data(),
                           e.names_path.size());
  ModelOptions options = slot.options;
  if (ImGui::Button("Apply##names") && e.names_path[0] != '\0') {
    options.class_names_path = e.names_path.data();
    requests.model_options.emplace_back(slot.id, options);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("one name per line, or a JSON list / {\"0\": name} map (as --class-names)");
  if (!slot.options.class_names_path.empty()) {
    ImGui::SameLine();
    if (ImGui::Button("Model's own")) {
      options.class_names_path.clear();
      requests.model_options.emplace_back(slot.id, options);
    }
  }
}

// A model that failed to load: the first lines of why (the whole of it, e.g. the nearest
// presets of an unrecognised checkpoint or 150 missing keys, on hover), and a picker that
// loads it again as one of the presets.
void draw_failed(const ModelSlot& slot, FrameRequests& requests) {
  std::string brief;
  size_t lines = 0, pos = 0;
  while (pos < slot.error.size() && lines < 3) {
    const size_t nl = slot.error.find('\n', pos);
    brief += slot.error.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos + 1);
    pos = nl == std::string::npos ? slot.error.size() : nl + 1;
    ++lines;
  }
  if (pos < slot.error.size()) brief += "... (hover for the whole message)";
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(brief.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered() && pos < slot.error.size())
    ImGui::SetTooltip("%s", slot.error.c_str());
  const std::string& preset = slot.options.preset;
  if (ImGui::BeginCombo("load as", preset.empty() ? "choose a preset..." : preset.c_str())) {
    for (const auto& p : models::presets()) {
      if (ImGui::Selectable(p.name.c_str(), false)) requests.retry_model = {slot.id, p.name};
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.description.c_str());
    }
    ImGui::EndCombo();
  }
}

}  // namespace

void draw_model_panel(const Workspace& ws, ViewState& view, FrameRequests& requests) {
  const int m = view.model;
  if (m < 0 || m >= int(ws.models.size())) return;
  const ModelSlot& slot = ws.models[size_t(m)];
  if (slot.status == LoadStatus::Failed) draw_failed(slot, requests);
  if (slot.status != LoadStatus::Ready) return;
  ImGui::Separator();
  ModelOptionsEdit& e = view.model_edit;
  if (e.model != m || e.loads != slot.loads) refill(slot, m, e);
  ImGui::TextDisabled("MODEL  %s", slot.info.name.c_str());
  wrapped_disabled(slot.info.describe);
  draw_recognition(slot.info.recognition);
  ImGui::BeginDisabled(slot.reloading);
  ImGui::PushID(m);
  draw_input_size(slot, e, requests);
  draw_prompts(slot, e, requests);
  draw_class_names(slot, e, requests);
  draw_merge(slot, e, requests);
  ImGui::PopID();
  ImGui::EndDisabled();
  if (slot.reloading) ImGui::TextDisabled("loading it with the new options...");
  if (!slot.option_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(("not applied, the model is as it was: " + slot.option_error).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  }
  ImGui::Checkbox("the picture the model saw", &view.show_input);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the Maps tab shows the model's input (after %s) without the map",
                      slot.info.preprocessing.c_str());
}

}  // namespace attnlab::gui
