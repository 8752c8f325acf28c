// What the current view needs computed, submitted to the ComputeWorker each frame
// (schedule_compute.h): each (model, image) analysed once for the image's
// what-if edits and the analyses' options, then the maps, the rollout and the class
// explanation of the current query from that analysis. While an image has edits, the
// unedited picture's analysis is kept beside the edited one (ResultSlot::original) and,
// while the "edited − original" view shows, its maps are computed too.
#include "app/gui/workspace/schedule_compute.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <utility>

#include "app/gui/workspace/workspace.h"

namespace attnlab::gui {
namespace {

// The slot of (m, i) that holds `analysis`: the edited picture's (the slot itself) or,
// for `original`, its original's; nullptr once it does not (an edit, a closed model or
// image, new options replaced it).
ResultSlot* slot_holding(GuiState& s, int m, int i, const std::shared_ptr<const ImageAnalysis>& a,
                         bool original) {
  const auto found = s.results.find({m, i});
  if (found == s.results.end()) return nullptr;
  ResultSlot* slot = original ? found->second.original.get() : &found->second;
  return slot && slot->analysis == a ? slot : nullptr;
}

// Answers `q` for the slot holding `analysis` on the worker with `compute` and stores the
// result in the slot's `result` / `done_key` fields, clearing `pending` when it is still
// this query. Skipped when a newer request took the ticket before the job started.
template <typename Result, typename Compute>
void submit_query_job(ComputeWorker& worker, const std::string& label, int m, int i, bool original,
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
          // Answers of an analysis no longer shown (its model was loaded again, the image
          // edited) are dropped.
          ResultSlot* slot = slot_holding(s, m, i, analysis, original);
          if (!slot) return;
          slot->*result = out;
          slot->*done_key = key;
          if (slot->*pending == key) (slot->*pending).clear();
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
void submit_explanation(ComputeWorker& worker, const ModelSlot& model, int m, int i, bool original,
                        std::shared_ptr<const ImageAnalysis> analysis,
                        const ExplainRequest& request) {
  auto loaded = model.model;
  const std::string key = request.key();
  worker.submit(
      std::string(explain_method_name(request.method)) + " " + model.info.name + " " + key,
      [=](JobContext& ctx) {
        auto e = explain_image(*loaded, *analysis, request);
        ctx.post([=](GuiState& s) {
          ResultSlot* slot = slot_holding(s, m, i, analysis, original);
          if (!slot) return;
          slot->explanation = e;
          slot->explanation_key = key;
          if (slot->explanation_pending == key) slot->explanation_pending.clear();
        });
      });
}

// Analyses (model m, image i) with `edits` (none: the original picture) on the worker;
// the answer goes to the slot of (m, i) that is still for these edits.
void submit_analysis(GuiState& state, ComputeWorker& worker, int m, int i,
                     const std::vector<image::EditOp>& edits) {
  const ModelSlot& model = state.models[size_t(m)];
  const ImageSlot& image = state.images[size_t(i)];
  auto loaded = model.model;
  const std::string path = image.path, key = image::edits_text(edits);
  const session::OptionValues options = state.view.options;
  const uint64_t model_id = model.id, image_id = image.id;
  // An edited picture's analysis is skipped when the edits changed again before it started.
  const auto version = image.edits_version;
  const uint64_t mine = version->load();
  const bool edited = !edits.empty();
  // The slot to answer, found by id (closing a model or image moves the ones after it) and
  // by the edits it is for; null when either was closed, the model was loaded again or
  // the image edited meanwhile.
  const auto answer_slot = [model_id, image_id, loaded, key](GuiState& s) -> ResultSlot* {
    const int mm = find_model(s, model_id), ii = find_image(s, image_id);
    if (mm < 0 || ii < 0 || s.models[size_t(mm)].model != loaded) return nullptr;
    const auto found = s.results.find({mm, ii});
    if (found == s.results.end()) return nullptr;
    if (found->second.edits_key == key) return &found->second;
    ResultSlot* original = found->second.original.get();
    return original && original->edits_key == key ? original : nullptr;
  };
  const char* what = edited                ? "analyse edited "
                     : image.edits.empty() ? "analyse "
                                           : "analyse the original of ";
  worker.submit(
      what + model.info.name + " on " + std::filesystem::path(path).filename().string(),
      [answer_slot, loaded, path, options, edits, version, mine, edited](JobContext& ctx) {
        if (edited && version->load() != mine) return;  // a newer edit has its own job
        try {
          auto a = analyse_image(
              *loaded, path, options, edits, [&ctx] { return ctx.cancelled(); },
              [&ctx](int64_t done, int64_t total) { ctx.progress(done, total); });
          ctx.post([answer_slot, a](GuiState& s) {
            if (ResultSlot* r = answer_slot(s)) {
              r->analysis = a;
              r->status = LoadStatus::Ready;
              r->error.clear();
              // What was answered from the analysis before (another picture's) is asked
              // again; until it comes the view keeps showing it, "updating".
              r->maps_key = r->pending_key = r->rollout_key = r->rollout_pending = "";
              r->explanation_key = r->explanation_pending = "";
            }
          });
        } catch (const std::exception& e) {
          if (ctx.cancelled()) return;  // Cancel marked the slot (gui.cpp)
          const std::string why = e.what();
          ctx.post([answer_slot, why](GuiState& s) {
            if (ResultSlot* r = answer_slot(s)) {
              r->status = LoadStatus::Failed;
              r->error = why;
            }
          });
        }
      });
}

// The maps, rollout and explanation the view asks of the ready slot `r` of (m, i) (its
// `original` when that).
void schedule_views(GuiState& state, ComputeWorker& worker, int m, int i, ResultSlot& r,
                    bool original) {
  const ModelSlot& model = state.models[size_t(m)];
  const MapQuery q = wanted_query(state, m);
  const std::string key = maps_key(state, q);
  if (r.maps_key != key && r.pending_key != key) {
    r.pending_key = key;
    submit_query_job<QueryMaps>(
        worker, "maps " + model.info.name + " " + q.tag(), m, i, original, r.analysis, q,
        r.maps_ticket, &ResultSlot::maps, &ResultSlot::maps_key, &ResultSlot::pending_key, key,
        [facet = state.view.options.text("similarity-facet")](
            const ImageAnalysis& a, const MapQuery& mq) { return query_maps(a, mq, facet); });
  }
  const std::string rkey = rollout_key(state, q);  // the query and the rollout's switches
  if (state.view.kind == MapKind::Rollout && r.rollout_key != rkey && r.rollout_pending != rkey) {
    r.rollout_pending = rkey;
    submit_query_job<QueryRollout>(
        worker, "rollout " + model.info.name + " " + q.tag(), m, i, original, r.analysis, q,
        r.rollout_ticket, &ResultSlot::rollout, &ResultSlot::rollout_key,
        &ResultSlot::rollout_pending, rkey,
        [options = state.view.options](const ImageAnalysis& a, const MapQuery& mq) {
          return query_rollout(a, mq, options);
        });
  }
  if (is_explanation(state.view.kind)) {
    const ExplainRequest request = wanted_explanation(state);
    const std::string ekey = request.key();
    if (r.explanation_key != ekey && r.explanation_pending != ekey) {
      r.explanation_pending = ekey;
      submit_explanation(worker, model, m, i, original, r.analysis, request);
    }
  }
}

// Asks again for what was asked of a slot that the answers in flight will not find.
void forget_pending(ResultSlot& r) {
  r.pending_key = r.rollout_pending = r.explanation_pending = "";
}

// A slot computed with other values of the image analyses' options (the Settings
// section) is of no use: it is computed again, its maps and rollouts with it.
bool stale_options(const ResultSlot& r, const std::string& options_key) {
  return r.status == LoadStatus::Ready && r.analysis->options_key != options_key;
}

void schedule_one(GuiState& state, ComputeWorker& worker, int m, int i) {
  const ModelSlot& model = state.models[size_t(m)];
  const ImageSlot& image = state.images[size_t(i)];
  if (model.status != LoadStatus::Ready || image.status == LoadStatus::Failed) return;
  const std::string options_key = image_options_key(state.view.options);
  const std::string edits = image::edits_text(image.edits);
  auto found = state.results.find({m, i});
  if (found != state.results.end() && stale_options(found->second, options_key)) {
    state.results.erase(found);
    found = state.results.end();
  }
  // The image's edits changed. The slot goes on showing what it has ("updating") while the
  // picture with the new edits is analysed; the unedited analysis is kept as the original
  // (with tickets of its own: its queries are not the slot's), and Undo back to no edits
  // makes it the slot again.
  if (found != state.results.end() && found->second.edits_key != edits) {
    ResultSlot& r = found->second;
    if (r.edits_key.empty() && r.status == LoadStatus::Ready) {
      auto original = std::make_shared<ResultSlot>(r);
      original->original.reset();
      forget_pending(*original);  // what is in flight answers the slot, not this copy
      original->maps_ticket = std::make_shared<std::atomic<uint64_t>>(0);
      original->rollout_ticket = std::make_shared<std::atomic<uint64_t>>(0);
      r.original = std::move(original);
    }
    if (edits.empty() && r.original && r.original->status != LoadStatus::Failed) {
      ResultSlot back = std::move(*r.original);
      forget_pending(back);  // what is in flight answers the original, which this no longer is
      r = std::move(back);
    } else {
      r.edits_key = edits;
      if (r.status == LoadStatus::Failed) {  // nothing to show meanwhile
        r.status = LoadStatus::Loading;
        r.error.clear();
      }
      submit_analysis(state, worker, m, i, image.edits);
    }
  }
  if (found == state.results.end()) {
    ResultSlot fresh;
    fresh.edits_key = edits;
    state.results[{m, i}] = std::move(fresh);
    submit_analysis(state, worker, m, i, image.edits);
    return;
  }
  ResultSlot& r = found->second;
  if (r.status == LoadStatus::Ready) schedule_views(state, worker, m, i, r, false);
  // The original's analysis and maps, while the "edited − original" view asks for them.
  if (edits.empty() || !state.view.edit.difference) return;
  if (r.original && stale_options(*r.original, options_key)) r.original.reset();
  if (!r.original) {
    r.original = std::make_shared<ResultSlot>();
    submit_analysis(state, worker, m, i, {});
    return;
  }
  if (r.original->status == LoadStatus::Ready)
    schedule_views(state, worker, m, i, *r.original, true);
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
