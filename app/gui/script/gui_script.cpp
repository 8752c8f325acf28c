// Tokenising and validating `attnlab gui --script` files; see gui_script.h.
#include "app/gui/script/gui_script.h"

#include "app/gui/views/tab_table.h"
#include "app/gui/workspace/file_kinds.h"
#include "core/io/text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "core/io/file_bytes.h"
#include "core/io/io_error.h"

namespace attnlab::gui {
namespace {}  // namespace

std::string script_usage(const CommandSyntax& spec) {
  std::string out = spec.name;
  for (const ArgSpec& arg : spec.args) {
    out += arg.default_value != nullptr ? std::string(" [") + arg.label + "]"
                                        : std::string(" ") + arg.label;
  }
  return out;
}

std::string script_help() {
  std::string out;
  for (const CommandSyntax& spec : script_syntax()) {
    std::string line = "  " + script_usage(spec);
    line += std::string(line.size() < 34 ? 34 - line.size() : 1, ' ') + spec.help + "\n";
    out += line;
  }
  return out;
}

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// Splits one line into arguments; throws std::invalid_argument (without the location,
// which the caller adds) on a quoting error.
std::vector<std::string> tokenize(const std::string& line) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (true) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size() || line[i] == '#') break;
    std::string token;
    if (line[i] == '"') {
      const size_t open = i++;
      bool closed = false;
      while (i < line.size()) {
        const char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < line.size() && (line[i] == '"' || line[i] == '\\')) {
          token += line[i++];
        } else {
          token += c;
        }
      }
      if (!closed) {
        throw std::invalid_argument("unterminated quote at column " + std::to_string(open + 1));
      }
      if (i < line.size() && !is_blank(line[i])) {
        throw std::invalid_argument("a closing quote must end the argument (column " +
                                    std::to_string(i) + ")");
      }
    } else {
      while (i < line.size() && !is_blank(line[i])) {
        if (line[i] == '"') {
          throw std::invalid_argument("a quote inside an unquoted argument (column " +
                                      std::to_string(i + 1) + "); quote the whole argument");
        }
        token += line[i++];
      }
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

bool parse_integer(const std::string& text, long long& value) {
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '+')) {
    return false;  // strtoll would also skip leading spaces; an argument has none
  }
  errno = 0;
  char* end = nullptr;
  value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && end == text.c_str() + text.size();
}

bool parse_real(const std::string& text, double& value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  // strtod accepts "nan", "inf" and hex floats; a script has no use for the first two.
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}

// Returns "" when `value` fits `arg`, else what is wrong with it.
std::string check_argument(const ArgSpec& arg, const std::string& value) {
  const std::string got = " (got \"" + value + "\")";
  switch (arg.kind) {
    case ArgKind::Path:
    case ArgKind::Name:
    case ArgKind::IndexOrName: {
      if (value.empty()) return std::string(arg.label) + " must not be empty";
      if (!arg.extensions.empty() && std::find(arg.extensions.begin(), arg.extensions.end(),
                                               lower_extension(value)) == arg.extensions.end()) {
        return std::string(arg.label) + " must end in " + text::join(arg.extensions, ", ") + got;
      }
      return {};
    }
    case ArgKind::Count:
    case ArgKind::Positive: {
      const long long min = arg.kind == ArgKind::Count ? 0 : 1;
      long long v = 0;
      if (!parse_integer(value, v) || v < min || v > INT_MAX) {
        return std::string(arg.label) + " must be an integer from " + std::to_string(min) + " to " +
               std::to_string(INT_MAX) + got;
      }
      return {};
    }
    case ArgKind::Fraction: {
      double v = 0.0;
      if (!parse_real(value, v) || v < 0.0 || v > 1.0) {
        return std::string(arg.label) + " must be a number from 0 to 1" + got;
      }
      return {};
    }
    case ArgKind::Seconds: {
      double v = 0.0;
      if (!parse_real(value, v) || v < 0.0) {
        return std::string(arg.label) + " must be a number of seconds, 0 or more" + got;
      }
      return {};
    }
    case ArgKind::Choice:
      if (std::find(arg.choices.begin(), arg.choices.end(), value) == arg.choices.end()) {
        return "expected " + text::join(arg.choices, " or ") + got;
      }
      return {};
    case ArgKind::Tab: {
      const std::vector<std::string> tabs = tab_ids();
      if (std::find(tabs.begin(), tabs.end(), value) == tabs.end()) {
        return "expected " + text::join(tabs, " or ") + got;
      }
      return {};
    }
  }
  return {};
}

ScriptCommand parse_command(std::vector<std::string> tokens, int line_number) {
  const auto& specs = script_syntax();
  const auto spec = std::find_if(specs.begin(), specs.end(),
                                 [&](const CommandSyntax& s) { return tokens[0] == s.name; });
  if (spec == specs.end()) {
    throw std::invalid_argument("unknown command \"" + tokens[0] +
                                "\"; known commands: " + text::join(script_command_names(), ", "));
  }
  ScriptCommand command{tokens[0], {tokens.begin() + 1, tokens.end()}, line_number};
  const size_t max_args = spec->args.size();
  const size_t min_args = static_cast<size_t>(std::count_if(
      spec->args.begin(), spec->args.end(), [](const ArgSpec& a) { return !a.default_value; }));
  if (command.args.size() < min_args || command.args.size() > max_args) {
    const std::string expected = min_args == max_args
                                     ? std::to_string(max_args)
                                     : std::to_string(min_args) + " or " + std::to_string(max_args);
    throw std::invalid_argument(
        command.name + " takes " + expected + (expected == "1" ? " argument" : " arguments") +
        ", got " + std::to_string(command.args.size()) + " (usage: " + script_usage(*spec) + ")");
  }
  for (size_t i = command.args.size(); i < max_args; ++i) {
    command.args.push_back(spec->args[i].default_value);
  }
  for (size_t i = 0; i < max_args; ++i) {
    if (std::string problem = check_argument(spec->args[i], command.args[i]); !problem.empty()) {
      throw std::invalid_argument(command.name + ": " + problem);
    }
  }
  return command;
}

}  // namespace

const std::vector<std::string>& script_command_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const CommandSyntax& spec : script_syntax()) out.push_back(spec.name);
    return out;
  }();
  return names;
}

std::vector<ScriptCommand> parse_script(const std::string& text, const std::string& file_name) {
  std::vector<ScriptCommand> commands;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // written on Windows
    try {
      std::vector<std::string> tokens = tokenize(line);
      if (!tokens.empty()) commands.push_back(parse_command(std::move(tokens), line_number));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(file_name + ":" + std::to_string(line_number) + ": " + e.what());
    }
  }
  return commands;
}

std::vector<ScriptCommand> load_script(const std::string& path) {
  // A script is a few hundred bytes; the limit only stops a wrong path from eating memory.
  constexpr uint64_t kMaxScriptBytes = uint64_t(16) << 20;
  std::vector<uint8_t> bytes;
  try {
    bytes = io::read_file_bytes(path, kMaxScriptBytes);
  } catch (const io::IoError& e) {
    throw std::runtime_error(path + ": cannot read the script file: " + e.message());
  }
  return parse_script(std::string(bytes.begin(), bytes.end()), path);
}

}  // namespace attnlab::gui
