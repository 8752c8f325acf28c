// checkpoint_step; see checkpoint_series.h.
#include "app/session/checkpoint_series.h"

#include <algorithm>
#include <filesystem>

#include "core/io/tensor_file.h"
#include "models/model_config.h"

namespace attnlab::session {

void SeriesTables::add(int64_t index, const std::string& file, int64_t step,
                       const std::vector<analysis::Table>& tables,
                       const std::vector<std::string>& only) {
  for (const auto& t : tables) {
    if (!only.empty() && std::find(only.begin(), only.end(), t.name) == only.end()) continue;
    auto it = series_.find(t.name);
    if (it == series_.end()) {
      order_.push_back(t.name);
      analysis::Table s;
      s.name = t.name + suffix_;
      s.caption = t.caption + "; one block of rows per " + block_ + ", in the order given";
      s.columns = lead_;
      s.columns.insert(s.columns.end(), t.columns.begin(), t.columns.end());
      s.key_columns = t.key_columns + 3;
      it = series_.emplace(t.name, std::move(s)).first;
    }
    for (const auto& row : t.rows) {
      std::vector<analysis::Cell> r{index, file, step};
      r.insert(r.end(), row.begin(), row.end());
      it->second.add_row(std::move(r));
    }
  }
}

std::vector<analysis::Table> SeriesTables::tables() const {
  std::vector<analysis::Table> out;
  for (const auto& name : order_) out.push_back(series_.at(name));
  return out;
}

nlohmann::json checkpoint_step(const std::string& path) {
  if (std::filesystem::path(path).extension() != ".safetensors") return nullptr;
  try {
    const int64_t step = models::metadata_step(io::read_tensor_file(path).metadata);
    if (step >= 0) return step;
  } catch (const std::exception&) {
    // Unreadable metadata: the loader reports the file itself.
  }
  return nullptr;
}

void SizeSweepTables::add(int64_t index, int64_t size, const std::vector<analysis::Table>& tables,
                          const std::vector<std::string>& only) {
  tables_.add(index, std::to_string(size) + "x" + std::to_string(size), size, tables, only);
}

SeriesResults SizeSweepTables::results(const std::string& name) const {
  SeriesResults out;
  out.name = name + "_sizes";
  out.tables = tables_.tables();
  out.suffix = "_sizes";
  out.x_column = "img_size";
  out.x_label = "input size (pixels)";
  return out;
}

}  // namespace attnlab::session
