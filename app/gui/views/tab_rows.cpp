// The View's group and tab rows; see tab_rows.h.
//
// ImGui selects a clicked tab one frame later (and a SetSelected one as well), so the rows
// read ImGui's choice only when no request is on its way: a request keeps view.tab for the
// frame it is made in, and the tab drawn is always view.tab, never ImGui's visible tab.
#include "app/gui/views/tab_rows.h"

#include <imgui.h>

#include <vector>

namespace attnlab::gui {
namespace {

// Scrolling rather than shrinking: a title is never cut. At 1280 wide every row fits
// (tests/gui/tab_groups_test.cpp), so the scroll arrows show only in narrower windows.
constexpr ImGuiTabBarFlags kRowFlags = ImGuiTabBarFlags_FittingPolicyScroll;

bool one_tab_of_its_own_title(const TabRow& row) {
  return row.tabs.size() == 1 && row.tabs.front().title == row.group.title;
}

// One tab item that only selects (the content is drawn under both rows); true when ImGui
// shows it as the selected one.
bool selector_tab(const std::string& title, const std::string& help, bool select) {
  const bool open =
      ImGui::BeginTabItem(title.c_str(), nullptr, select ? ImGuiTabItemFlags_SetSelected : 0);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", help.c_str());
  if (open) ImGui::EndTabItem();
  return open;
}

}  // namespace

std::string tab_to_open(const TabRow& row, const std::map<std::string, std::string>& group_tabs) {
  if (const auto last = group_tabs.find(row.group.id); last != group_tabs.end())
    for (const TabEntry& t : row.tabs)
      if (t.id == last->second) return t.id;
  return row.tabs.front().id;
}

TabEntry draw_tab_rows(ViewState& view) {
  const std::vector<TabRow> rows = tab_rows();
  const TabRow* shown = row_of(rows, view.tab);
  if (!shown) {  // an id no tab has (scripts check theirs): the first tab
    shown = &rows.front();
    view.tab = shown->tabs.front().id;
  }
  bool requested = view.tab_requested;
  // Not drawn this frame (the window skips its items): a request waits for a frame that is.
  if (!ImGui::BeginTabBar("##groups", kRowFlags)) return *find_tab(view.tab);
  for (const TabRow& row : rows) {
    const bool open = selector_tab(row.group.title, row.group.help, requested && &row == shown);
    // Shown by ImGui but not the view's group, with no request on its way: a click on it.
    if (open && &row != shown && !requested) {
      shown = &row;
      view.tab = tab_to_open(row, view.group_tabs);
      requested = true;  // the second row selects that tab
    }
  }
  ImGui::EndTabBar();

  if (!one_tab_of_its_own_title(*shown)) {
    ImGui::PushID(shown->group.id.c_str());  // a tab bar per group: each keeps its own tabs
    if (ImGui::BeginTabBar("##tabs", kRowFlags)) {
      std::string clicked;
      for (const TabEntry& tab : shown->tabs)
        if (selector_tab(tab.title, tab.help, requested && tab.id == view.tab) && !requested)
          clicked = tab.id;
      if (!clicked.empty()) view.tab = clicked;
      ImGui::EndTabBar();
    }
    ImGui::PopID();
  }

  view.tab_requested = false;
  view.group_tabs[shown->group.id] = view.tab;
  for (const TabEntry& tab : shown->tabs)
    if (tab.id == view.tab) return tab;
  return shown->tabs.front();  // not reached: view.tab is in the shown group
}

}  // namespace attnlab::gui
