// The View's two rows of tabs: the first picks a group of tabs (tab_table.h), the second one
// of that group's tabs. One row of every tab cut every title at 1280×800 (issue 48); the
// groups keep each row short enough for full titles. The rows only choose: the caller draws
// the chosen tab (ViewState::tab) under them, so a script's `tab ID` shows its tab at once.
#pragma once

#include <map>
#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/views/tab_table.h"

namespace attnlab::gui {

// The tab a click on `row`'s group opens: the one last shown in it (`group_tabs`, group id
// -> tab id), else its first.
std::string tab_to_open(const TabRow& row, const std::map<std::string, std::string>& group_tabs);

// Draws both rows (the second is left out when the group holds one tab of its own title:
// Maps), applies a click or a script's request (ViewState::tab_requested) to view.tab and
// view.group_tabs, and returns the tab to draw.
TabEntry draw_tab_rows(ViewState& view);

}  // namespace attnlab::gui
