// Closing models and images; see close_slots.h.
#include "app/gui/workspace/close_slots.h"

#include <algorithm>
#include <utility>

#include "app/gui/workspace/workspace.h"

namespace attnlab::gui {
namespace {

// An index into a list that lost entry `closed`: the same entry's new index, or -1 for
// the closed one itself.
int after_close(int index, int closed) {
  return index == closed ? -1 : index > closed ? index - 1 : index;
}

// Results keyed by (model, image): those of the closed entry dropped, the others moved.
void rekey_results(Workspace& ws, int closed, bool model) {
  std::map<std::pair<int, int>, ResultSlot> moved;
  for (auto& [key, slot] : ws.results) {
    const int k = after_close(model ? key.first : key.second, closed);
    if (k < 0) continue;
    moved.emplace(model ? std::make_pair(k, key.second) : std::make_pair(key.first, k),
                  std::move(slot));
  }
  ws.results = std::move(moved);
}

// The view's index after the close: the same entry, or for the closed one its neighbour.
int shown_after_close(int shown, int closed, int remaining) {
  const int k = after_close(shown, closed);
  return k >= 0 ? k : std::clamp(closed, 0, std::max(0, remaining - 1));
}

// A series or size sweep whose model or image (`field`) lost entry `closed`: reset when it
// was that entry, else renumbered (its jobs match it by run, not by index).
template <typename State>
void follow_close(State& state, int State::*field, int closed) {
  const int k = after_close(state.*field, closed);
  if (k < 0 && state.*field >= 0)
    state = State{};
  else
    state.*field = k;
}

}  // namespace

void close_model(Workspace& ws, ViewState& v, SeriesState& series, SizeSweepState& sweep,
                 StatusBarState& status, int index) {
  if (index < 0 || index >= int(ws.models.size())) return;
  status.notice = "closed model " + ws.models[size_t(index)].info.name;
  status.notice_is_error = false;
  ws.models.erase(ws.models.begin() + index);
  rekey_results(ws, index, /*model=*/true);
  const int remaining = int(ws.models.size());
  v.model = shown_after_close(v.model, index, remaining);
  v.difference_a = shown_after_close(v.difference_a, index, remaining);
  v.difference_b = shown_after_close(v.difference_b, index, remaining);
  v.model_edit.model = -1;  // the sidebar's fields are filled again from the model shown
  v.sweep_sizes_model = -1;
  // The series and the sweep belong to one model and one image: gone with either.
  follow_close(series, &SeriesState::model, index);
  follow_close(sweep, &SizeSweepState::model, index);
}

void close_image(Workspace& ws, ViewState& view, SeriesState& series, SizeSweepState& sweep,
                 StatusBarState& status, int index) {
  if (index < 0 || index >= int(ws.images.size())) return;
  status.notice = "closed image " + ws.images[size_t(index)].path;
  status.notice_is_error = false;
  ws.images.erase(ws.images.begin() + index);  // its thumbnail texture with it
  rekey_results(ws, index, /*model=*/false);
  view.image = shown_after_close(view.image, index, int(ws.images.size()));
  follow_close(series, &SeriesState::image, index);
  follow_close(sweep, &SizeSweepState::image, index);
}

void apply_close_requests(GuiState& s) {
  for (const uint64_t id : s.requests.close_models)
    close_model(s.workspace, s.view, s.series, s.sweep, s.status, find_model(s.workspace, id));
  for (const uint64_t id : s.requests.close_images)
    close_image(s.workspace, s.view, s.series, s.sweep, s.status, find_image(s.workspace, id));
  s.requests.close_models.clear();
  s.requests.close_images.clear();
}

}  // namespace attnlab::gui
