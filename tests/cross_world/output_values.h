// An `attnlab analyze` output folder read back as groups of numbers, for comparing two runs
// file by file: every table column (its JSON, which keeps each double exactly; the CSV
// rounds to 9 digits) and every .npy array the sidecar lists. A group is the unit the
// cross-world test derives one tolerance for: values of one quantity at one scale.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attnlab::testing {

struct ValueGroup {
  std::string table;   // the table's name ("rank_heads"), or "" for an array
  std::string column;  // the value column, or the array's file relative to the folder
  // Tables: each row's key cells joined by '/' (the rows of two runs are matched by it).
  std::vector<std::string> rows;
  std::vector<double> values;      // NaN where the file holds null (a non-finite value)
  std::vector<std::string> texts;  // a text column's cells (values empty then)
  std::string shape;               // arrays: "3x4x4" (C order); tables: ""
  std::string name() const { return table.empty() ? column : table + "." + column; }
};

// Every group of the folder written for `model_tag`, by name. Reads the sidecar's file
// list, so a table or array the run wrote is never missed; throws std::runtime_error
// naming the file when one cannot be read or a table repeats a row key.
std::map<std::string, ValueGroup> read_output_values(const std::string& dir,
                                                     const std::string& model_tag);

}  // namespace attnlab::testing
