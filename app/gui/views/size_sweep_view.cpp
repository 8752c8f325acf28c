// The resolution sweep in the GUI; see size_sweep_view.h.
#include "app/gui/views/size_sweep_view.h"

#include <imgui.h>

#include <cstring>

#include "app/gui/views/figure_view.h"
#include "app/gui/views/series_view.h"
#include "app/session/checkpoint_series.h"

namespace attnlab::gui {

void start_size_sweep(Workspace& ws, const ViewState& view, SizeSweepState& s,
                      ComputeWorker& worker) {
  const int m = view.model, i = view.image;
  if (m < 0 || m >= int(ws.models.size()) || i < 0 || i >= int(ws.images.size())) return;
  if (s.running) return;
  std::vector<int64_t> sizes;
  try {
    sizes = parse_sweep_sizes(view.sweep_sizes.data());
  } catch (const std::exception& e) {
    s.error = e.what();
    return;
  }
  const ModelSlot& slot = ws.models[size_t(m)];
  s.model = m;
  s.image = i;
  s.loads = slot.loads;
  s.run = ws.next_slot_id++;
  const uint64_t run = s.run;
  s.sizes = sizes;
  s.analyses.assign(sizes.size(), nullptr);
  s.error.clear();
  s.running = true;
  const std::string arg = slot.arg, image = ws.images[size_t(i)].path;
  const ModelOptions base = slot.options;
  const session::OptionValues analysis_options = view.options;
  const std::vector<image::EditOp> edits = ws.images[size_t(i)].edits;  // as the views see it
  worker.submit("size sweep of " + slot.info.name, [=](JobContext& ctx) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (ctx.cancelled()) break;
      ctx.progress(int64_t(k), int64_t(sizes.size()));
      try {
        ModelOptions options = base;
        options.img_size = {sizes[k], sizes[k]};
        auto model = load_model(arg, nullptr, options);
        auto a = analyse_image(*model, image, analysis_options, edits);
        ctx.post(SweepSizeDone{run, k, a});
      } catch (const std::exception& e) {
        ctx.post(SweepSizeFailed{run, std::to_string(sizes[k]) + " px: " + e.what()});
      }
    }
    ctx.post(SweepDone{run});
  });
}

void apply_result(SizeSweepState& sweep, const SweepSizeDone& done) {
  if (sweep.run == done.run && done.k < sweep.analyses.size())
    sweep.analyses[done.k] = done.analysis;
}

void apply_result(SizeSweepState& sweep, const SweepSizeFailed& failed) {
  if (sweep.run == failed.run) sweep.error = failed.error;
}

void apply_result(SizeSweepState& sweep, const SweepDone& done) {
  if (sweep.run == done.run) sweep.running = false;
}

void draw_size_sweep_controls(const Workspace& ws, const SizeSweepState& s, ViewState& view,
                              FrameRequests& requests) {
  const int m = view.model;
  const int loads = m >= 0 && m < int(ws.models.size()) ? ws.models[size_t(m)].loads : -1;
  if (view.sweep_sizes_model != m || view.sweep_sizes_loads != loads) {  // its own default
    view.sweep_sizes_model = m;
    view.sweep_sizes_loads = loads;
    view.sweep_sizes.fill('\0');
    const std::string d = m >= 0 && m < int(ws.models.size())
                              ? default_sweep_sizes(ws.models[size_t(m)].info.input_size)
                              : std::string();
    std::strncpy(view.sweep_sizes.data(), d.c_str(), view.sweep_sizes.size() - 1);
  }
  ImGui::TextDisabled("INPUT SIZE SWEEP");
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.5f);
  ImGui::InputText("##sweep_sizes", view.sweep_sizes.data(), view.sweep_sizes.size());
  ImGui::SameLine();
  ImGui::BeginDisabled(s.running || ws.images.empty());
  if (ImGui::Button("Sweep sizes")) requests.sweep_sizes = true;
  ImGui::EndDisabled();
  if (s.model == m && !s.sizes.empty()) {
    int ready = 0;
    for (const auto& a : s.analyses) ready += a != nullptr;
    ImGui::TextDisabled("%d/%zu sizes analysed%s", ready, s.sizes.size(), s.running ? "..." : "");
  }
  if (s.model == m && !s.error.empty()) ImGui::TextWrapped("sweep: %s", s.error.c_str());
}

bool has_size_sweep(const Workspace& ws, const ViewState& view, const SizeSweepState& s) {
  if (s.model != view.model || s.image != view.image) return false;
  if (s.model < 0 || s.model >= int(ws.models.size()) ||
      ws.models[size_t(s.model)].loads != s.loads)
    return false;  // the model was loaded again since (other options)
  for (const auto& a : s.analyses)
    if (a) return true;
  return false;
}

session::SeriesResults size_sweep_results(const Workspace& ws, const SizeSweepState& s,
                                          const session::AnalysisInfo& analysis) {
  session::SizeSweepTables tables;  // the same tables as analyze-sizes writes, from this image
  for (size_t k = 0; k < s.analyses.size(); ++k)
    if (s.analyses[k]) tables.add(int64_t(k), s.sizes[k], s.analyses[k]->tables, analysis.tables);
  return tables.results(s.model >= 0 && s.model < int(ws.models.size())
                            ? ws.models[size_t(s.model)].info.name
                            : std::string("model"));
}

void draw_size_sweep_figure(const Workspace& ws, const ViewState& view, const SizeSweepState& s,
                            TextureCache& cache, const session::AnalysisInfo& analysis, int w,
                            int h) {
  if (!analysis.over_sizes || !analysis.series_figure || !has_size_sweep(ws, view, s)) return;
  session::SeriesResults sweep = size_sweep_results(ws, s, analysis);
  size_t rows = 0;
  for (const auto& t : sweep.tables) rows += t.rows.size();
  if (rows == 0) return;
  ImGui::TextDisabled("against the input size (%s, this image):", sweep.name.c_str());
  const std::string slot = "sweep|" + analysis.name;
  const std::string key = std::to_string(rows) + "|" + std::to_string(w) + "x" + std::to_string(h);
  value_tooltip(
      show_figure(cache, slot, key, [&] { return series_figure_job(sweep, analysis); }, w, h));
}

}  // namespace attnlab::gui
