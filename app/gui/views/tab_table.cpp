// gui_tabs and the tab groups; see tab_table.h.
#include "app/gui/views/tab_table.h"

#include <algorithm>

namespace attnlab::gui {
namespace {

// The groups, in the order of the View's first row. Each row of titles must fit the View at
// 1280×800 (tests/gui/tab_groups_test.cpp measures them): a group that outgrows it is split.
const std::vector<TabGroup> kGroups = {
    {"maps", "Maps", "the map view: attention, rollout and explanations over the picture"},
    {"spectral", "Spectra & rank",
     "frequency content and rank of the attention outputs and maps, channel maps"},
    {"tokens", "Tokens & layers",
     "where attention goes: anchors, distance, entropy, outlier tokens, layer similarity"},
    {"features", "Features",
     "what the tokens' features show: their PCA as colours, the query's patch similarity"},
    {"explain", "Explain & faithfulness",
     "receptive fields, head importance and how faithful each map is (slower: own passes)"},
    {"training", "Training", "statistics over a checkpoint series of one training run"},
    {"model", "Model", "the models' predictions, their cost, and the last checkpoint read"},
    {kFallbackGroup, "More", "analyses that name no group of their own"},
};

size_t group_order(const std::string& id) {
  for (size_t i = 0; i < kGroups.size(); ++i)
    if (kGroups[i].id == id) return i;
  return kGroups.size();
}

}  // namespace

const std::vector<TabGroup>& tab_groups() {
  return kGroups;
}

std::string analysis_tab_group(const session::AnalysisTab& tab) {
  return group_order(tab.group) < kGroups.size() ? tab.group : kFallbackGroup;
}

std::vector<TabEntry> gui_tabs() {
  std::vector<TabEntry> tabs{
      {"maps", "Maps",
       "the query's attention, the rollout or an explanation over the picture the model saw",
       TabKind::Maps, nullptr, "maps"}};
  for (const auto& a : session::analyses())
    if (a.tab)
      tabs.push_back({a.tab->id, a.tab->title, a.summary,
                      a.tab->series ? TabKind::Series : TabKind::Figure, &a,
                      analysis_tab_group(*a.tab)});
  tabs.push_back({"projector", "Projector",
                  "a dataset's embeddings (attnlab embed) projected to 2-D by PCA, t-SNE or "
                  "UMAP, one point per image: hover, click, select",
                  TabKind::Projector, nullptr, "features"});
  tabs.push_back({"predictions", "Top-5",
                  "each model's five most probable classes; a click explains one",
                  TabKind::Predictions, nullptr, "model"});
  tabs.push_back({"cost", "Cost",
                  "MACs of the open models against input size, and a measured bench of "
                  "their attention mechanisms against softmax",
                  TabKind::Cost, nullptr, "model"});
  tabs.push_back({"checkpoint", "Checkpoint", "the summary of the last checkpoint opened",
                  TabKind::Checkpoint, nullptr, "model"});
  // By group; stable, so within a group in the order above.
  std::stable_sort(tabs.begin(), tabs.end(), [](const TabEntry& a, const TabEntry& b) {
    return group_order(a.group) < group_order(b.group);
  });
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

std::vector<TabRow> tab_rows() {
  std::vector<TabRow> rows;
  for (TabEntry& t : gui_tabs()) {  // grouped already: a new group starts a new row
    if (rows.empty() || rows.back().group.id != t.group)
      rows.push_back({kGroups[group_order(t.group)], {}});
    rows.back().tabs.push_back(std::move(t));
  }
  return rows;
}

const TabRow* row_of(const std::vector<TabRow>& rows, const std::string& tab_id) {
  for (const TabRow& row : rows)
    for (const TabEntry& t : row.tabs)
      if (t.id == tab_id) return &row;
  return nullptr;
}

}  // namespace attnlab::gui
