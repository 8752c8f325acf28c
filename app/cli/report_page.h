// The figures and index.html of `attnlab report` from its parts (the models' results, the
// checkpoint series, the resolution sweeps, CKA between models): what the command draws
// after its analyses, and what `attnlab merge` draws from the merged shards.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/report_cka.h"
#include "app/cli/report_index.h"
#include "app/cli/report_request.h"
#include "app/cli/report_run.h"

namespace attnlab::cli {

struct ReportParts {
  std::vector<ModelResults> results;
  std::vector<CostModel> cost_models;  // what the cost figures count and measure
  std::optional<session::SeriesResults> series;
  std::vector<session::SeriesResults> sweeps;
  std::optional<CrossModelCka> cka;
  std::vector<IndexDataset> datasets;  // report --embeddings (report_datasets.h)
  std::vector<std::string> errors;     // listed in the index; the exit status is then 1
};

// Draws every figure (the analyses' side by side, then the cost figures), lists the
// statistics of `stats_dir`, writes index.html and says what was written. `started`: when
// the run began (the index's time). Returns the exit status.
int finish_report(const ReportRequest& req, ReportParts& parts,
                  const runtime::ComputeTarget& target, const nlohmann::json& run,
                  const std::string& stats_dir, std::chrono::steady_clock::time_point started);

}  // namespace attnlab::cli
