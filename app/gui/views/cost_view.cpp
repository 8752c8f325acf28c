// The Cost tab; see cost_view.h.
#include "app/gui/views/cost_view.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/gui/views/figure_view.h"
#include "app/session/model_source.h"
#include "core/runtime/device.h"
#include "core/runtime/precision.h"

namespace attnlab::gui {
namespace {

// The models the sweep is of: every ready model, by name and how it was loaded (a model
// loaded again with another input size is a new sweep).
std::string models_key(const Workspace& ws) {
  std::string key;
  for (const auto& m : ws.models) {
    if (m.status != LoadStatus::Ready) continue;
    key += m.info.name + "|" + m.arg + "|" + m.options.preset + "|";
    for (const int64_t s : m.options.img_size) key += std::to_string(s) + ",";
    key += ";";
  }
  return key;
}

bool any_loading(const Workspace& ws) {
  return std::any_of(ws.models.begin(), ws.models.end(),
                     [](const ModelSlot& m) { return m.status == LoadStatus::Loading; });
}

}  // namespace

void start_complexity(const Workspace& ws, CostState& cost, ComputeWorker& worker) {
  std::vector<std::pair<std::string, session::ModelRequest>> models;
  for (const auto& m : ws.models) {
    if (m.status != LoadStatus::Ready) continue;
    session::ModelRequest request = session::model_entry_request(m.arg, m.options.preset);
    request.img_size = m.options.img_size;
    models.emplace_back(m.info.name, request);
  }
  if (models.empty()) return;
  const std::string key = models_key(ws);
  cost.counting = true;
  cost.error.clear();
  worker.submit("counting MACs", [models, key](JobContext& ctx) {
    try {
      auto sweep = std::make_shared<const session::ComplexitySweep>(session::complexity_sweep(
          models, session::default_complexity_scales(),
          [&](int64_t done, int64_t total, const std::string&) { ctx.progress(done, total); },
          [&] { return ctx.cancelled(); }));
      if (ctx.cancelled()) return;
      ctx.post(ComplexityCounted{sweep, key});
    } catch (const std::exception& e) {
      ctx.post(CostFailed{std::string("complexity: ") + e.what()});
    }
  });
}

void start_bench(const Workspace& ws, const DeviceState& device, CostState& cost,
                 ComputeWorker& worker) {
  std::vector<std::string> mechanisms;
  for (const auto& m : ws.models)
    if (m.status == LoadStatus::Ready) mechanisms.push_back(m.info.mechanism);
  session::AttentionBenchSettings s = session::models_bench_settings(mechanisms);
  s.repeats = 3;
  cost.benching = true;
  cost.error.clear();
  try {  // where and at what precision the models run (the device and precision pickers)
    s.device = runtime::select_device(device.current);
    s.dtype = runtime::parse_dtype(device.dtype);
  } catch (const std::exception& e) {
    cost.benching = false;
    cost.error = e.what();
    return;
  }
  worker.submit("measuring attention", [s](JobContext& ctx) {
    try {
      const auto points = session::bench_attention(
          s, [&](int64_t done, int64_t total, const std::string&) { ctx.progress(done, total); },
          [&] { return ctx.cancelled(); });
      if (ctx.cancelled()) return;
      auto table =
          std::make_shared<const analysis::Table>(session::attention_bench_table(points, s));
      ctx.post(AttentionBenched{table, s});
    } catch (const std::exception& e) {
      ctx.post(CostFailed{std::string("bench: ") + e.what()});
    }
  });
}

void apply_result(CostState& cost, const ComplexityCounted& counted) {
  cost.sweep = counted.sweep;
  cost.counted = counted.key;
  cost.counting = false;
}

void apply_result(CostState& cost, const AttentionBenched& benched) {
  cost.bench = benched.table;
  cost.bench_settings = benched.settings;
  cost.benching = false;
}

void apply_result(CostState& cost, StatusBarState& status, const CostFailed& failed) {
  cost.counting = cost.benching = false;
  cost.error = failed.error;
  status.notice = failed.error;
  status.notice_is_error = true;
}

FigureJob cost_tab_figure(const CostState& c) {
  if (c.shown == CostState::Shown::Macs) {
    if (!c.sweep) return no_figure(c.counting ? "counting..." : "no count yet");
    return [sweep = c.sweep](std::string* why) -> std::optional<viz::CaptionedFigure> {
      try {
        return session::complexity_sweep_figure(*sweep);
      } catch (const std::exception& e) {
        *why = e.what();
        return std::nullopt;
      }
    };
  }
  if (!c.bench) return no_figure(c.benching ? "measuring..." : "not measured yet");
  const size_t which = c.shown == CostState::Shown::Latency ? 0 : 1;
  return [table = c.bench, s = c.bench_settings,
          which](std::string* why) -> std::optional<viz::CaptionedFigure> {
    try {
      const auto figures = session::attention_bench_figures(*table, s);
      if (which >= figures.size()) {
        *why = "memory is not measured on " + s.device.str();
        return std::nullopt;
      }
      return figures[which];
    } catch (const std::exception& e) {
      *why = e.what();
      return std::nullopt;
    }
  };
}

void draw_cost_tab(const Workspace& ws, const CostState& c, TextureCache& cache,
                   CostState::Shown& shown, FrameRequests& requests) {
  int part = int(shown);
  ImGui::RadioButton("MACs vs input size", &part, 0);
  ImGui::SameLine();
  ImGui::RadioButton("latency vs N", &part, 1);
  ImGui::SameLine();
  ImGui::RadioButton("memory vs N", &part, 2);
  shown = CostState::Shown(part);
  const bool macs = shown == CostState::Shown::Macs;
  if (macs) {
    // Counted again whenever the open models change (a few forwards per model).
    if (!c.counting && !any_loading(ws) && c.counted != models_key(ws) && c.error.empty())
      requests.count_complexity = true;
  } else {
    ImGui::SameLine();
    ImGui::BeginDisabled(c.benching);
    if (ImGui::Button(c.bench ? "Measure again" : "Measure")) requests.run_bench = true;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(
          "times one layer of each open model's mechanism and softmax (C 384, 6 heads, "
          "N = 196, 784, 3136; median of 3) on the CPU");
  }
  if (!c.error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", c.error.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const int w = std::max(200, int(avail.x)), h = std::max(150, int(avail.y) - 40);
  char id[64];
  std::snprintf(id, sizeof id, "|%p|%p|%d|%dx%d", static_cast<const void*>(c.sweep.get()),
                static_cast<const void*>(c.bench.get()), part, w, h);
  const std::string slot = "tab|cost", key = id;
  value_tooltip(show_figure(
      cache, slot, key, [&] { return cost_tab_figure(c); }, w, h));
  if (macs && c.sweep)
    for (const auto& n : c.sweep->notes) ImGui::TextDisabled("not counted: %s", n.c_str());
}

}  // namespace attnlab::gui
