// See analysis_options.h.
#include "app/session/analysis_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "app/session/analysis_registry.h"
#include "core/io/text.h"

namespace attnlab::session {
namespace {

// "[0, 1]", "(0, 100]", "> 0", ">= 0" for the help and the errors.
std::string range_text(const AnalysisOption& o) {
  const bool lo = std::isfinite(o.min), hi = std::isfinite(o.max);
  if (lo && hi)
    return std::string(o.min_open ? "(" : "[") + text::shortest_decimal(o.min) + ", " +
           text::shortest_decimal(o.max) + (o.max_open ? ")" : "]");
  if (lo) return std::string(o.min_open ? "> " : ">= ") + text::shortest_decimal(o.min);
  if (hi) return std::string(o.max_open ? "< " : "<= ") + text::shortest_decimal(o.max);
  return "";
}

bool in_range(const AnalysisOption& o, double v) {
  if (!std::isfinite(v)) return false;
  if (o.min_open ? !(v > o.min) : !(v >= o.min)) return false;
  if (o.max_open ? !(v < o.max) : !(v <= o.max)) return false;
  return true;
}

[[noreturn]] void bad(const AnalysisOption& o, const std::string& why) {
  throw std::invalid_argument("--" + o.name + " " + why);
}

double parse_number(const AnalysisOption& o, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') bad(o, "wants a number, not '" + text + "'");
  return v;
}

int64_t parse_whole(const AnalysisOption& o, const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') bad(o, "wants " + what + ", not '" + text + "'");
  return v;
}

bool shell_safe(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string("-_.,/:+=").find(c) != std::string::npos))
      return false;
  return true;
}

std::string shell_quoted(const std::string& s) {
  if (shell_safe(s)) return s;
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string AnalysisOption::usage() const {
  if (kind == Kind::Flag) return "[--" + name + "]";
  std::string v = value_name;
  if (v.empty()) v = kind == Kind::Choice ? text::join(choices, "|") : "X";
  return "[--" + name + " " + v + "]";
}

std::string AnalysisOption::default_shown() const {
  if (!default_text.empty()) return default_text;
  if (default_value.is_null() || kind == Kind::Flag) return "";
  return option_value_text(*this, default_value);
}

std::vector<const AnalysisOption*> analysis_options() {
  std::vector<const AnalysisOption*> out;
  for (const auto& a : analyses())
    for (const auto& o : a.options) {
      bool seen = false;
      for (const auto* p : out) seen = seen || p->name == o.name;
      if (!seen) out.push_back(&o);
    }
  return out;
}

const AnalysisOption* find_analysis_option(const std::string& name) {
  for (const auto* o : analysis_options())
    if (o->name == name) return o;
  return nullptr;
}

std::vector<std::string> analyses_reading(const std::string& option) {
  std::vector<std::string> out;
  for (const auto& a : analyses()) {
    bool reads = false;
    for (const auto& o : a.options) reads = reads || o.name == option;
    for (const auto& n : a.reads_options) reads = reads || n == option;
    if (reads) out.push_back(a.name);
  }
  return out;
}

nlohmann::json parse_option_value(const AnalysisOption& o, const std::string& text) {
  using Kind = AnalysisOption::Kind;
  nlohmann::json v;
  switch (o.kind) {
    case Kind::Real:
      v = parse_number(o, text);
      break;
    case Kind::Integer:
      v = parse_whole(o, text, "a whole number");
      break;
    case Kind::Flag:
      v = true;
      break;
    case Kind::Text:
    case Kind::Choice:
      v = text;
      break;
    case Kind::Cell: {
      const auto comma = text.find(',');
      if (comma == std::string::npos) bad(o, "wants y,x (a row and a column), not '" + text + "'");
      v = nlohmann::json::array({parse_whole(o, text.substr(0, comma), "y,x (whole numbers)"),
                                 parse_whole(o, text.substr(comma + 1), "y,x (whole numbers)")});
      break;
    }
    case Kind::Percentages: {
      v = nlohmann::json::array();
      std::stringstream list(text);
      for (std::string item; std::getline(list, item, ',');) {
        char* end = nullptr;
        const double p = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0')
          bad(o, "wants numbers such as 20,50,99, not '" + item + "'");
        v.push_back(p);
      }
      break;
    }
  }
  check_option_value(o, v);
  return v;
}

void check_option_value(const AnalysisOption& o, const nlohmann::json& v) {
  using Kind = AnalysisOption::Kind;
  if (v.is_null()) {
    if (!o.default_value.is_null()) bad(o, "needs a value");
    return;
  }
  switch (o.kind) {
    case Kind::Real:
    case Kind::Integer:
      if (!v.is_number() || (o.kind == Kind::Integer && !v.is_number_integer()))
        bad(o, o.kind == Kind::Integer ? "wants a whole number" : "wants a number");
      if (!in_range(o, v.get<double>())) {
        const std::string r = range_text(o);
        bad(o, (r[0] == '[' || r[0] == '(' ? "must lie in " : "must be ") + r + ", not " +
                   option_value_text(o, v));
      }
      return;
    case Kind::Flag:
      if (!v.is_boolean()) bad(o, "is a switch (true or false)");
      return;
    case Kind::Text:
      if (!v.is_string()) bad(o, "wants text");
      return;
    case Kind::Choice:
      if (!v.is_string()) bad(o, "wants one of " + text::join(o.choices, ", "));
      for (const auto& c : o.choices)
        if (c == v.get<std::string>()) return;
      bad(o,
          "wants one of " + text::join(o.choices, ", ") + ", not '" + v.get<std::string>() + "'");
    case Kind::Cell:
      if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() ||
          !v[1].is_number_integer() || v[0].get<int64_t>() < 0 || v[1].get<int64_t>() < 0)
        bad(o, "wants y,x: two non-negative whole numbers");
      return;
    case Kind::Percentages:
      if (!v.is_array() || v.empty()) bad(o, "wants a list of numbers such as 20,50,99");
      for (const auto& p : v)
        if (!p.is_number() || !(p.get<double>() > 0 && p.get<double>() <= 100))
          bad(o, "wants each value in (0, 100], not " + p.dump());
      return;
  }
}

std::string option_value_text(const AnalysisOption& o, const nlohmann::json& v) {
  using Kind = AnalysisOption::Kind;
  if (v.is_null()) return "";
  switch (o.kind) {
    case Kind::Flag:
      return "";
    case Kind::Text:
    case Kind::Choice:
      return v.get<std::string>();
    case Kind::Integer:
      return std::to_string(v.get<int64_t>());
    case Kind::Real:
      return text::shortest_decimal(v.get<double>());
    case Kind::Cell:
      return std::to_string(v[0].get<int64_t>()) + "," + std::to_string(v[1].get<int64_t>());
    case Kind::Percentages: {
      std::vector<std::string> parts;
      for (const auto& p : v) parts.push_back(text::shortest_decimal(p.get<double>()));
      return text::join(parts, ",");
    }
  }
  return "";
}

// ---------------------------------------------------------------------------------------
// OptionValues

namespace {
const AnalysisOption& declared(const std::string& name) {
  const AnalysisOption* o = find_analysis_option(name);
  if (!o) throw std::logic_error("no analysis declares the option '" + name + "'");
  return *o;
}
const AnalysisOption& declared(const std::string& name, AnalysisOption::Kind kind) {
  const AnalysisOption& o = declared(name);
  if (o.kind != kind &&
      !(kind == AnalysisOption::Kind::Text && o.kind == AnalysisOption::Kind::Choice))
    throw std::logic_error("the option '" + name + "' is read as another kind than declared");
  return o;
}
}  // namespace

void OptionValues::set(const std::string& name, nlohmann::json value) {
  const AnalysisOption* o = find_analysis_option(name);
  if (!o) throw std::invalid_argument("--" + name + ": no analysis has this option");
  check_option_value(*o, value);
  if (value == o->default_value)
    values_.erase(name);
  else
    values_[name] = std::move(value);
}

nlohmann::json OptionValues::get(const std::string& name) const {
  const AnalysisOption& o = declared(name);
  const auto it = values_.find(name);
  return it == values_.end() ? o.default_value : it->second;
}

double OptionValues::real(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Real);
  const nlohmann::json v = get(name);
  if (v.is_null()) throw std::logic_error("the option '" + name + "' has no value");
  return v.get<double>();
}
std::optional<double> OptionValues::optional_real(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Real);
  const nlohmann::json v = get(name);
  return v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
}
int64_t OptionValues::integer(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Integer);
  const nlohmann::json v = get(name);
  if (v.is_null()) throw std::logic_error("the option '" + name + "' has no value");
  return v.get<int64_t>();
}
std::optional<int64_t> OptionValues::optional_integer(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Integer);
  const nlohmann::json v = get(name);
  return v.is_null() ? std::nullopt : std::optional<int64_t>(v.get<int64_t>());
}
bool OptionValues::flag(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Flag);
  const nlohmann::json v = get(name);
  return v.is_boolean() && v.get<bool>();
}
std::string OptionValues::text(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Text);
  const nlohmann::json v = get(name);
  return v.is_null() ? std::string() : v.get<std::string>();
}
std::optional<std::pair<int64_t, int64_t>> OptionValues::cell(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Cell);
  const nlohmann::json v = get(name);
  if (v.is_null()) return std::nullopt;
  return std::make_pair(v[0].get<int64_t>(), v[1].get<int64_t>());
}
std::vector<double> OptionValues::numbers(const std::string& name) const {
  declared(name, AnalysisOption::Kind::Percentages);
  return get(name).get<std::vector<double>>();
}

nlohmann::json OptionValues::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto* o : analysis_options()) {
    const nlohmann::json v = get(o->name);
    j[o->name] = v.is_null() ? nlohmann::json(o->default_text) : v;
  }
  return j;
}

std::string OptionValues::command_line() const {
  std::vector<std::string> every;
  for (const auto* o : analysis_options()) every.push_back(o->name);
  return command_line(every);
}

std::string OptionValues::command_line(const std::vector<std::string>& only) const {
  std::string out;
  for (const auto* o : analysis_options()) {
    const auto it = values_.find(o->name);
    if (it == values_.end()) continue;
    if (std::find(only.begin(), only.end(), o->name) == only.end()) continue;
    if (o->kind == AnalysisOption::Kind::Flag) {
      if (it->second.get<bool>()) out += " --" + o->name;
      continue;
    }
    out += " --" + o->name + " " + shell_quoted(option_value_text(*o, it->second));
  }
  return out;
}

void OptionValues::read(const nlohmann::json& object, std::vector<std::string>* problems) {
  if (!object.is_object()) {
    if (problems) problems->push_back("analysis options: not a JSON object");
    return;
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    try {
      set(it.key(), it.value());
    } catch (const std::invalid_argument& e) {
      if (problems) problems->push_back(e.what());
    }
  }
}

nlohmann::json OptionValues::set_values() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : values_) j[k] = v;
  return j;
}

std::string analysis_options_help() {
  std::string out;
  for (const auto* o : analysis_options()) {
    std::string head = "      " + o->usage();
    head += head.size() < 30 ? std::string(30 - head.size(), ' ') : std::string("  ");
    std::string line = text::join(analyses_reading(o->name), "/") + ": " + o->help;
    const std::string d = o->default_shown();
    std::string r = o->kind == AnalysisOption::Kind::Percentages ? "" : range_text(*o);
    if (!r.empty() && r[0] != '>' && r[0] != '<') r = "in " + r;
    if (!r.empty() || !d.empty())
      line +=
          " (" + r + (r.empty() || d.empty() ? "" : "; ") + (d.empty() ? "" : "default " + d) + ")";
    // Wrap the description at 92 columns, continuing under itself.
    const size_t width = 92 - 30;
    std::string row = head;
    size_t used = 0;
    std::stringstream words(line);
    for (std::string w; words >> w;) {
      if (used > 0 && used + 1 + w.size() > width) {
        out += row + "\n";
        row = std::string(30, ' ');
        used = 0;
      }
      row += (used > 0 ? " " : "") + w;
      used += (used > 0 ? 1 : 0) + w.size();
    }
    out += row + "\n";
  }
  return out;
}

}  // namespace attnlab::session
