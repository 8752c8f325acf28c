// index.html of `attnlab report`: every figure with its caption, grouped by kind, the
// run's settings, the statistics files, and what failed — one self-contained page that
// opens from the output folder without a server.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace attnlab::cli {

struct IndexEntry {
  std::string kind;  // FigureKind id
  std::string stem;  // figures/<stem>.<format>
  std::string caption;
  std::vector<std::string> formats;  // written formats (the first image format is shown)
};

// One embed folder in "Datasets at a glance" (report_datasets.h).
struct IndexDataset {
  std::string name;                                        // its folder under datasets/
  std::string source;                                      // the embed folder as given
  std::vector<std::pair<std::string, std::string>> facts;  // from embed.json: model, block, ...
  std::vector<IndexEntry> figures;                         // stems in datasets/<name>/
  std::vector<std::string> notes;  // the projection's note, why a figure is missing
  std::vector<std::string> files;  // its CSVs and JSON, relative to the report folder
};

struct IndexPage {
  std::string title;
  std::string settings;  // one paragraph stating the shared settings
  std::vector<IndexEntry> figures;
  std::vector<IndexDataset> datasets;    // "Datasets at a glance"
  std::vector<std::string> stats_files;  // paths relative to the report folder
  std::vector<std::string> errors;       // "what: message"
  nlohmann::json run;                    // the run description, shown folded
};

std::string render_index_html(const IndexPage& page);

}  // namespace attnlab::cli
