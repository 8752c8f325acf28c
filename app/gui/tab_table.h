// The GUI's tabs, one table: the built-in views (Maps, Top-5, Checkpoint) and one tab per
// registered analysis that declares one (app/session/analysis_registry.h), in registry
// order. The tab bar, the script command `tab` and the exports all read this table, so an
// analysis with a tab appears everywhere with no GUI change. No GL, no ImGui.
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
};

struct TabEntry {
  std::string id;     // as the script command `tab` and the settings name it
  std::string title;  // on the tab
  std::string help;   // its tooltip: what it shows (an analysis tab: the analysis's summary)
  TabKind kind = TabKind::Figure;
  const session::AnalysisInfo* analysis = nullptr;  // Figure and Series tabs
};

// Every tab in tab-bar order (built anew from the registry on each call).
std::vector<TabEntry> gui_tabs();
// Their ids, in the same order.
std::vector<std::string> tab_ids();
// The tab with this id; nullptr when there is none.
std::optional<TabEntry> find_tab(const std::string& id);

}  // namespace attnlab::gui
