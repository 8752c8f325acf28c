// The View's tab groups (app/gui/views/tab_table.h, tab_rows.h): every tab is in a group, each
// row of titles fits the View of a 1280×800 window with nothing cut, `tab ID` in a script
// selects the tab and so its group, and a click on a group returns to its last tab.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/gui/gui_state.h"
#include "app/gui/script/gui_script.h"
#include "app/gui/script/script_runner.h"
#include "app/gui/views/tab_rows.h"
#include "app/gui/views/tab_table.h"

namespace attnlab::gui {
namespace {

// A title's width in pixels, estimated without ImGui. The font is DejaVu Sans at 15 px
// (app/gui/views/theme.cpp); ImGui scales a TrueType font so that ascent to descent spans those
// pixels (stbtt_ScaleForPixelHeight), 15 / 2384 font units: 12.9 px per em. Its letters then
// advance 3.6 to 8.2 px (lowercase) and 3.8 to 10.1 px (capitals), but m, w, M and W 10.5 to
// 12.7; the titles' mean advance is 6.0 to 8.8 px per character (read from the font's hmtx
// table; the other fonts theme.cpp may pick, Noto Sans and Liberation Sans, are narrower).
// ImGui's own ProggyClean, used when no system font is found, is 7 px per character. So 9 px
// per character (code point) overestimates every title in either font.
constexpr float kCharWidth = 9.0f;
// ImGui 1.86's defaults, which theme.cpp keeps: a tab is its label plus FramePadding.x on
// each side and one pixel (TabItemCalcSize); neighbours are ItemInnerSpacing.x apart
// (TabBarLayout). A tab wider than 20 font sizes is cut whatever the room.
constexpr float kFramePaddingX = 4.0f, kItemInnerSpacingX = 4.0f;
constexpr float kMaxTabWidth = 20.0f * 15.0f;
// The View at 1280 wide: the window less the sidebar (panels.cpp's kSidebarWidth, 330 px),
// the View's WindowPadding.x (8 px) and border (1 px, theme.cpp) on each side.
constexpr float kRowWidth = 1280.0f - 330.0f - 2.0f * 8.0f - 2.0f * 1.0f;

size_t code_points(const std::string& s) {
  return size_t(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

float tab_width(const std::string& title) {
  return float(code_points(title)) * kCharWidth + 2.0f * kFramePaddingX + 1.0f;
}

// The row's width and its titles, for the failure message.
float row_width(const std::vector<std::string>& titles, std::string* listed) {
  float width = 0.0f;
  for (const std::string& t : titles) {
    EXPECT_LE(tab_width(t), kMaxTabWidth) << "'" << t << "' is cut whatever the room";
    width += (width > 0.0f ? kItemInnerSpacingX : 0.0f) + tab_width(t);
    *listed += " [" + t + "]";
  }
  return width;
}

TEST(TabGroups, EveryTabIsInAGroupOfItsOwn) {
  std::set<std::string> groups;
  for (const TabGroup& g : tab_groups()) EXPECT_TRUE(groups.insert(g.id).second) << g.id;
  EXPECT_EQ(tab_groups().back().id, kFallbackGroup);
  std::set<std::string> ids;
  for (const TabEntry& t : gui_tabs()) {
    EXPECT_TRUE(ids.insert(t.id).second) << "two tabs named " << t.id;
    EXPECT_EQ(groups.count(t.group), 1u) << t.id << " is in no group";
    // The fallback ("More") is for analyses a program registers; a shipped one that lands
    // there names no group: set its AnalysisTab::group.
    EXPECT_NE(t.group, kFallbackGroup) << t.id << ": set AnalysisTab::group";
  }
  // The rows hold every tab once, in gui_tabs() order, one row per group that has tabs.
  std::vector<std::string> in_rows;
  std::set<std::string> row_groups;
  for (const TabRow& row : tab_rows()) {
    EXPECT_TRUE(row_groups.insert(row.group.id).second) << row.group.id << " split";
    ASSERT_FALSE(row.tabs.empty()) << row.group.id;
    for (const TabEntry& t : row.tabs) {
      EXPECT_EQ(t.group, row.group.id) << t.id;
      in_rows.push_back(t.id);
    }
  }
  EXPECT_EQ(in_rows, tab_ids());
  EXPECT_EQ(tab_ids().front(), "maps");  // the view the GUI opens on
}

TEST(TabGroups, EveryRowOfTitlesFitsTheViewAt1280) {
  const std::vector<TabRow> rows = tab_rows();
  std::vector<std::string> group_titles;
  for (const TabRow& row : rows) group_titles.push_back(row.group.title);
  std::string listed;
  EXPECT_LE(row_width(group_titles, &listed), kRowWidth) << "the groups:" << listed;
  for (const TabRow& row : rows) {
    std::vector<std::string> titles;
    for (const TabEntry& t : row.tabs) titles.push_back(t.title);
    listed.clear();
    EXPECT_LE(row_width(titles, &listed), kRowWidth)
        << "group " << row.group.id << ":" << listed << " (split it into two groups)";
  }
}

TEST(TabGroups, ScriptTabSelectsTheTabAndItsGroup) {
  const std::vector<TabRow> rows = tab_rows();
  for (const std::string& id : tab_ids()) {
    GuiState state;
    ScriptRunner runner;
    runner.commands = parse_script("tab " + id + "\n", "t.script");
    step_script(runner, state, /*idle=*/true, /*now=*/0.0);
    ASSERT_FALSE(runner.failed) << runner.failure;
    EXPECT_EQ(state.view.tab, id);
    EXPECT_TRUE(state.view.tab_requested) << id;
    const TabRow* row = row_of(rows, state.view.tab);
    ASSERT_NE(row, nullptr) << id;
    EXPECT_EQ(row->group.id, find_tab(id)->group);
  }
  EXPECT_EQ(row_of(rows, "no-such-tab"), nullptr);
}

TEST(TabGroups, AGroupReopensItsLastTab) {
  for (const TabRow& row : tab_rows()) {
    EXPECT_EQ(tab_to_open(row, {}), row.tabs.front().id);
    const std::string last = row.tabs.back().id;
    EXPECT_EQ(tab_to_open(row, {{row.group.id, last}}), last);
    // A remembered tab that is no longer in the group (its analysis gone): the first.
    EXPECT_EQ(tab_to_open(row, {{row.group.id, "gone"}}), row.tabs.front().id);
  }
}

TEST(TabGroups, AnAnalysisNamesItsGroupOrFallsBack) {
  session::AnalysisTab tab;
  tab.id = "new_statistic";
  EXPECT_EQ(analysis_tab_group(tab), kFallbackGroup);  // names none
  tab.group = "tokens";
  EXPECT_EQ(analysis_tab_group(tab), "tokens");
  tab.group = "no-such-group";
  EXPECT_EQ(analysis_tab_group(tab), kFallbackGroup);
  // The shipped analyses name their groups in their own files (no GUI table of them).
  const session::AnalysisInfo* entropy = session::find_analysis("entropy");
  ASSERT_TRUE(entropy && entropy->tab);
  EXPECT_EQ(analysis_tab_group(*entropy->tab), "tokens");
}

}  // namespace
}  // namespace attnlab::gui
