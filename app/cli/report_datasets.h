// `attnlab report --embeddings DIR...`: the index's "Datasets at a glance" (issue 70 goals
// 2 and 5) from folders that `attnlab embed` wrote. For each folder, under
// OUT/datasets/<name>/:
//   projection_<method>.csv           row,image,label,x,y: the projection, computed once
//                                     (session::project_embeddings, the options of
//                                     `attnlab project`: session/projection_options.h)
//   projection_<method>.json          the method, its options as used, explained variance
//                                     or KL divergence (what project writes)
//   projection_<method>_<colour>.*    the projection coloured by label, by prediction, by
//                                     correct/wrong: those the folder has data for (the
//                                     index says why one is missing), in every --formats
//   head_extremes[_partN].*, head_extremes.csv   with embed --heads: per head the images it
//                                     attends to most sharply and most broadly (every
//                                     head, 12 per figure, as embed draws them; the
//                                     pictures read again as the model saw them)
// A folder that cannot be read (no embed.json, a truncated embeddings.npy, an images.csv
// of another length) is a failure like a model that cannot be loaded: said on stderr and
// in the index, the rest written, exit status 1. Not with --shard (a usage error).
#pragma once

#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/report_index.h"
#include "app/cli/report_options.h"
#include "app/session/embedding_projection.h"

namespace attnlab::cli {

struct ReportDatasetsRequest {
  std::vector<std::string> dirs;          // --embeddings, in order
  session::ProjectionRequest projection;  // --projection (the method) and project's options
};

// Removes --embeddings, --projection and the other projection options
// (session::projection_options, --dims excepted: the report's figures are 2-D) from
// `args`; UsageError for a bad value, or projection options without --embeddings.
ReportDatasetsRequest take_report_datasets(Args& args);

// Projects and draws every folder of `request` into `out`/datasets/. A folder or figure
// that fails is added to `errors` ("embeddings DIR: reason") and said on stderr; a failure
// to write the output is rethrown (output_failure.h).
std::vector<IndexDataset> write_report_datasets(const ReportDatasetsRequest& request,
                                                const ReportFigureOptions& options,
                                                const std::string& out,
                                                std::vector<std::string>& errors);

}  // namespace attnlab::cli
