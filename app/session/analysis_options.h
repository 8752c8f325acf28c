// The settings an analysis declares (issue 48, "the analysis is the unit"): each option's
// name, type, default, range and help line live in the analysis's own file
// (AnalysisInfo::options), and everything that offers a setting iterates those
// declarations — `attnlab analyze`'s parser and help (so the man page and the bash
// completion, which read the help), the run's sidecar, the GUI's controls and its settings
// file, and File > Copy settings as command. Adding a setting to an analysis touches no
// other file.
//
// Values are JSON (one per option name; null where an optional option is unset and its
// default is described, e.g. "each image's top-1"). Read them with the typed accessors;
// each checks the option is declared and of that kind.
#pragma once

#include <nlohmann/json.hpp>

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::session {

struct AnalysisOption {
  enum class Kind {
    Real,         // a number, in [min, max] (min_open/max_open: the end excluded)
    Integer,      // a whole number, in [min, max]
    Flag,         // present or not: `--name` takes no value; default false
    Text,         // free text
    Choice,       // one of `choices`
    Cell,         // "y,x": two non-negative integers
    Percentages,  // "20,50,99": numbers each in (0, 100]
  };
  std::string name;  // the command-line option without "--", e.g. "outlier-factor"
  Kind kind = Kind::Real;
  std::string value_name = {};  // shown in the help: "K" in "[--outlier-factor K]"
  // The default value; null: unset, which the analysis reads as `default_text` says.
  nlohmann::json default_value = nullptr;
  std::string default_text = {};  // how the help shows the default ("" = the value itself)
  // (Every member has an initializer: the analyses give the first few positionally.)
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false, max_open = false;
  std::vector<std::string> choices = {};
  std::string help = {};  // one line: what it sets
  // The GUI's generic controls offer it (false: the GUI sets it with a control of its own,
  // e.g. the explained class by clicking a prediction; say which in `gui_note`).
  bool in_gui = true;
  // The GUI's slider range for a Real / Integer option without finite bounds.
  double gui_min = 0, gui_max = 0;

  // "[--outlier-factor K]" as the help shows it.
  std::string usage() const;
  // The default as the help shows it.
  std::string default_shown() const;
};

// Every option declared by the registered analyses, each once, in registry order; an
// option two analyses read (the explained class) is declared by one and named by the
// other's `reads_options`.
std::vector<const AnalysisOption*> analysis_options();
const AnalysisOption* find_analysis_option(const std::string& name);
// The analyses that read an option (the one that declares it first).
std::vector<std::string> analyses_reading(const std::string& option);

// The value of `text` as typed on the command line for this option; throws
// std::invalid_argument with a message naming the option ("--residual must lie in [0, 1]").
nlohmann::json parse_option_value(const AnalysisOption& option, const std::string& text);
// Throws std::invalid_argument unless `value` is a valid value of this option (null is
// valid only for an option whose default is null).
void check_option_value(const AnalysisOption& option, const nlohmann::json& value);
// The value as a command line gives it ("0.5", "3,4", "20,50,99"); for a flag "" (true).
std::string option_value_text(const AnalysisOption& option, const nlohmann::json& value);

// The values of the declared options; an option not set has its declared default.
class OptionValues {
 public:
  // Throws std::invalid_argument for an undeclared option or an invalid value.
  void set(const std::string& name, nlohmann::json value);
  void reset(const std::string& name) { values_.erase(name); }
  bool is_set(const std::string& name) const { return values_.count(name) > 0; }
  // The value, or the declared default; throws std::logic_error for an undeclared name.
  nlohmann::json get(const std::string& name) const;

  double real(const std::string& name) const;
  std::optional<double> optional_real(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  std::optional<int64_t> optional_integer(const std::string& name) const;
  bool flag(const std::string& name) const;
  std::string text(const std::string& name) const;  // Text and Choice
  std::optional<std::pair<int64_t, int64_t>> cell(const std::string& name) const;
  std::vector<double> numbers(const std::string& name) const;  // Percentages

  // Every declared option with its value (null shown as its default's description).
  nlohmann::json to_json() const;
  // The options set to something other than their default, as command-line arguments:
  // " --residual 0.3 --no-renormalize" (values shell-quoted where needed).
  std::string command_line() const;
  // The same for the options named in `only` (none: "").
  std::string command_line(const std::vector<std::string>& only) const;
  // Reads back what to_json-like maps hold ({"residual": 0.3, ...}); skips unknown or
  // invalid entries, naming each in `problems` (a settings file from another version).
  void read(const nlohmann::json& object, std::vector<std::string>* problems = nullptr);
  // The set values only (for a settings file).
  nlohmann::json set_values() const;
  bool operator==(const OptionValues& o) const { return values_ == o.values_; }
  bool operator!=(const OptionValues& o) const { return !(*this == o); }

 private:
  std::map<std::string, nlohmann::json> values_;
};

// The help block of the analysis options for `attnlab analyze --help`: one line per
// option, "[--name V]  analysis: help (default D)", wrapped at 100 columns.
std::string analysis_options_help();

}  // namespace attnlab::session
