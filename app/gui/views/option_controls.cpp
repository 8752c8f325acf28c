// See option_controls.h.
#include "app/gui/views/option_controls.h"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "app/session/analysis_registry.h"

namespace attnlab::gui {
namespace {

using Kind = session::AnalysisOption::Kind;

// The slider's ends: the declared range where finite (an open end moved in by a
// hundredth, the sliders' step), else the option's GUI range.
std::pair<double, double> slider_range(const session::AnalysisOption& o) {
  double lo = std::isfinite(o.min) ? o.min + (o.min_open ? 0.01 : 0.0) : o.gui_min;
  double hi = std::isfinite(o.max) ? o.max - (o.max_open ? 0.01 : 0.0) : o.gui_max;
  if (!(hi > lo)) hi = lo + 1;
  return {lo, hi};
}

// Sets the value; a refused one (out of range, wrong kind) leaves the old one.
bool try_set(session::OptionValues& values, const std::string& name, nlohmann::json v) {
  try {
    const nlohmann::json before = values.get(name);
    values.set(name, std::move(v));
    return values.get(name) != before;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

bool draw_one(const session::AnalysisOption& o, session::OptionValues& values) {
  const nlohmann::json v = values.get(o.name);
  const char* label = o.name.c_str();
  bool changed = false;
  // An option whose default is "unset" (described, e.g. "each layer's own"): a checkbox
  // says whether it is set, and the widget edits it when it is.
  if (o.default_value.is_null()) {
    bool set = !v.is_null();
    const std::string box = "##set_" + o.name;
    if (ImGui::Checkbox(box.c_str(), &set)) {
      if (!set) {
        values.reset(o.name);
        return true;
      }
      const auto [lo, hi] = slider_range(o);
      return try_set(values, o.name,
                     o.kind == Kind::Integer ? nlohmann::json(int64_t(lo)) : nlohmann::json(lo));
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("off: %s", o.default_text.empty() ? "the default" : o.default_text.c_str());
    ImGui::SameLine();
    if (!set) {
      ImGui::TextDisabled("%s: %s", label, o.default_text.c_str());
      return false;
    }
  }
  switch (o.kind) {
    case Kind::Real: {
      double x = v.get<double>();
      const auto [lo, hi] = slider_range(o);
      if (ImGui::SliderScalar(label, ImGuiDataType_Double, &x, &lo, &hi, "%.3g"))
        changed = try_set(values, o.name, std::round(x * 1000.0) / 1000.0);
      break;
    }
    case Kind::Integer: {
      int x = int(v.get<int64_t>());
      if (ImGui::InputInt(label, &x)) changed = try_set(values, o.name, int64_t(x));
      break;
    }
    case Kind::Flag: {
      bool x = v.is_boolean() && v.get<bool>();
      if (ImGui::Checkbox(label, &x)) changed = try_set(values, o.name, x);
      break;
    }
    case Kind::Choice: {
      const std::string current = v.get<std::string>();
      if (ImGui::BeginCombo(label, current.c_str())) {
        for (const auto& c : o.choices)
          if (ImGui::Selectable(c.c_str(), c == current)) changed = try_set(values, o.name, c);
        ImGui::EndCombo();
      }
      break;
    }
    case Kind::Cell: {
      int yx[2] = {int(v[0].get<int64_t>()), int(v[1].get<int64_t>())};
      if (ImGui::InputInt2(label, yx))
        changed = try_set(values, o.name, nlohmann::json::array({int64_t(yx[0]), int64_t(yx[1])}));
      break;
    }
    case Kind::Text:
    case Kind::Percentages: {
      // Applied on Enter: a list being typed is not a value yet.
      std::array<char, 256> buffer{};
      std::snprintf(buffer.data(), buffer.size(), "%s", session::option_value_text(o, v).c_str());
      if (ImGui::InputText(label, buffer.data(), buffer.size(),
                           ImGuiInputTextFlags_EnterReturnsTrue)) {
        try {
          changed = try_set(values, o.name, session::parse_option_value(o, buffer.data()));
        } catch (const std::invalid_argument&) {
          changed = false;  // the field shows the last valid value again
        }
      }
      break;
    }
  }
  if (ImGui::IsItemHovered()) {
    const std::string d = o.default_shown();
    ImGui::SetTooltip("--%s: %s%s", o.name.c_str(), o.help.c_str(),
                      d.empty() ? "" : (" (default " + d + ")").c_str());
  }
  return changed;
}

void add_unique(std::vector<const session::AnalysisOption*>& out,
                const session::AnalysisOption* o) {
  if (o && o->in_gui && std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
}

}  // namespace

bool option_controls(const std::vector<const session::AnalysisOption*>& options,
                     session::OptionValues& values) {
  bool changed = false;
  for (const session::AnalysisOption* o : options) {
    if (!o->in_gui) continue;
    ImGui::PushID(o->name.c_str());
    changed |= draw_one(*o, values);
    ImGui::PopID();
  }
  return changed;
}

std::vector<const session::AnalysisOption*> analysis_gui_options(const std::string& analysis) {
  std::vector<const session::AnalysisOption*> out;
  const session::AnalysisInfo* a = session::find_analysis(analysis);
  if (!a) return out;
  for (const auto& o : a->options) add_unique(out, session::find_analysis_option(o.name));
  for (const auto& n : a->reads_options) add_unique(out, session::find_analysis_option(n));
  return out;
}

std::vector<const session::AnalysisOption*> tab_options(const std::string& tab_id) {
  for (const auto& a : session::analyses())
    if (a.tab && a.tab->id == tab_id) return analysis_gui_options(a.name);
  return {};
}

}  // namespace attnlab::gui
