// Workspace bookkeeping; see workspace.h.
#include "app/gui/workspace.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <system_error>
#include <tuple>

#include "app/gui/model_options.h"
#include "viz/figures/map_panels.h"

namespace attnlab::gui {

std::string unique_model_name(const GuiState& state, int index, const std::string& base) {
  const auto taken = [&](const std::string& name) {
    for (size_t m = 0; m < state.models.size(); ++m)
      if (int(m) != index && state.models[m].info.name == name) return true;
    return false;
  };
  std::string name = base;
  for (int n = 2; taken(name); ++n) name = base + " (" + std::to_string(n) + ")";
  return name;
}

void add_model(GuiState& state, ComputeWorker& worker, const std::string& arg) {
  ModelSlot slot;
  slot.id = state.next_slot_id++;
  slot.arg = arg;
  slot.info.name = unique_model_name(state, int(state.models.size()),
                                     std::filesystem::path(arg).stem().string());
  state.models.push_back(slot);
  ModelOptions options;
  options.device = state.device.current;  // the device picker's
  options.dtype = state.device.dtype;     // and the precision picker's
  submit_model_load(state, worker, int(state.models.size()) - 1, options);
}

void retry_model_as(GuiState& state, ComputeWorker& worker, int index, const std::string& preset) {
  // Results computed with a model that failed do not exist; nothing else to clear.
  ModelOptions options = state.models[size_t(index)].options;
  options.preset = preset;
  submit_model_load(state, worker, index, options);
}

int add_image(GuiState& state, LoadWorker& loader, const std::string& path) {
  // The same file again: show the one already open (an image has no per-entry options, so
  // a second entry would only be a copy). Paths are compared as the file system resolves
  // them ("./a.png", "a.png" and a link to it are one file).
  std::error_code ec;
  const std::filesystem::path wanted = std::filesystem::weakly_canonical(path, ec);
  for (size_t i = 0; i < state.images.size() && !ec; ++i) {
    std::error_code other;
    if (std::filesystem::weakly_canonical(state.images[i].path, other) == wanted && !other) {
      state.status.notice = std::filesystem::path(path).filename().string() + " is already open";
      state.status.notice_is_error = false;
      return int(i);
    }
  }
  ImageSlot slot;
  slot.id = state.next_slot_id++;
  slot.path = path;
  slot.job = loader.submit(JobKind::Image, path);
  state.images.push_back(std::move(slot));
  return int(state.images.size()) - 1;
}

int find_model(const GuiState& state, uint64_t id) {
  for (size_t m = 0; m < state.models.size(); ++m)
    if (state.models[m].id == id) return int(m);
  return -1;
}

int find_image(const GuiState& state, uint64_t id) {
  for (size_t i = 0; i < state.images.size(); ++i)
    if (state.images[i].id == id) return int(i);
  return -1;
}

const ResultSlot* result_of(const GuiState& state, int model, int image) {
  const auto it = state.results.find({model, image});
  return it == state.results.end() ? nullptr : &it->second;
}

bool image_has_failed_analysis(const GuiState& state) {
  for (const auto& [key, r] : state.results)
    if (key.second == state.view.image && r.status == LoadStatus::Failed) return true;
  return false;
}

namespace {

// The first layer's grid of `model` on the current image, {0, 0} before its analysis.
std::pair<int, int> first_grid(const GuiState& state, int model) {
  const ResultSlot* r = result_of(state, model, state.view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return {0, 0};
  return {r->analysis->layers.front().rows, r->analysis->layers.front().cols};
}

}  // namespace

void set_query_cell(const GuiState& state, ViewState& view, int row, int col) {
  const auto [rows, cols] = first_grid(state, view.model);
  MapQuery& q = view.query;
  q = MapQuery{};
  q.row = row;
  q.col = col;
  q.grid_rows = rows;
  q.grid_cols = cols;
  if (view.kind == MapKind::Cls) view.kind = MapKind::Query;
}

std::string maps_key(const GuiState& state, const MapQuery& query) {
  return query.tag() + "|" + state.view.options.text("similarity-facet");
}

std::string rollout_key(const GuiState& state, const MapQuery& query) {
  return query.tag() + "|" + rollout_tag(state.view.options);
}

MapQuery wanted_query(const GuiState& state, int model) {
  MapQuery q = state.view.query;
  // A cell picked on another model's grid (compare, a model switch): the same place of
  // the image on this model's grid, by area.
  const auto [rows, cols] = first_grid(state, model);
  if (q.prefix.empty() && q.row >= 0 && q.grid_rows > 0 && rows > 0 &&
      (q.grid_rows != rows || q.grid_cols != cols)) {
    const viz::GridCell c =
        viz::map_cell(viz::GridCell{q.row, q.col}, q.grid_rows, q.grid_cols, rows, cols);
    q.row = c.row;
    q.col = c.col;
    q.grid_rows = rows;
    q.grid_cols = cols;
  }
  if (state.view.kind == MapKind::Cls) {
    q = MapQuery{};
    q.prefix = "cls";
    const ResultSlot* r = result_of(state, model, state.view.image);
    if (r && r->analysis && !r->analysis->layers.empty()) {
      const auto& prefix = r->analysis->layers.front().prefix;
      if (std::find(prefix.begin(), prefix.end(), "cls") == prefix.end()) q = state.view.query;
    }
  }
  return q;
}

ExplainRequest wanted_explanation(const GuiState& state) {
  ExplainRequest e;
  e.method = explain_method(state.view.kind);
  e.cls = state.view.explain_class;
  if (e.method == ExplainMethod::GradCam) {
    e.target = state.view.gradcam_target;
    e.signed_map = state.view.gradcam_signed;
  }
  return e;
}

namespace {

// Answers `q` for (model m, image i) on the worker with `compute` and stores the result in
// the slot's `result` / `done_key` fields, clearing `pending` when it is still this query.
// Skipped when a newer request took the ticket before the job started.
template <typename Result, typename Compute>
void submit_query_job(ComputeWorker& worker, const std::string& label, int m, int i,
                      std::shared_ptr<const ImageAnalysis> analysis, const MapQuery& q,
                      const std::shared_ptr<std::atomic<uint64_t>>& ticket,
                      std::shared_ptr<const Result> ResultSlot::*result,
                      std::string ResultSlot::*done_key, std::string ResultSlot::*pending,
                      const std::string& key, Compute compute) {
  const uint64_t mine = ++*ticket;
  worker.submit(
      label,
      [=](JobContext& ctx) {
        if (ticket->load() != mine) return;  // superseded: its slot already waits for another
        std::shared_ptr<const Result> out;
        std::string error;
        try {
          out = compute(*analysis, q);
        } catch (const std::exception& e) {
          error = e.what();
        }
        ctx.post([=](GuiState& s) {
          const auto found = s.results.find({m, i});
          // Answers of an analysis no longer shown (its model was loaded again) are dropped.
          if (found == s.results.end() || found->second.analysis != analysis) return;
          ResultSlot& slot = found->second;
          slot.*result = out;
          slot.*done_key = key;
          if (slot.*pending == key) (slot.*pending).clear();
          if (!error.empty()) {
            s.status.notice = error;
            s.status.notice_is_error = true;
          }
        });
      },
      Lane::Traces);  // reads recorded traces only: runs beside a long forward pass
}

// Explains a class of (model m, image i) on the models lane: it needs the model for its
// own forward and backward pass, so it queues behind loads and analyses, never beside them.
void submit_explanation(ComputeWorker& worker, const ModelSlot& model, int m, int i,
                        std::shared_ptr<const ImageAnalysis> analysis,
                        const ExplainRequest& request) {
  auto loaded = model.model;
  const std::string key = request.key();
  worker.submit(
      std::string(explain_method_name(request.method)) + " " + model.info.name + " " + key,
      [=](JobContext& ctx) {
        auto e = explain_image(*loaded, *analysis, request);
        ctx.post([=](GuiState& s) {
          const auto found = s.results.find({m, i});
          if (found == s.results.end() || found->second.analysis != analysis) return;
          ResultSlot& slot = found->second;
          slot.explanation = e;
          slot.explanation_key = key;
          if (slot.explanation_pending == key) slot.explanation_pending.clear();
        });
      });
}

void schedule_one(GuiState& state, ComputeWorker& worker, int m, int i) {
  const ModelSlot& model = state.models[size_t(m)];
  const ImageSlot& image = state.images[size_t(i)];
  if (model.status != LoadStatus::Ready || image.status == LoadStatus::Failed) return;
  auto found = state.results.find({m, i});
  // An analysis computed with other values of the image analyses' options (the Settings
  // section) is computed again; its maps and rollouts go with it.
  if (found != state.results.end() && found->second.status == LoadStatus::Ready &&
      found->second.analysis->options_key != image_options_key(state.view.options)) {
    state.results.erase(found);
    found = state.results.end();
  }
  if (found == state.results.end()) {
    state.results[{m, i}] = ResultSlot{};
    auto loaded = model.model;
    const std::string path = image.path;
    const session::OptionValues options = state.view.options;
    const uint64_t model_id = model.id, image_id = image.id;
    // The slot to answer, found by id (closing a model or image moves the ones after it);
    // null when either was closed or the model was loaded again meanwhile.
    const auto answer_slot = [model_id, image_id, loaded](GuiState& s) -> ResultSlot* {
      const int mm = find_model(s, model_id), ii = find_image(s, image_id);
      if (mm < 0 || ii < 0 || s.models[size_t(mm)].model != loaded) return nullptr;
      return &s.results[{mm, ii}];
    };
    worker.submit(
        "analyse " + model.info.name + " on " + std::filesystem::path(path).filename().string(),
        [answer_slot, loaded, path, options](JobContext& ctx) {
          try {
            auto a = analyse_image(
                *loaded, path, options, [&ctx] { return ctx.cancelled(); },
                [&ctx](int64_t done, int64_t total) { ctx.progress(done, total); });
            ctx.post([answer_slot, a](GuiState& s) {
              if (ResultSlot* r = answer_slot(s)) {
                r->analysis = a;
                r->status = LoadStatus::Ready;
              }
            });
          } catch (const std::exception& e) {
            if (ctx.cancelled()) return;  // Cancel marked the slot (gui.cpp)
            const std::string what = e.what();
            ctx.post([answer_slot, what](GuiState& s) {
              if (ResultSlot* r = answer_slot(s)) {
                r->status = LoadStatus::Failed;
                r->error = what;
              }
            });
          }
        });
    return;
  }
  ResultSlot& r = found->second;
  if (r.status != LoadStatus::Ready) return;
  const MapQuery q = wanted_query(state, m);
  const std::string key = maps_key(state, q);
  if (r.maps_key != key && r.pending_key != key) {
    r.pending_key = key;
    submit_query_job<QueryMaps>(
        worker, "maps " + model.info.name + " " + q.tag(), m, i, r.analysis, q, r.maps_ticket,
        &ResultSlot::maps, &ResultSlot::maps_key, &ResultSlot::pending_key, key,
        [facet = state.view.options.text("similarity-facet")](
            const ImageAnalysis& a, const MapQuery& mq) { return query_maps(a, mq, facet); });
  }
  const std::string rkey = rollout_key(state, q);  // the query and the rollout's switches
  if (state.view.kind == MapKind::Rollout && r.rollout_key != rkey && r.rollout_pending != rkey) {
    r.rollout_pending = rkey;
    submit_query_job<QueryRollout>(
        worker, "rollout " + model.info.name + " " + q.tag(), m, i, r.analysis, q, r.rollout_ticket,
        &ResultSlot::rollout, &ResultSlot::rollout_key, &ResultSlot::rollout_pending, rkey,
        [options = state.view.options](const ImageAnalysis& a, const MapQuery& mq) {
          return query_rollout(a, mq, options);
        });
  }
  if (is_explanation(state.view.kind)) {
    const ExplainRequest request = wanted_explanation(state);
    const std::string ekey = request.key();
    if (r.explanation_key != ekey && r.explanation_pending != ekey) {
      r.explanation_pending = ekey;
      submit_explanation(worker, model, m, i, r.analysis, request);
    }
  }
}

}  // namespace

void schedule_compute(GuiState& state, ComputeWorker& worker) {
  if (state.images.empty() || state.models.empty()) return;
  const int i = std::clamp(state.view.image, 0, int(state.images.size()) - 1);
  // The current model first, then the others on the same image (compare, model switch).
  schedule_one(state, worker, std::clamp(state.view.model, 0, int(state.models.size()) - 1), i);
  for (int m = 0; m < int(state.models.size()); ++m) schedule_one(state, worker, m, i);
}

}  // namespace attnlab::gui
