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
// The commands are one table, script_commands.cpp: each command's name, arguments, help
// line and handler (script_help() prints them). N, INDEX, ROW and COL are non-negative
// integers (frames N at least 1); an INDEX|NAME argument that is all digits is an index,
// anything else a name.
#pragma once

#include <string>
#include <vector>

namespace attnlab::gui {

// What an argument may be; the parser checks each before the script runs.
enum class ArgKind {
  Path,         // any non-empty text
  Name,         // any non-empty text (the GUI checks it names something)
  Count,        // integer >= 0
  Positive,     // integer >= 1
  IndexOrName,  // any non-empty text; all digits means an index
  Fraction,     // real in 0..1
  Seconds,      // real >= 0
  Choice,       // one of `choices`
  Tab,          // the id of a GUI tab (tab_table.h: built in, or an analysis's)
};

struct ArgSpec {
  const char* label;  // as written in the usage, e.g. "N" or "on|off"
  ArgKind kind;
  std::vector<std::string> choices = {};     // Choice: the allowed values
  std::vector<std::string> extensions = {};  // Path: allowed lower-case extensions, if any
  const char* default_value = nullptr;       // non-null: the argument may be omitted
};

// A command's syntax: its name, its arguments and its line of help.
struct CommandSyntax {
  const char* name;
  std::vector<ArgSpec> args;
  const char* help;
};
// Every command's syntax, in table order (script_commands.cpp, with the handlers).
const std::vector<CommandSyntax>& script_syntax();
// "open-image PATH", "wait-idle [SECONDS]"
std::string script_usage(const CommandSyntax& syntax);
// Every command's usage and help, one line each.
std::string script_help();

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
