// The training-series timeline; see series_view.h.
#include "app/gui/views/series_view.h"

#include <imgui.h>

#include <filesystem>

#include "app/gui/views/figure_view.h"
#include "app/gui/workspace/workspace.h"
#include "app/session/checkpoint_series.h"
#include "app/session/cka_series.h"
#include "models/zoo.h"

namespace fs = std::filesystem;

namespace attnlab::gui {

std::vector<std::string> series_files_of(const Workspace& ws, int m) {
  if (m < 0 || m >= int(ws.models.size())) return {};
  const fs::path p(ws.models[size_t(m)].arg);
  if (!p.has_parent_path() || p.extension() != ".safetensors") return {};
  return models::zoo_series_files(p.parent_path().string(), p.stem().string());
}

void load_series(Workspace& ws, const ViewState& view, SeriesState& s, ComputeWorker& worker) {
  const int m = view.model, i = view.image;
  const std::vector<std::string> files = series_files_of(ws, m);
  if (files.empty() || ws.images.empty()) return;
  s = SeriesState{};
  s.model = m;
  s.image = i;
  s.run = ws.next_slot_id++;
  const uint64_t run = s.run;
  s.files = files;
  s.analyses.resize(files.size());
  s.steps.assign(files.size(), -1);
  s.loading = true;
  const std::string image = ws.images[size_t(i)].path;
  const std::vector<image::EditOp> edits = ws.images[size_t(i)].edits;  // as the views see it
  ModelOptions on_device;  // the checkpoints run where and as the model does (the pickers)
  on_device.device = ws.models[size_t(m)].options.device;
  on_device.dtype = ws.models[size_t(m)].options.dtype;
  worker.submit(
      "series of " + ws.models[size_t(m)].info.name,
      [files, image, edits, run, on_device, options = view.options](JobContext& ctx) {
        std::vector<std::shared_ptr<const ImageAnalysis>> done;
        for (size_t k = 0; k < files.size(); ++k) {
          if (ctx.cancelled()) return;
          ctx.progress(int64_t(k), int64_t(files.size()));
          try {
            auto model = load_model(files[k], nullptr, on_device);
            auto a = analyse_image(*model, image, options, edits);
            done.push_back(a);
            const nlohmann::json step = session::checkpoint_step(files[k]);
            const int64_t st = step.is_number() ? step.get<int64_t>() : int64_t(k);
            ctx.post(SeriesCheckpointDone{run, k, a, st});
          } catch (const std::exception& e) {
            ctx.post(JobNotice{"series: " + files[k] + ": " + e.what()});
          }
        }
        // Every checkpoint against the final one, on this image (cka_series.h).
        std::vector<std::vector<analysis::Table>> across;
        if (done.size() == files.size() && done.size() > 1) {
          std::vector<const models::ForwardResult*> forwards;
          for (const auto& a : done) forwards.push_back(a->forward.get());
          try {
            for (auto& t : session::cka_final_tables(session::joint_layer_hsic(forwards), 1))
              across.push_back({std::move(t)});
          } catch (const std::exception& e) {
            ctx.post(JobNotice{std::string("series: cka to the final checkpoint: ") + e.what()});
          }
        }
        ctx.post(SeriesDone{run, std::move(across)});
      });
}

void apply_result(SeriesState& series, const SeriesCheckpointDone& done) {
  if (series.run != done.run || done.k >= series.analyses.size()) return;  // another series
  series.analyses[done.k] = done.analysis;
  series.steps[done.k] = done.step;
}

void apply_result(SeriesState& series, const SeriesDone& done) {
  if (series.run != done.run) return;
  series.loading = false;
  series.across = done.across;
}

void show_series_checkpoint(Workspace& ws, ViewState& view, SeriesState& s, int k) {
  if (k < 0 || size_t(k) >= s.analyses.size() || !s.analyses[size_t(k)]) return;
  s.shown = k;
  ResultSlot slot;
  slot.status = LoadStatus::Ready;
  slot.analysis = s.analyses[size_t(k)];
  ws.results[{s.model, s.image}] = slot;  // maps follow for the current query
  view.image = s.image;
}

void draw_series_controls(const Workspace& ws, const ViewState& view, const SeriesState& s,
                          FrameRequests& requests) {
  const std::vector<std::string> files = series_files_of(ws, view.model);
  if (s.model == view.model && !s.files.empty()) {
    int ready = 0;
    for (const auto& a : s.analyses) ready += a != nullptr;
    ImGui::TextDisabled("TRAINING SERIES (%d/%zu analysed)", ready, s.files.size());
    int k = s.shown < 0 ? int(s.files.size()) - 1 : s.shown;
    const std::string label =
        s.steps[size_t(k)] >= 0 ? "step " + std::to_string(s.steps[size_t(k)]) : "...";
    if (ImGui::SliderInt("checkpoint", &k, 0, int(s.files.size()) - 1, label.c_str()))
      requests.show_checkpoint = k;
    return;
  }
  if (files.empty()) return;
  ImGui::TextDisabled("TRAINING SERIES");
  if (ImGui::Button(("Analyse " + std::to_string(files.size()) + " checkpoints").c_str()))
    requests.load_series = true;
}

session::SeriesResults series_results(const Workspace& ws, const SeriesState& s,
                                      const session::AnalysisInfo& analysis) {
  session::SeriesResults out;
  out.name = s.model >= 0 && s.model < int(ws.models.size())
                 ? ws.models[size_t(s.model)].info.name + "_series"
                 : "series";
  // The analysis's tables over the checkpoints, as analyze-series writes them.
  session::SeriesTables tables;
  for (size_t k = 0; k < s.analyses.size(); ++k) {
    if (!s.analyses[k]) continue;
    std::vector<analysis::Table> of_k = s.analyses[k]->tables;
    if (k < s.across.size()) of_k.insert(of_k.end(), s.across[k].begin(), s.across[k].end());
    tables.add(int64_t(k), fs::path(s.files[k]).filename().string(), s.steps[k], of_k,
               analysis.tables);
  }
  out.tables = tables.tables();
  return out;
}

FigureJob series_figure_job(session::SeriesResults series, const session::AnalysisInfo& analysis) {
  return [series = std::move(series), figure = analysis.series_figure](
             std::string* why) -> std::optional<viz::CaptionedFigure> {
    try {
      return figure(series);
    } catch (const std::exception& e) {
      *why = e.what();
      return std::nullopt;
    }
  };
}

FigureJob series_tab_figure(const Workspace& ws, const SeriesState& s,
                            const session::AnalysisInfo& analysis) {
  session::SeriesResults series = series_results(ws, s, analysis);
  if (series.tables.empty() || !analysis.series_figure)
    return [](std::string* why) {
      *why = "no training series analysed yet";
      return std::optional<viz::CaptionedFigure>();
    };
  return series_figure_job(std::move(series), analysis);
}

void draw_series_figure(const Workspace& ws, const SeriesState& s, TextureCache& cache,
                        const session::AnalysisInfo& analysis, int w, int h) {
  const session::SeriesResults series = series_results(ws, s, analysis);
  size_t rows = 0;
  for (const auto& t : series.tables) rows += t.rows.size();
  if (rows == 0) return;
  ImGui::TextDisabled("over the training series (%s):", series.name.c_str());
  const std::string slot = "series|" + analysis.name;
  const std::string key = std::to_string(rows) + "|" + std::to_string(w) + "x" + std::to_string(h);
  value_tooltip(show_figure(
      cache, slot, key, [&] { return series_tab_figure(ws, s, analysis); }, w, h));
}

void draw_series_tab(const Workspace& ws, const SeriesState& s, TextureCache& cache,
                     const session::AnalysisInfo& analysis) {
  if (s.files.empty()) {
    ImGui::TextWrapped(
        "No training series loaded. Select a model with a checkpoint series (the zoo's castling) "
        "and press \"Analyse ... checkpoints\" in the sidebar.");
    return;
  }
  const session::SeriesResults series = series_results(ws, s, analysis);
  size_t rows = 0;
  for (const auto& t : series.tables) rows += t.rows.size();
  if (rows == 0) {
    std::string needs;
    for (const auto& n : analysis.needs) needs += (needs.empty() ? "" : ", ") + n;
    ImGui::TextWrapped("%s", s.loading ? "analysing the checkpoints..."
                                       : ("this model's layers offer no " + needs).c_str());
    return;
  }
  const int w = std::max(200, int(ImGui::GetContentRegionAvail().x * 0.7f));
  const std::string slot = "tab|" + analysis.tab->id;
  const std::string key = std::to_string(rows) + "|" + std::to_string(w);
  value_tooltip(show_figure(
      cache, slot, key, [&] { return series_tab_figure(ws, s, analysis); }, w, 4 * w));
  if (s.shown >= 0)
    ImGui::Text("shown in every view: checkpoint %d (step %lld)", s.shown,
                static_cast<long long>(s.steps[size_t(s.shown)]));
}

}  // namespace attnlab::gui
