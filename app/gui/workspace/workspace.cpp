// Workspace bookkeeping; see workspace.h.
#include "app/gui/workspace/workspace.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <system_error>
#include <tuple>

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

}  // namespace attnlab::gui
