// The Open popup's file list; see file_browser.h.
#include "app/gui/views/file_browser.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace attnlab::gui {
namespace {

// The folder a typed path refers to: itself when it is one, else its parent.
std::string folder_of(const std::string& typed) {
  const std::string p = normalize_user_path(typed);
  std::error_code ec;
  if (p.empty()) return fs::current_path(ec).string();
  if (fs::is_directory(p, ec)) return p;
  const fs::path parent = fs::path(p).parent_path();
  return parent.empty() ? fs::current_path(ec).string() : parent.string();
}

void list(FileBrowserState& b, const std::string& dir, FileKind kind) {
  b.listed_dir = dir;
  b.listed_kind = kind;
  b.entries.clear();
  b.error.clear();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // hidden files
    std::error_code e2;
    if (it->is_directory(e2)) {
      b.entries.push_back({name, true});
    } else if (const FileKind k = classify_path(name);
               k == kind || (kind == FileKind::Unknown && k != FileKind::Unknown)) {
      b.entries.push_back({name, false});
    }
  }
  if (ec) b.error = "cannot list " + dir + ": " + ec.message();
  std::sort(b.entries.begin(), b.entries.end(),
            [](const auto& x, const auto& y) { return x.dir != y.dir ? x.dir : x.name < y.name; });
}

}  // namespace

bool draw_file_browser(FileBrowserState& b, std::string& path_input, FileKind kind) {
  const std::string dir = folder_of(path_input);
  if (dir != b.listed_dir || kind != b.listed_kind) list(b, dir, kind);
  ImGui::TextDisabled("%s", b.listed_dir.c_str());
  bool open = false;
  ImGui::BeginChild("##files", ImVec2(560.0f, 260.0f), true);
  if (!b.error.empty()) ImGui::TextWrapped("%s", b.error.c_str());
  if (ImGui::Selectable("../", false))
    path_input = fs::path(b.listed_dir).parent_path().string() + "/";
  std::string enter;
  for (const auto& e : b.entries) {
    const std::string label = e.dir ? e.name + "/" : e.name;
    const std::string full = (fs::path(b.listed_dir) / e.name).string();
    if (ImGui::Selectable(label.c_str(), !e.dir && normalize_user_path(path_input) == full,
                          ImGuiSelectableFlags_AllowDoubleClick)) {
      if (e.dir) {
        enter = full + "/";
      } else {
        path_input = full;
        if (ImGui::IsMouseDoubleClicked(0)) open = true;
      }
    }
  }
  if (b.entries.empty() && b.error.empty())
    ImGui::TextDisabled(kind == FileKind::Image   ? "(no images here)"
                        : kind == FileKind::Model ? "(no checkpoints or configs here)"
                                                  : "(no images or models here)");
  ImGui::EndChild();
  if (!enter.empty()) path_input = enter;  // after the loop: the list is not changed under it
  return open;
}

}  // namespace attnlab::gui
