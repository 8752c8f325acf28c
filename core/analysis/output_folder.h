// An analysis output folder: every file is written atomically under a self-describing
// name that starts with the model's tag, tables as CSV + JSON (rank summaries also as a
// LaTeX booktabs table), arrays as .npy in a subfolder named after the analysis, and one
// JSON sidecar (<model>__settings.json) that records every setting used and lists every
// file with its caption. Nothing is ever left half-written.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/analysis/table.h"

namespace attnlab::analysis {

// Letters, digits, '.', '-' and '_' kept; anything else becomes '_' ("my model (v2)" ->
// "my_model__v2_"). Never empty ("unnamed").
std::string file_safe(const std::string& text);

class OutputFolder {
 public:
  // Creates `dir` (and parents) if needed; throws std::runtime_error when it cannot.
  OutputFolder(std::string dir, std::string model_tag);

  // <dir>/<model>__<table>.csv and .json; rank_layers also .tex. Returns the paths.
  std::vector<std::string> write_table(const Table& t);
  // <dir>/<first part of the name>/<model>__<name>.npy
  std::string write_array(const Array& a);
  // The same for several arrays, whose files reach the disk together (io::BatchedWrites):
  // on a failure the arrays before it are written and listed, and it is thrown.
  void write_arrays(const std::vector<Array>& arrays);
  // <dir>/<name>: a text file beside the tables (the run's what-if edits, edits.txt),
  // listed in the sidecar as kind "text" with its caption. Returns the path.
  std::string write_text(const std::string& name, const std::string& text,
                         const std::string& caption);
  // <dir>/<model>__settings.json: `settings` plus "files" (every file written so far, with
  // its caption, kind and shape). Written last; rewriting it is fine.
  std::string write_sidecar(nlohmann::json settings);

  // Every file written so far, as the sidecar lists them.
  const nlohmann::json& files() const { return files_; }
  // A file another output folder wrote, with that folder's entry for it (a shard's
  // per-image array, `attnlab merge`): hard-linked from `from_dir` under the same relative
  // name (copied where a link cannot be made), atomically, and listed. Throws
  // std::runtime_error for a name outside the folder or a file that is not there.
  std::string adopt_file(const std::string& from_dir, const nlohmann::json& entry);

  const std::string& dir() const { return dir_; }
  const std::string& model_tag() const { return model_; }
  size_t files_written() const { return files_.size(); }

 private:
  std::string dir_, model_;
  nlohmann::json files_ = nlohmann::json::array();
};

}  // namespace attnlab::analysis
