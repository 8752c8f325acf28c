// The GUI's tabs, one table: the built-in views (Maps, Top-5, Cost, Checkpoint) and one tab
// per registered analysis that declares one (app/session/analysis_registry.h). Tabs come in
// groups (the View's first row of tabs picks a group, the second one of its tabs: one row of
// every tab cut every title at 1280×800); an analysis names its group in AnalysisTab::group.
// The tab rows, the script command `tab` and the exports all read this table, so an analysis
// with a tab appears everywhere with no GUI change. No GL, no ImGui.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"

namespace attnlab::gui {

enum class TabKind {
  Maps,         // the map view (built in)
  Predictions,  // Top-5 (built in)
  Checkpoint,   // the checkpoint summary (built in)
  Figure,       // an analysis's figure of the current image (AnalysisTab::figure)
  Series,       // an analysis's figure over a checkpoint series (the series view)
  Cost,         // the open models' MACs and their mechanisms' measured cost (built in)
  Projector,    // a dataset's embeddings projected to 2-D (built in; projector_view.h)
};

struct TabEntry {
  std::string id;     // as the script command `tab` and the settings name it
  std::string title;  // on the tab
  std::string help;   // its tooltip: what it shows (an analysis tab: the analysis's summary)
  TabKind kind = TabKind::Figure;
  const session::AnalysisInfo* analysis = nullptr;  // Figure and Series tabs
  std::string group;  // a TabGroup's id, always one of tab_groups() (kFallbackGroup at worst)
};

// A group of tabs: a tab of the View's first row.
struct TabGroup {
  std::string id;     // what AnalysisTab::group names
  std::string title;  // on the tab
  std::string help;   // its tooltip
};

// The group of the tabs whose analysis names no group or one not in tab_groups(), so
// that such a tab still shows (last, as "More").
inline constexpr const char* kFallbackGroup = "more";

// Every group, in the order of the first row (the fallback last).
const std::vector<TabGroup>& tab_groups();
// The group an analysis's tab is shown in: its own (AnalysisTab::group, set in the
// analysis's file) when tab_groups() has it, else kFallbackGroup.
std::string analysis_tab_group(const session::AnalysisTab& tab);

// Every tab in tab-bar order: by group (tab_groups() order), then as registered (Maps first,
// then the analyses' tabs in registry order, then Top-5, Cost, Checkpoint). Built anew from
// the registry on each call.
std::vector<TabEntry> gui_tabs();
// Their ids, in the same order.
std::vector<std::string> tab_ids();
// The tab with this id; nullptr when there is none.
std::optional<TabEntry> find_tab(const std::string& id);

// A group and its tabs, in tab-bar order: what the two rows show.
struct TabRow {
  TabGroup group;
  std::vector<TabEntry> tabs;  // never empty
};
// The groups that hold at least one tab, with their tabs.
std::vector<TabRow> tab_rows();
// The row holding the tab with this id; nullptr when none does.
const TabRow* row_of(const std::vector<TabRow>& rows, const std::string& tab_id);

}  // namespace attnlab::gui
