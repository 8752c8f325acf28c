// Workspace bookkeeping; see workspace.h.
#include "app/gui/workspace/workspace.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <system_error>
#include <tuple>

#include "viz/figures/map_panels.h"

namespace attnlab::gui {

std::string unique_model_name(const Workspace& ws, int index, const std::string& base) {
  const auto taken = [&](const std::string& name) {
    for (size_t m = 0; m < ws.models.size(); ++m)
      if (int(m) != index && ws.models[m].info.name == name) return true;
    return false;
  };
  std::string name = base;
  for (int n = 2; taken(name); ++n) name = base + " (" + std::to_string(n) + ")";
  return name;
}

int add_image(Workspace& ws, LoadWorker& loader, const std::string& path, bool* already_open) {
  // The same file again: show the one already open (an image has no per-entry options, so
  // a second entry would only be a copy). Paths are compared as the file system resolves
  // them ("./a.png", "a.png" and a link to it are one file).
  std::error_code ec;
  const std::filesystem::path wanted = std::filesystem::weakly_canonical(path, ec);
  for (size_t i = 0; i < ws.images.size() && !ec; ++i) {
    std::error_code other;
    if (std::filesystem::weakly_canonical(ws.images[i].path, other) == wanted && !other) {
      if (already_open) *already_open = true;
      return int(i);
    }
  }
  if (already_open) *already_open = false;
  ImageSlot slot;
  slot.id = ws.next_slot_id++;
  slot.path = path;
  slot.job = loader.submit(JobKind::Image, path);
  ws.images.push_back(std::move(slot));
  return int(ws.images.size()) - 1;
}

int find_model(const Workspace& ws, uint64_t id) {
  for (size_t m = 0; m < ws.models.size(); ++m)
    if (ws.models[m].id == id) return int(m);
  return -1;
}

int find_image(const Workspace& ws, uint64_t id) {
  for (size_t i = 0; i < ws.images.size(); ++i)
    if (ws.images[i].id == id) return int(i);
  return -1;
}

const ResultSlot* result_of(const Workspace& ws, int model, int image) {
  const auto it = ws.results.find({model, image});
  return it == ws.results.end() ? nullptr : &it->second;
}

bool image_has_failed_analysis(const Workspace& ws, const ViewState& view) {
  for (const auto& [key, r] : ws.results)
    if (key.second == view.image && r.status == LoadStatus::Failed) return true;
  return false;
}

namespace {

// The first layer's grid of `model` on the current image, {0, 0} before its analysis.
std::pair<int, int> first_grid(const Workspace& ws, const ViewState& view, int model) {
  const ResultSlot* r = result_of(ws, model, view.image);
  if (!r || !r->analysis || r->analysis->layers.empty()) return {0, 0};
  return {r->analysis->layers.front().rows, r->analysis->layers.front().cols};
}

}  // namespace

void set_query_cell(const Workspace& ws, ViewState& view, int row, int col) {
  const auto [rows, cols] = first_grid(ws, view, view.model);
  MapQuery& q = view.query;
  q = MapQuery{};
  q.row = row;
  q.col = col;
  q.grid_rows = rows;
  q.grid_cols = cols;
  if (view.kind == MapKind::Cls) view.kind = MapKind::Query;
}

std::string maps_key(const ViewState& view, const MapQuery& query) {
  return query.tag() + "|" + view.options.text("similarity-facet");
}

std::string rollout_key(const ViewState& view, const MapQuery& query) {
  return query.tag() + "|" + rollout_tag(view.options);
}

MapQuery wanted_query(const Workspace& ws, const ViewState& view, int model) {
  MapQuery q = view.query;
  // A cell picked on another model's grid (compare, a model switch): the same place of
  // the image on this model's grid, by area.
  const auto [rows, cols] = first_grid(ws, view, model);
  if (q.prefix.empty() && q.row >= 0 && q.grid_rows > 0 && rows > 0 &&
      (q.grid_rows != rows || q.grid_cols != cols)) {
    const viz::GridCell c =
        viz::map_cell(viz::GridCell{q.row, q.col}, q.grid_rows, q.grid_cols, rows, cols);
    q.row = c.row;
    q.col = c.col;
    q.grid_rows = rows;
    q.grid_cols = cols;
  }
  if (view.kind == MapKind::Cls) {
    q = MapQuery{};
    q.prefix = "cls";
    const ResultSlot* r = result_of(ws, model, view.image);
    if (r && r->analysis && !r->analysis->layers.empty()) {
      const auto& prefix = r->analysis->layers.front().prefix;
      if (std::find(prefix.begin(), prefix.end(), "cls") == prefix.end()) q = view.query;
    }
  }
  return q;
}

ExplainRequest wanted_explanation(const ViewState& view) {
  ExplainRequest e;
  e.method = explain_method(view.kind);
  e.cls = view.explain_class;
  if (e.method == ExplainMethod::GradCam) {
    e.target = view.gradcam_target;
    e.signed_map = view.gradcam_signed;
  }
  return e;
}

}  // namespace attnlab::gui
