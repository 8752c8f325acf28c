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
ResultSlot* slot_holding(Workspace& ws, const QueryTarget& t) {
  const auto found = ws.results.find({t.model, t.image});
  if (found == ws.results.end()) return nullptr;
  ResultSlot* slot = t.original ? found->second.original.get() : &found->second;
  return slot && slot->analysis == t.analysis ? slot : nullptr;
}

// Answers `q` for the slot holding the analysis on the worker with `compute` and posts
// the answer under `key`. Skipped when a newer request took the ticket before the job
// started.
template <typename Value, typename Compute>
void submit_query_job(ComputeWorker& worker, const std::string& label, const QueryTarget& target,
                      const MapQuery& q, const std::shared_ptr<std::atomic<uint64_t>>& ticket,
                      const std::string& key, Compute compute) {
  const uint64_t mine = ++*ticket;
  worker.submit(
      label,
      [=](JobContext& ctx) {
        if (ticket->load() != mine) return;  // superseded: its slot already waits for another
        QueryAnswer<Value> answer{target, key, nullptr, ""};
        try {
          answer.value = compute(*target.analysis, q);
        } catch (const std::exception& e) {
          answer.error = e.what();
        }
        ctx.post(std::move(answer));
      },
      Lane::Traces);  // reads recorded traces only: runs beside a long forward pass
}

// Stores a query's answer in the slot still holding its analysis (answers of an analysis
// no longer shown, as its model was loaded again or the image edited, are dropped),
// clearing the slot's pending key when it is still this query.
template <typename Value>
void store_answer(Workspace& ws, StatusBarState& status, const QueryAnswer<Value>& a,
                  std::shared_ptr<const Value> ResultSlot::*value,
                  std::string ResultSlot::*done_key, std::string ResultSlot::*pending) {
  ResultSlot* slot = slot_holding(ws, a.target);
  if (!slot) return;
  slot->*value = a.value;
  slot->*done_key = a.key;
  if (slot->*pending == a.key) (slot->*pending).clear();
  if (!a.error.empty()) {
    status.notice = a.error;
    status.notice_is_error = true;
  }
}

// Explains a class of (model m, image i) on the models lane: it needs the model for its
// own forward and backward pass, so it queues behind loads and analyses, never beside them.
void submit_explanation(ComputeWorker& worker, const ModelSlot& model, const QueryTarget& target,
                        const ExplainRequest& request) {
  auto loaded = model.model;
  const std::string key = request.key();
  worker.submit(
      std::string(explain_method_name(request.method)) + " " + model.info.name + " " + key,
      [=](JobContext& ctx) {
        ctx.post(ExplanationAnswered{target, key, explain_image(*loaded, *target.analysis, request),
                                     ""});
      });
}

// The slot an analysis answers, found by id (closing a model or image moves the ones after
// it) and by the edits it is for; null when either was closed, the model was loaded again
// or the image edited meanwhile.
ResultSlot* analysed_slot(Workspace& ws, const AnalysisTarget& t) {
  const int m = find_model(ws, t.model_id), i = find_image(ws, t.image_id);
  if (m < 0 || i < 0 || ws.models[size_t(m)].model != t.model) return nullptr;
  const auto found = ws.results.find({m, i});
  if (found == ws.results.end()) return nullptr;
  if (found->second.edits_key == t.edits_key) return &found->second;
  ResultSlot* original = found->second.original.get();
  return original && original->edits_key == t.edits_key ? original : nullptr;
}

// Analyses (model m, image i) with `edits` (none: the original picture) on the worker;
// the answer goes to the slot of (m, i) that is still for these edits.
void submit_analysis(const Workspace& ws, const ViewState& view, ComputeWorker& worker, int m,
                     int i, const std::vector<image::EditOp>& edits) {
  const ModelSlot& model = ws.models[size_t(m)];
  const ImageSlot& image = ws.images[size_t(i)];
  const AnalysisTarget target{model.id, image.id, model.model, image::edits_text(edits)};
  const std::string path = image.path;
  const session::OptionValues options = view.options;
  // An edited picture's analysis is skipped when the edits changed again before it started.
  const auto version = image.edits_version;
  const uint64_t mine = version->load();
  const bool edited = !edits.empty();
  const char* what = edited                ? "analyse edited "
                     : image.edits.empty() ? "analyse "
                                           : "analyse the original of ";
  worker.submit(what + model.info.name + " on " + std::filesystem::path(path).filename().string(),
                [target, path, options, edits, version, mine, edited](JobContext& ctx) {
                  if (edited && version->load() != mine) return;  // a newer edit has its own job
                  try {
                    auto a = analyse_image(
                        *target.model, path, options, edits, [&ctx] { return ctx.cancelled(); },
                        [&ctx](int64_t done, int64_t total) { ctx.progress(done, total); });
                    ctx.post(AnalysisDone{target, a});
                  } catch (const std::exception& e) {
                    if (ctx.cancelled()) return;  // Cancel marked the slot (gui.cpp)
                    ctx.post(AnalysisFailed{target, e.what()});
                  }
                });
}

// The maps, rollout and explanation the view asks of the ready slot `r` of (m, i) (its
// `original` when that).
void schedule_views(const Workspace& ws, const ViewState& view, ComputeWorker& worker, int m, int i,
                    ResultSlot& r, bool original) {
  const ModelSlot& model = ws.models[size_t(m)];
  const QueryTarget target{m, i, original, r.analysis};
  const MapQuery q = wanted_query(ws, view, m);
  const std::string key = maps_key(view, q);
  if (r.maps_key != key && r.pending_key != key) {
    r.pending_key = key;
    submit_query_job<QueryMaps>(
        worker, "maps " + model.info.name + " " + q.tag(), target, q, r.maps_ticket, key,
        [facet = view.options.text("similarity-facet")](
            const ImageAnalysis& a, const MapQuery& mq) { return query_maps(a, mq, facet); });
  }
  const std::string rkey = rollout_key(view, q);  // the query and the rollout's switches
  if (view.kind == MapKind::Rollout && r.rollout_key != rkey && r.rollout_pending != rkey) {
    r.rollout_pending = rkey;
    submit_query_job<QueryRollout>(
        worker, "rollout " + model.info.name + " " + q.tag(), target, q, r.rollout_ticket, rkey,
        [options = view.options](const ImageAnalysis& a, const MapQuery& mq) {
          return query_rollout(a, mq, options);
        });
  }
  if (is_explanation(view.kind)) {
    const ExplainRequest request = wanted_explanation(view);
    const std::string ekey = request.key();
    if (r.explanation_key != ekey && r.explanation_pending != ekey) {
      r.explanation_pending = ekey;
      submit_explanation(worker, model, target, request);
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

void schedule_one(Workspace& ws, const ViewState& view, ComputeWorker& worker, int m, int i) {
  const ModelSlot& model = ws.models[size_t(m)];
  const ImageSlot& image = ws.images[size_t(i)];
  if (model.status != LoadStatus::Ready || image.status == LoadStatus::Failed) return;
  const std::string options_key = image_options_key(view.options);
  const std::string edits = image::edits_text(image.edits);
  auto found = ws.results.find({m, i});
  if (found != ws.results.end() && stale_options(found->second, options_key)) {
    ws.results.erase(found);
    found = ws.results.end();
  }
  // The image's edits changed. The slot goes on showing what it has ("updating") while the
  // picture with the new edits is analysed; the unedited analysis is kept as the original
  // (with tickets of its own: its queries are not the slot's), and Undo back to no edits
  // makes it the slot again.
  if (found != ws.results.end() && found->second.edits_key != edits) {
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
      submit_analysis(ws, view, worker, m, i, image.edits);
    }
  }
  if (found == ws.results.end()) {
    ResultSlot fresh;
    fresh.edits_key = edits;
    ws.results[{m, i}] = std::move(fresh);
    submit_analysis(ws, view, worker, m, i, image.edits);
    return;
  }
  ResultSlot& r = found->second;
  if (r.status == LoadStatus::Ready) schedule_views(ws, view, worker, m, i, r, false);
  // The original's analysis and maps, while the "edited − original" view asks for them.
  if (edits.empty() || !view.edit.difference) return;
  if (r.original && stale_options(*r.original, options_key)) r.original.reset();
  if (!r.original) {
    r.original = std::make_shared<ResultSlot>();
    submit_analysis(ws, view, worker, m, i, {});
    return;
  }
  if (r.original->status == LoadStatus::Ready)
    schedule_views(ws, view, worker, m, i, *r.original, true);
}

}  // namespace

void schedule_compute(Workspace& ws, const ViewState& view, ComputeWorker& worker) {
  if (ws.images.empty() || ws.models.empty()) return;
  const int i = std::clamp(view.image, 0, int(ws.images.size()) - 1);
  // The current model first, then the others on the same image (compare, model switch).
  schedule_one(ws, view, worker, std::clamp(view.model, 0, int(ws.models.size()) - 1), i);
  for (int m = 0; m < int(ws.models.size()); ++m) schedule_one(ws, view, worker, m, i);
}

void apply_result(Workspace& ws, const AnalysisDone& done) {
  if (ResultSlot* r = analysed_slot(ws, done.target)) {
    r->analysis = done.analysis;
    r->status = LoadStatus::Ready;
    r->error.clear();
    // What was answered from the analysis before (another picture's) is asked again; until
    // it comes the view keeps showing it, "updating".
    r->maps_key = r->pending_key = r->rollout_key = r->rollout_pending = "";
    r->explanation_key = r->explanation_pending = "";
  }
}

void apply_result(Workspace& ws, const AnalysisFailed& failed) {
  if (ResultSlot* r = analysed_slot(ws, failed.target)) {
    r->status = LoadStatus::Failed;
    r->error = failed.error;
  }
}

void apply_result(Workspace& ws, StatusBarState& status, const MapsAnswered& a) {
  store_answer(ws, status, a, &ResultSlot::maps, &ResultSlot::maps_key, &ResultSlot::pending_key);
}

void apply_result(Workspace& ws, StatusBarState& status, const RolloutAnswered& a) {
  store_answer(ws, status, a, &ResultSlot::rollout, &ResultSlot::rollout_key,
               &ResultSlot::rollout_pending);
}

void apply_result(Workspace& ws, StatusBarState& status, const ExplanationAnswered& a) {
  store_answer(ws, status, a, &ResultSlot::explanation, &ResultSlot::explanation_key,
               &ResultSlot::explanation_pending);
}

}  // namespace attnlab::gui
