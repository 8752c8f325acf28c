// The command language of `attnlab gui --script FILE`: a few lines that open files, pick
// views, click tokens, export and take screenshots, so tests can drive the real GUI under
// Xvfb. This file only parses and validates; the GUI runs the commands. The whole script
// is checked before the window opens, so a typo on line 40 fails at once with its line
// number instead of after a minute of loading.
//
// Syntax: one command per line, arguments separated by spaces or tabs. A double-quoted
// argument may contain spaces (inside quotes, \" is a quote and \\ a backslash). `#` at
// the start of an argument (outside quotes) starts a comment that runs to the end of the
// line, so paths such as run#3/img.png still work. Blank lines are ignored.
//
// Commands:
//   open-image PATH              open-model PATH
//   open-dialog image|model (File > Open: the desktop's chooser, or the in-app list)
//   select-image INDEX|NAME      select-model INDEX|NAME
//   layer N   head N             heads-grid on|off
//   fusion mean|max|min          map query|cls|rollout
//   click-token ROW COL          click-prefix NAME
//   tab NAME (a tab of tab_table.h: maps, an analysis tab such as rank, predictions, ...)
//   layout single|compare        shared-scale on|off        difference on|off
//   colormap NAME                alpha X (0..1)             upsample nearest|bilinear
//   export-panel PATH (.png, .svg or .pdf: the extension picks the format)
//   export-stats DIR             screenshot PATH (.png)
//   load-series (analyse the current model's training series)   checkpoint INDEX
//   load-as PRESET (load the current, failed model again as this preset)
//   wait-idle [SECONDS] (default 60)                         frames N (draw N frames)
//   expect-error (the last open produced an error message)   expect-no-error
//   expect-busy (a job is running now: what follows happens while it runs)
//   expect-answered (the current model's maps answer the current query)
//   quit
// N, INDEX, ROW and COL are non-negative integers (frames N at least 1); an INDEX|NAME
// argument that is all digits is an index, anything else a name.
#pragma once

#include <string>
#include <vector>

namespace attnlab::gui {

struct ScriptCommand {
  std::string name;               // e.g. "open-image"
  std::vector<std::string> args;  // validated; an omitted optional argument is filled in
  int line = 0;                   // 1-based line in the script, for the GUI's own errors
};

// Every command name, in the order of the list above (used in error messages and help).
const std::vector<std::string>& script_command_names();

// Parses and validates a whole script. Throws std::invalid_argument with
// "FILE:LINE: message" at the first problem: an unknown command (the message lists the
// known ones), a wrong number of arguments, an argument of the wrong type or not among
// the allowed values, or an unterminated quote.
std::vector<ScriptCommand> parse_script(const std::string& text, const std::string& file_name);

// Reads the file and parses it. Throws std::runtime_error naming the file when it cannot
// be read, and std::invalid_argument from parse_script.
std::vector<ScriptCommand> load_script(const std::string& path);

}  // namespace attnlab::gui
