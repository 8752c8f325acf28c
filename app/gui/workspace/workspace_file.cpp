// A workspace file; see workspace_file.h.
#include "app/gui/workspace/workspace_file.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <stdexcept>

#include "core/io/file_bytes.h"

namespace attnlab::gui {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A path that names a file or folder here, made absolute (a preset's name is left as it
// is): the workspace opens the same files from any working folder.
std::string absolute_if_present(const std::string& p) {
  std::error_code ec;
  if (p.empty() || !fs::exists(p, ec)) return p;
  const fs::path a = fs::absolute(p, ec);
  return ec ? p : a.lexically_normal().string();
}

// A relative path of the file, taken from the file's folder.
std::string from_folder(const std::string& p, const fs::path& folder) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  const fs::path there = folder / p;
  std::error_code ec;
  return fs::exists(there, ec) ? there.lexically_normal().string() : p;
}

// Entry `key` of object `e` as text, "" when absent; json::type_error when not text.
std::string optional_text(const json& e, const char* key) {
  if (!e.is_object()) throw std::runtime_error("an entry is not an object");
  const auto it = e.find(key);
  const json* value = it == e.end() ? nullptr : &*it;
  if (value == nullptr) return "";
  if (!value->is_string()) throw std::runtime_error(std::string("\"") + key + "\" is not text");
  return value->get_ref<const std::string&>();
}

std::vector<image::EditOp> absolute_sources(std::vector<image::EditOp> edits) {
  for (image::EditOp& op : edits) op.source = absolute_if_present(op.source);
  return edits;
}

}  // namespace

std::string workspace_text(const WorkspaceFile& ws) {
  json root;
  root["format"] = kWorkspaceFormat;
  root["models"] = json::array();
  for (const WorkspaceModel& m : ws.models) {
    json e = {{"model", absolute_if_present(m.arg)}};
    if (!m.preset.empty()) e["preset"] = m.preset;
    if (!m.img_size.empty()) e["img_size"] = m.img_size;
    if (!m.class_names_path.empty()) e["class_names"] = absolute_if_present(m.class_names_path);
    if (m.merge >= 0) e["merge"] = m.merge;
    if (!m.prompts.empty()) e["prompts"] = m.prompts;
    root["models"].push_back(e);
  }
  root["images"] = json::array();
  for (const WorkspaceImage& im : ws.images) {
    json e = {{"image", absolute_if_present(im.path)}};
    // The edits as `--edit` takes them: one line a reader can copy into a command.
    if (!im.edits.empty()) e["edits"] = image::edits_text(absolute_sources(im.edits));
    root["images"].push_back(e);
  }
  root["shown"] = {{"model", ws.model}, {"image", ws.image}};
  return root.dump(2) + "\n";
}

WorkspaceFile parse_workspace(const std::string& text, const std::string& path) {
  const auto fail = [&](const std::string& why) {
    return std::runtime_error("workspace " + path + ": " + why);
  };
  const json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) throw fail("not a JSON object");
  if (!root.contains("format") || root["format"] != kWorkspaceFormat)
    throw fail(std::string("not an attnlab workspace (its \"format\" is not \"") +
               kWorkspaceFormat + "\")");
  const fs::path folder = fs::path(path).parent_path();
  WorkspaceFile ws;
  try {
    for (const json& e : root.value("models", json::array())) {
      WorkspaceModel m;
      m.arg = from_folder(e.at("model").get<std::string>(), folder);
      m.preset = optional_text(e, "preset");
      if (e.contains("img_size")) m.img_size = e["img_size"].get<std::vector<int64_t>>();
      if (!m.img_size.empty() && (m.img_size.size() != 2 || m.img_size[0] < 1 || m.img_size[1] < 1))
        throw fail("model " + m.arg + ": img_size is [H, W] with both at least 1");
      m.class_names_path = from_folder(optional_text(e, "class_names"), folder);
      if (e.contains("merge")) {
        if (!e["merge"].is_number_integer() || e["merge"].get<int64_t>() < 0)
          throw fail("model " + m.arg + ": merge is token merging's r, an integer >= 0");
        m.merge = e["merge"].get<int64_t>();
      }
      if (e.contains("prompts")) {
        if (!e["prompts"].is_array()) throw fail("model " + m.arg + ": prompts is a list of texts");
        for (const json& p : e["prompts"]) {
          if (!p.is_string()) throw fail("model " + m.arg + ": prompts is a list of texts");
          m.prompts.push_back(p.get<std::string>());
        }
      }
      ws.models.push_back(std::move(m));
    }
    for (const json& e : root.value("images", json::array())) {
      WorkspaceImage im;
      im.path = from_folder(e.at("image").get<std::string>(), folder);
      try {
        im.edits = image::parse_edits(optional_text(e, "edits"));
      } catch (const std::invalid_argument& x) {
        throw fail("image " + im.path + ": " + x.what());
      }
      for (image::EditOp& op : im.edits) op.source = from_folder(op.source, folder);
      ws.images.push_back(std::move(im));
    }
    if (const auto shown = root.find("shown"); shown != root.end() && shown->is_object()) {
      for (const auto& [key, index] : shown->items()) {
        if (!index.is_number_integer()) continue;
        const int i = int(index.get_ref<const int64_t&>());
        if (key == "model") ws.model = i;
        if (key == "image") ws.image = i;
      }
    }
  } catch (const json::exception& x) {
    throw fail(std::string("an entry of the wrong shape (") + x.what() + ")");
  } catch (const std::runtime_error& x) {
    const std::string what = x.what();
    if (what.rfind("workspace ", 0) == 0) throw;  // already says which file
    throw fail("an entry of the wrong shape (" + what + ")");
  }
  return ws;
}

WorkspaceFile read_workspace(const std::string& path) {
  std::vector<uint8_t> bytes;
  try {
    bytes = io::read_file_bytes(path, uint64_t(16) << 20);  // a workspace is a few kB
  } catch (const std::exception& e) {
    throw std::runtime_error("workspace " + path + ": " + e.what());
  }
  return parse_workspace(std::string(bytes.begin(), bytes.end()), path);
}

void write_workspace(const std::string& path, const WorkspaceFile& ws) {
  try {
    io::write_file_atomic(path, workspace_text(ws));
  } catch (const std::exception& e) {
    throw std::runtime_error("workspace " + path + " not saved: " + e.what());
  }
}

}  // namespace attnlab::gui
