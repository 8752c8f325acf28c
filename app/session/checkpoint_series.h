// Checkpoints of a training series: the step each one records, for ordering and labels
// (the CLI's analyze-series and report, the GUI's series view).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "app/session/results.h"
#include "core/analysis/table.h"

namespace attnlab::session {

// The statistics of a training series: each table a checkpoint's analysis gave becomes
// "<name>_series", with the checkpoint's index, file name and step as the first three
// columns and one block of rows per checkpoint in the order added (analyze-series, the
// report's --series, the GUI's series view).
class SeriesTables {
 public:
  SeriesTables() = default;
  // Another kind of series: a resolution sweep's {"size_index", "input", "img_size"},
  // "_sizes", "input size". The third column is the numeric x the figures use.
  SeriesTables(std::vector<std::string> lead, std::string suffix, std::string block)
      : lead_(std::move(lead)), suffix_(std::move(suffix)), block_(std::move(block)) {}
  // Adds checkpoint `index` (file name `file`, training `step`) with its tables; `only`,
  // when non-empty, keeps just the tables of those names.
  void add(int64_t index, const std::string& file, int64_t step,
           const std::vector<analysis::Table>& tables, const std::vector<std::string>& only = {});
  // The series tables, in the order their names first appeared.
  std::vector<analysis::Table> tables() const;

 private:
  std::vector<std::string> lead_{"checkpoint_index", "checkpoint", "step"};
  std::string suffix_ = "_series", block_ = "checkpoint";
  std::vector<std::string> order_;
  std::map<std::string, analysis::Table> series_;
};

// A resolution sweep read as a series (analyze-sizes, report --img-sizes, the GUI's size
// sweep): each table becomes "<name>_sizes" with size_index, input ("224x224") and
// img_size first; results() gives the tables with the input size as the figures' x.
class SizeSweepTables {
 public:
  void add(int64_t index, int64_t size, const std::vector<analysis::Table>& tables,
           const std::vector<std::string>& only = {});
  SeriesResults results(const std::string& name) const;  // named "<name>_sizes"

 private:
  SeriesTables tables_{{"size_index", "input", "img_size"}, "_sizes", "input size"};
};

// The step a checkpoint's safetensors metadata records (models::metadata_step), or null
// (not a safetensors file, no step recorded, or metadata that cannot be read: the loader
// reports the file itself).
nlohmann::json checkpoint_step(const std::string& path);

}  // namespace attnlab::session
