// Loading and saving the GUI's settings file; see settings_store.h.
#include "app/gui/workspace/settings_store.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/io/file_bytes.h"
#include "core/io/io_error.h"
#include "core/io/text.h"

namespace attnlab::gui {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A settings file is a few kilobytes; anything much larger is not ours, and reading it
// whole could cost real memory.
constexpr uint64_t kMaxSettingsBytes = uint64_t(1) << 20;

constexpr int kMinWindow = 320, kMaxWindow = 16384;
constexpr int kMinPanel = 100, kMaxPanel = 4096;

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// Reads the known keys of one settings object, collecting a line per problem so the user
// sees everything wrong with a hand-edited file at once, not one fix per restart.
class FieldReader {
 public:
  FieldReader(const json& object, std::vector<std::string>& problems)
      : object_(object), problems_(problems) {}

  void read_int(const char* key, int lo, int hi, int& out) {
    double v = 0.0;
    if (!number(key, v)) return;
    const double rounded = std::round(v);
    const double clamped = std::clamp(rounded, double(lo), double(hi));
    if (clamped != rounded) {
      problems_.push_back(quoted(key) + " = " + text::format_g(v) + " is outside " +
                          std::to_string(lo) + ".." + std::to_string(hi) + "; using " +
                          text::format_g(clamped));
    }
    out = static_cast<int>(clamped);
  }

  void read_double(const char* key, double lo, double hi, double& out) {
    double v = 0.0;
    if (!number(key, v)) return;
    const double clamped = std::clamp(v, lo, hi);
    if (clamped != v) {
      problems_.push_back(quoted(key) + " = " + text::format_g(v) + " is outside " +
                          text::format_g(lo) + ".." + text::format_g(hi) + "; using " +
                          text::format_g(clamped));
    }
    out = clamped;
  }

  void read_bool(const char* key, bool& out) {
    const json* value = find(key);
    if (value == nullptr) return;
    if (!value->is_boolean()) return wrong_type(key, "true or false");
    out = value->get<bool>();
  }

  // `choices` empty: any non-empty string (the GUI checks names it owns, e.g. colormaps).
  void read_string(const char* key, std::initializer_list<const char*> choices, std::string& out) {
    const json* value = find(key);
    if (value == nullptr) return;
    if (!value->is_string() || value->get_ref<const std::string&>().empty()) {
      return wrong_type(key, "a non-empty string");
    }
    const std::string& s = value->get_ref<const std::string&>();
    if (choices.size() > 0 &&
        std::none_of(choices.begin(), choices.end(), [&](const char* c) { return s == c; })) {
      std::string expected;
      for (const char* c : choices) expected += std::string(expected.empty() ? "" : " or ") + c;
      problems_.push_back(quoted(key) + " = \"" + s + "\" is not " + expected +
                          "; using the default");
      return;
    }
    out = s;
  }

  // A JSON object, kept as its text (its entries are checked by whoever reads them).
  void read_object(const char* key, std::string& out) {
    const json* value = find(key);
    if (value == nullptr) return;
    if (!value->is_object()) return wrong_type(key, "an object");
    out = value->dump();
  }

  // Non-string and empty entries are dropped; `unique` drops later copies of an entry.
  void read_list(const char* key, bool unique, std::vector<std::string>& out) {
    const json* value = find(key);
    if (value == nullptr) return;
    if (!value->is_array()) return wrong_type(key, "a list of paths");
    std::vector<std::string> list;
    size_t dropped = 0;
    for (const json& entry : *value) {
      if (!entry.is_string() || entry.get_ref<const std::string&>().empty()) {
        ++dropped;
        continue;
      }
      const std::string& s = entry.get_ref<const std::string&>();
      if (unique && std::find(list.begin(), list.end(), s) != list.end()) continue;
      list.push_back(s);
    }
    if (dropped > 0) {
      problems_.push_back(quoted(key) + ": dropped " + std::to_string(dropped) +
                          (dropped == 1 ? " entry that is" : " entries that are") +
                          " not a non-empty string");
    }
    if (list.size() > kMaxRecent) {
      problems_.push_back(quoted(key) + " has " + std::to_string(list.size()) +
                          " entries; kept the first " + std::to_string(kMaxRecent));
      list.resize(kMaxRecent);
    }
    out = std::move(list);
  }

 private:
  static std::string quoted(const char* key) { return std::string("\"") + key + "\""; }

  const json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  bool number(const char* key, double& v) {
    const json* value = find(key);
    if (value == nullptr) return false;
    if (!value->is_number()) {
      wrong_type(key, "a number");
      return false;
    }
    v = value->get<double>();
    // Integers beyond double's range parse as infinity; clamp them like any large value.
    return !std::isnan(v);
  }

  void wrong_type(const char* key, const char* expected) {
    problems_.push_back(quoted(key) + " is " + std::string(value_type(*find(key))) + ", not " +
                        expected + "; using the default");
  }

  static const char* value_type(const json& v) {
    if (v.is_string() && v.get_ref<const std::string&>().empty()) return "an empty string";
    return v.type_name();
  }

  const json& object_;
  std::vector<std::string>& problems_;
};

std::string file_problem(const std::string& path, const std::string& problem) {
  return "settings file " + path + ": " + problem;
}

}  // namespace

std::string settings_path() {
  if (std::string path = env_or_empty("ATTNLAB_SETTINGS"); !path.empty()) return path;
  if (std::string xdg = env_or_empty("XDG_CONFIG_HOME"); !xdg.empty() && xdg.front() == '/') {
    return (fs::path(xdg) / "attnlab" / "settings.json").string();
  }
  if (std::string home = env_or_empty("HOME"); !home.empty()) {
    return (fs::path(home) / ".config" / "attnlab" / "settings.json").string();
  }
  return {};
}

GuiSettings load_settings(const std::string& path, std::string* warning) {
  GuiSettings settings;
  if (warning != nullptr) warning->clear();
  auto fail = [&](const std::string& problem) {
    if (warning != nullptr) *warning = file_problem(path, problem + "; using the defaults");
    return GuiSettings{};
  };
  if (path.empty()) return settings;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return settings;  // first run: no file yet
  if (ec) return fail("cannot inspect it: " + ec.message());
  if (!fs::is_regular_file(status)) return fail("not a regular file");

  json root;
  try {
    const std::vector<uint8_t> bytes = io::read_file_bytes(path, kMaxSettingsBytes);
    root = json::parse(bytes.begin(), bytes.end());
  } catch (const json::exception& e) {
    return fail(std::string("not valid JSON (") + e.what() + ")");
  } catch (const io::IoError& e) {
    return fail("cannot read it (" + e.message() + ")");
  } catch (const std::exception& e) {
    return fail(std::string("cannot read it (") + e.what() + ")");
  }
  if (!root.is_object()) return fail(std::string("holds ") + root.type_name() + ", not an object");
  if (const auto it = root.find("format"); it != root.end()) {
    if (!it->is_string() || it->get_ref<const std::string&>() != kSettingsFormat) {
      return fail("\"format\" is " + it->dump() + ", not \"" + kSettingsFormat + "\"");
    }
  }

  std::vector<std::string> problems;
  FieldReader reader(root, problems);
  reader.read_int("window_width", kMinWindow, kMaxWindow, settings.window_width);
  reader.read_int("window_height", kMinWindow, kMaxWindow, settings.window_height);
  reader.read_list("recent_images", /*unique=*/true, settings.recent_images);
  reader.read_list("recent_models", /*unique=*/true, settings.recent_models);
  // The same file may be open twice (e.g. both sides of a comparison), so no dedupe here.
  reader.read_list("last_images", /*unique=*/false, settings.last_images);
  reader.read_list("last_models", /*unique=*/false, settings.last_models);
  reader.read_string("colormap", {}, settings.colormap);
  reader.read_double("alpha", 0.0, 1.0, settings.alpha);
  reader.read_bool("bilinear", settings.bilinear);
  reader.read_string("normalisation", {}, settings.normalisation);
  reader.read_string("layout", {"single", "compare"}, settings.layout);
  reader.read_bool("shared_scale", settings.shared_scale);
  reader.read_object("analysis_options", settings.analysis_options);
  reader.read_int("left_panel_width", kMinPanel, kMaxPanel, settings.left_panel_width);

  if (warning != nullptr && !problems.empty()) {
    std::string joined;
    for (const std::string& p : problems) joined += (joined.empty() ? "" : "; ") + p;
    *warning = file_problem(path, joined);
  }
  return settings;
}

bool save_settings(const std::string& path, const GuiSettings& s, std::string* error) {
  auto fail = [&](const std::string& reason) {
    if (error != nullptr) *error = reason;
    return false;
  };
  if (path.empty()) return fail("no settings path (neither $ATTNLAB_SETTINGS nor $HOME is set)");

  // Ordered so that the file reads top-down like the struct when someone opens it.
  nlohmann::ordered_json root;
  root["format"] = kSettingsFormat;
  root["window_width"] = s.window_width;
  root["window_height"] = s.window_height;
  root["recent_images"] = s.recent_images;
  root["recent_models"] = s.recent_models;
  root["last_images"] = s.last_images;
  root["last_models"] = s.last_models;
  root["colormap"] = s.colormap;
  root["alpha"] = s.alpha;
  root["bilinear"] = s.bilinear;
  root["normalisation"] = s.normalisation;
  root["layout"] = s.layout;
  root["shared_scale"] = s.shared_scale;
  root["analysis_options"] = json::parse(s.analysis_options, nullptr, /*allow_exceptions=*/false);
  if (!root["analysis_options"].is_object()) root["analysis_options"] = json::object();
  root["left_panel_width"] = s.left_panel_width;

  // Linux paths may hold bytes that are not UTF-8, which JSON cannot carry. Replacing them
  // keeps the rest of the settings; such an entry then fails to open with a clear error.
  const std::string text =
      root.dump(2, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace) + "\n";

  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) return fail("cannot create the folder " + parent.string() + ": " + ec.message());
  }
  try {
    io::write_file_atomic(path, text);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return true;
}

void remember_recent(std::vector<std::string>& list, const std::string& path) {
  if (path.empty()) return;
  std::vector<std::string> updated = {path};
  for (std::string& entry : list) {
    if (std::find(updated.begin(), updated.end(), entry) == updated.end()) {
      updated.push_back(std::move(entry));
    }
  }
  if (updated.size() > kMaxRecent) updated.resize(kMaxRecent);
  list = std::move(updated);
}

}  // namespace attnlab::gui
