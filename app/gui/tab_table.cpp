// gui_tabs; see tab_table.h.
#include "app/gui/tab_table.h"

namespace attnlab::gui {

std::vector<TabEntry> gui_tabs() {
  std::vector<TabEntry> tabs{
      {"maps", "Maps",
       "the query's attention, the rollout or an explanation over the picture the model saw",
       TabKind::Maps, nullptr}};
  for (const auto& a : session::analyses())
    if (a.tab)
      tabs.push_back({a.tab->id, a.tab->title, a.summary,
                      a.tab->series ? TabKind::Series : TabKind::Figure, &a});
  tabs.push_back({"predictions", "Top-5",
                  "each model's five most probable classes; a click explains one",
                  TabKind::Predictions, nullptr});
  tabs.push_back({"cost", "Cost",
                  "MACs of the open models against input size, and a measured bench of "
                  "their attention mechanisms against softmax",
                  TabKind::Cost, nullptr});
  tabs.push_back({"checkpoint", "Checkpoint", "the summary of the last checkpoint opened",
                  TabKind::Checkpoint, nullptr});
  return tabs;
}

std::vector<std::string> tab_ids() {
  std::vector<std::string> ids;
  for (const auto& t : gui_tabs()) ids.push_back(t.id);
  return ids;
}

std::optional<TabEntry> find_tab(const std::string& id) {
  for (auto& t : gui_tabs())
    if (t.id == id) return t;
  return std::nullopt;
}

}  // namespace attnlab::gui
