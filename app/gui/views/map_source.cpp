// Map selection for the views; see map_source.h.
#include "app/gui/views/map_source.h"

#include <algorithm>
#include <cmath>

#include "app/gui/workspace/workspace.h"
#include "app/session/analysis_session.h"
#include "app/session/query.h"
#include "core/analysis/rollout.h"

namespace attnlab::gui {

session::MapView map_view(const Workspace& ws, const ViewState& view) {
  session::MapView v;
  v.rollout = view.kind == MapKind::Rollout;
  if (view.kind == MapKind::Similarity) v.similarity = view.options.text("similarity-facet");
  v.head = view.head;
  v.fusion = view.fusion == analysis::HeadFusion::Max   ? 1
             : view.fusion == analysis::HeadFusion::Min ? 2
                                                        : 0;
  const ResultSlot* cur = result_of(ws, view.model, view.image);
  v.layer_of = cur && cur->analysis ? int(cur->analysis->layers.size()) : 0;
  v.layer = view.layer < 0   ? -1
            : v.layer_of > 0 ? std::min(view.layer, v.layer_of - 1)
                             : view.layer;
  return v;
}

int mapped_layer(const Workspace& ws, const ViewState& view, int model) {
  const ResultSlot* r = result_of(ws, model, view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return -1;
  // The current model's layer; another model's at the same relative depth (the rule of
  // `attnlab report --layer N/T`, so a copied command reproduces the view).
  return map_view(ws, view).layer_in(int(r->analysis->layers.size()));
}

namespace {

// What the map's grid is, said when it is not obvious: a stage of a hierarchical model
// whose grid differs from the one queries are picked on, and local attention windows.
void describe_grid(const LayerInfo& layer, const LayerInfo& first, ShownMap* out) {
  // A window one cell on both sides outlines nothing; a rectangle keeps its width.
  const int cols = layer.window_w > 0 ? layer.window_w : layer.window;
  out->window = layer.window > 1 || cols > 1 ? layer.window : 0;
  out->window_w = out->window > 0 && cols != layer.window ? cols : 0;
  out->window_shift = out->window > 0 ? layer.window_shift % out->window : 0;
  std::string note;
  if (layer.rows != first.rows || layer.cols != first.cols || layer.stage != first.stage)
    note = "stage " + std::to_string(layer.stage + 1) + ": " + std::to_string(layer.rows) + "x" +
           std::to_string(layer.cols) + " grid (queries are picked on the " +
           std::to_string(first.rows) + "x" + std::to_string(first.cols) + " grid of stage " +
           std::to_string(first.stage + 1) + ")";
  if (out->window > 0)
    note +=
        std::string(note.empty() ? "" : "; ") + std::to_string(out->window) + "x" +
        std::to_string(out->window_w > 0 ? out->window_w : out->window) +
        " local windows outlined" +
        (out->window_shift > 0 ? " (shifted by " + std::to_string(out->window_shift) + ")" : "");
  out->grid_note = note;
}

}  // namespace

namespace {

// Why model `model` has no map on the current image whatever its result ("": it may).
std::string why_no_map(const Workspace& ws, const ViewState& view, int model) {
  if (model >= 0 && model < int(ws.models.size())) {
    const ModelSlot& slot = ws.models[size_t(model)];
    if (slot.status != LoadStatus::Ready)
      return slot.status == LoadStatus::Loading
                 ? "loading the model..."
                 : "this model could not be loaded (see the sidebar)";
  }
  if (!ws.images.empty() && ws.images[size_t(view.image)].status == LoadStatus::Failed)
    return ws.images[size_t(view.image)].error;
  return "";
}

// The map the view asks of result `r` of `model` (the edited picture's or the original's).
ShownMap map_of_result(const Workspace& ws, const ViewState& view, int model, const ResultSlot* r,
                       int head) {
  ShownMap out;
  if (!r || r->status == LoadStatus::Loading) {
    out.why = "analysing...";
    return out;
  }
  if (r->status == LoadStatus::Failed) {
    out.why = r->error;
    return out;
  }
  const auto& layers = r->analysis->layers;
  out.first_rows = layers.front().rows;
  out.first_cols = layers.front().cols;
  const std::string wanted = maps_key(view, wanted_query(ws, view, model));
  if (is_explanation(view.kind)) {  // its own job on the models lane
    const std::string key = wanted_explanation(view).key();
    const auto& e = r->explanation;
    if (!e || r->explanation_key != key) {
      out.why = std::string("computing ") + explain_method_name(explain_method(view.kind)) +
                " (forward and backward pass)...";
      if (!e || e->method != explain_method(view.kind)) return out;
    }
    if (e->map.data.empty()) {
      out.why = e->note;
      return out;
    }
    out.rows = int(e->map.shape[0]);
    out.cols = int(e->map.shape[1]);
    out.values = e->map.data;
    out.label = std::string(explain_method_name(e->method)) + ": " + e->class_name;
    out.grid_note = e->detail;
    out.seconds = e->seconds;
    out.source = e.get();
    out.ok = true;
    return out;
  }
  if (view.kind == MapKind::Rollout) {  // its own job: the maps are not needed
    if (!r->rollout || r->rollout_key != rollout_key(view, wanted_query(ws, view, model))) {
      out.why = "computing the rollout...";
      if (!r->rollout) return out;  // else the previous query's rollout stands in
    }
    if (r->rollout->map.data.empty()) {
      out.why = r->rollout->note;
      return out;
    }
    out.rows = int(r->rollout->map.shape[0]);
    out.cols = int(r->rollout->map.shape[1]);
    out.values = r->rollout->map.data;
    {  // the switches it was computed with, as the report's caption states them
      out.label =
          "rollout (" + session::describe_rollout(session::rollout_options(view.options)) + ")";
    }
    describe_grid(layers.front(), layers.front(), &out);
    out.query = r->rollout->query;
    out.seconds = r->rollout->seconds;
    out.source = r->rollout.get();
    out.ok = true;
    return out;
  }
  if (!r->maps || r->maps_key != wanted) {
    out.why = r->maps && !r->pending_key.empty() ? "updating..." : "computing the maps...";
    if (!r->maps) return out;
  }
  const QueryMaps& q = *r->maps;
  out.query = q.query;
  out.seconds = q.seconds;
  out.source = r->maps.get();
  const int layer = mapped_layer(ws, view, model);
  out.layer = layer;
  if (layer < 0 || size_t(layer) >= q.heads.size() || q.heads[size_t(layer)].data.empty()) {
    out.why = "no map in this layer for " + q.query.tag();
    return out;
  }
  if (view.kind == MapKind::Similarity) {  // the query's similarity to every token
    const analysis::Array& sim = q.similarity[size_t(layer)];
    if (sim.data.empty()) {
      out.why = q.similarity_notes[size_t(layer)];
      return out;
    }
    out.rows = int(sim.shape[0]);
    out.cols = int(sim.shape[1]);
    describe_grid(layers[size_t(layer)], layers.front(), &out);
    out.values = sim.data;
    out.label = "layer " + std::to_string(layer) + ", cosine similarity of the " + q.facet;
    out.ok = true;
    return out;
  }
  const analysis::Array& heads = q.heads[size_t(layer)];
  out.rows = int(heads.shape[1]);
  out.cols = int(heads.shape[2]);
  describe_grid(layers[size_t(layer)], layers.front(), &out);
  const size_t plane = size_t(out.rows) * size_t(out.cols);
  const int h = head < -1 ? view.head : head;
  if (h >= 0 && h < heads.shape[0]) {
    out.values.assign(heads.data.begin() + long(size_t(h) * plane),
                      heads.data.begin() + long(size_t(h + 1) * plane));
    out.label = "layer " + std::to_string(layer) + ", head " + std::to_string(h);
  } else {
    const analysis::Array& fused = q.fused[size_t(layer)];
    const size_t k = view.fusion == analysis::HeadFusion::Mean  ? 0
                     : view.fusion == analysis::HeadFusion::Max ? 1
                                                                : 2;
    if (fused.data.size() < (k + 1) * plane) {
      out.why = "no head fusion for this layer";
      return out;
    }
    out.values.assign(fused.data.begin() + long(k * plane),
                      fused.data.begin() + long((k + 1) * plane));
    out.label = "layer " + std::to_string(layer) + ", " + analysis::head_fusion_name(view.fusion) +
                " of heads";
  }
  out.ok = true;
  return out;
}

}  // namespace

ShownMap shown_map(const Workspace& ws, const ViewState& view, int model, int head) {
  ShownMap out;
  out.why = why_no_map(ws, view, model);
  if (!out.why.empty()) return out;
  return map_of_result(ws, view, model, result_of(ws, model, view.image), head);
}

ShownMap shown_original_map(const Workspace& ws, const ViewState& view, int model) {
  ShownMap out;
  out.why = why_no_map(ws, view, model);
  if (!out.why.empty()) return out;
  const ResultSlot* r = result_of(ws, model, view.image);
  if (!r || !r->original) {
    out.why = "analysing the original picture...";
    return out;
  }
  return map_of_result(ws, view, model, r->original.get(), -2);
}

viz::ValueRange map_value_range(const ViewState& view, const ShownMap& map,
                                const std::vector<const ShownMap*>& shared) {
  if (view.compare && view.shared_scale && !is_explanation(view.kind) && !shared.empty()) {
    std::vector<const std::vector<float>*> all;
    for (const auto* m : shared)
      if (m && m->ok) all.push_back(&m->values);
    // Signed maps (Castling): symmetric about 0.
    return viz::symmetric_if_signed(
        viz::union_range(all, view.norm == viz::MapNormalisation::DivideByMax));
  }
  return viz::map_range(map.values.data(), map.values.size(), view.norm);
}

// The figure's description of the query the shown map answers.
namespace {

viz::MapQuery figure_query(const ShownMap& m) {
  const MapQuery& q = m.query;
  viz::MapQuery fq;
  if (!q.prefix.empty()) {
    fq.label = "the " + q.prefix + " token";
    return fq;
  }
  const int r = q.row < 0 ? m.first_rows / 2 : q.row, c = q.row < 0 ? m.first_cols / 2 : q.col;
  fq.cell = viz::GridCell{r, c};
  fq.ref_rows = m.first_rows;
  fq.ref_cols = m.first_cols;
  fq.label = "query (" + std::to_string(r) + ", " + std::to_string(c) + ")";
  return fq;
}

}  // namespace

// The figure's query of model k's shown map; a rollout's is the query it is of (the cls
// token for the default query where the model has one), as the report states it.
viz::MapQuery shown_figure_query(const Workspace& ws, const ViewState& view, int k,
                                 const ShownMap& m) {
  const ResultSlot* r = result_of(ws, k, view.image);
  if (view.kind != MapKind::Rollout || !r || !r->rollout) return figure_query(m);
  ShownMap answered = m;
  answered.query = r->rollout->answered;
  return figure_query(answered);
}

FrameView compute_frame_view(const Workspace& ws, const ViewState& view) {
  FrameView f;
  for (int m = 0; m < int(ws.models.size()); ++m) f.models.push_back(shown_map(ws, view, m));
  const int m = view.model;
  const int i = view.image;
  if (view.edit.difference && i >= 0 && i < int(ws.images.size()) &&
      !ws.images[size_t(i)].edits.empty())
    f.original = shown_original_map(ws, view, m);
  if (view.heads_grid && view.kind != MapKind::Rollout && !is_explanation(view.kind) && m >= 0 &&
      m < int(f.models.size()) && f.models[size_t(m)].ok) {
    const ResultSlot* r = result_of(ws, m, view.image);
    if (r && r->analysis) {
      const int layer = std::max(0, f.models[size_t(m)].layer);
      const int heads = r->analysis->layers[size_t(layer)].heads;
      for (int h = 0; h < heads; ++h) f.heads.push_back(shown_map(ws, view, m, h));
    }
  }
  return f;
}

}  // namespace attnlab::gui
