// Reads an analyze output folder back through the sidecar's file list (output_values.h).
#include "tests/cross_world/output_values.h"

#include <ATen/ATen.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/analysis/export.h"
#include "core/io/npy.h"
#include "core/io/torch_bridge.h"

namespace attnlab::testing {
namespace {

void add_table(const std::string& path, std::map<std::string, ValueGroup>& out) {
  const analysis::Table t = analysis::read_table_json(path);
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto& row : t.rows) {
    std::string key;
    for (size_t c = 0; c < t.key_columns; ++c) key += (c ? "/" : "") + row[c].str();
    if (!seen.insert(key).second)
      throw std::runtime_error(path + ": row key '" + key + "' repeats");
    keys.push_back(key);
  }
  for (size_t c = t.key_columns; c < t.columns.size(); ++c) {
    ValueGroup g;
    g.table = t.name;
    g.column = t.columns[c];
    g.rows = keys;
    bool text = false;
    for (const auto& row : t.rows) text = text || !row[c].numeric();
    for (const auto& row : t.rows) {
      if (text) g.texts.push_back(row[c].str());
      else g.values.push_back(row[c].number());  // read_table_json gives NaN for null
    }
    out[g.name()] = std::move(g);
  }
}

void add_array(const std::string& dir, const std::string& file,
               std::map<std::string, ValueGroup>& out) {
  io::RawTensor raw = io::read_npy(dir + "/" + file);
  ValueGroup g;
  g.column = file;
  for (size_t d = 0; d < raw.shape.size(); ++d)
    g.shape += (d ? "x" : "") + std::to_string(raw.shape[d]);
  const at::Tensor t = io::to_torch(std::move(raw)).to(at::kDouble).contiguous().flatten();
  g.values.assign(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
  out[g.name()] = std::move(g);
}

}  // namespace

std::map<std::string, ValueGroup> read_output_values(const std::string& dir,
                                                     const std::string& model_tag) {
  const std::string sidecar_path = dir + "/" + model_tag + "__settings.json";
  std::ifstream in(sidecar_path);
  if (!in) throw std::runtime_error("no sidecar " + sidecar_path);
  const nlohmann::json sidecar = nlohmann::json::parse(in);
  std::map<std::string, ValueGroup> out;
  for (const auto& f : sidecar.at("files")) {
    const std::string file = f.at("file").get<std::string>();
    const std::string kind = f.at("kind").get<std::string>();
    const auto ends = [&](const std::string& tail) {
      return file.size() >= tail.size() && file.compare(file.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (kind == "table" && ends(".json")) add_table(dir + "/" + file, out);
    else if (kind == "array") add_array(dir, file, out);
    // The same tables as CSV (9 digits) and LaTeX, and text files: nothing more to read.
  }
  return out;
}

}  // namespace attnlab::testing
