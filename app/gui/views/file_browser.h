// The file list inside the Open popup: the folder of the path being typed, its
// sub-folders first, then the files of the wanted kind (images or checkpoints), sorted.
// A click on a folder enters it, a click on a file puts it in the path, a double-click
// (or Enter) opens it. Folders that cannot be read say so instead of failing.
#pragma once

#include <string>
#include <vector>

#include "app/gui/workspace/file_kinds.h"

namespace attnlab::gui {

struct FileBrowserState {
  std::string listed_dir;                    // the folder `entries` lists
  FileKind listed_kind = FileKind::Unknown;  // and the kind of file it shows
  struct Entry {
    std::string name;
    bool dir = false;
  };
  std::vector<Entry> entries;
  std::string error;
};

// Draws the list under the path input; returns true when a file was double-clicked
// (path_input then holds it).
bool draw_file_browser(FileBrowserState& browser, std::string& path_input, FileKind kind);

}  // namespace attnlab::gui
