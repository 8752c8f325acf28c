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
void rekey_results(GuiState& state, int closed, bool model) {
  std::map<std::pair<int, int>, ResultSlot> moved;
  for (auto& [key, slot] : state.results) {
    const int k = after_close(model ? key.first : key.second, closed);
    if (k < 0) continue;
    moved.emplace(model ? std::make_pair(k, key.second) : std::make_pair(key.first, k),
                  std::move(slot));
  }
  state.results = std::move(moved);
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

void close_model(GuiState& state, int index) {
  if (index < 0 || index >= int(state.models.size())) return;
  state.status.notice = "closed model " + state.models[size_t(index)].info.name;
  state.status.notice_is_error = false;
  state.models.erase(state.models.begin() + index);
  rekey_results(state, index, /*model=*/true);
  const int remaining = int(state.models.size());
  ViewState& v = state.view;
  v.model = shown_after_close(v.model, index, remaining);
  v.difference_a = shown_after_close(v.difference_a, index, remaining);
  v.difference_b = shown_after_close(v.difference_b, index, remaining);
  v.model_edit.model = -1;  // the sidebar's fields are filled again from the model shown
  v.sweep_sizes_model = -1;
  // The series and the sweep belong to one model and one image: gone with either.
  follow_close(state.series, &SeriesState::model, index);
  follow_close(state.sweep, &SizeSweepState::model, index);
}

void close_image(GuiState& state, int index) {
  if (index < 0 || index >= int(state.images.size())) return;
  state.status.notice = "closed image " + state.images[size_t(index)].path;
  state.status.notice_is_error = false;
  state.images.erase(state.images.begin() + index);  // its thumbnail texture with it
  rekey_results(state, index, /*model=*/false);
  state.view.image = shown_after_close(state.view.image, index, int(state.images.size()));
  follow_close(state.series, &SeriesState::image, index);
  follow_close(state.sweep, &SizeSweepState::image, index);
}

void apply_close_requests(GuiState& state) {
  for (const uint64_t id : state.requests.close_models) close_model(state, find_model(state, id));
  for (const uint64_t id : state.requests.close_images) close_image(state, find_image(state, id));
  state.requests.close_models.clear();
  state.requests.close_images.clear();
}

}  // namespace attnlab::gui
