// The options of a projection (PCA / t-SNE / UMAP of an embed folder): their flags, what
// they take, and the one parser that `attnlab project` and `attnlab report --embeddings`
// both call, so that both take the same words and refuse the same values with the same
// messages. The command line reads each flag's value and hands it over; nothing here knows
// the command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/session/embedding_projection.h"

namespace attnlab::session {

struct ProjectionOption {
  const char* name;    // "method", "dims", "perplexity", ...
  const char* flag;    // "--method", "--dims", "--perplexity", ... (the report spells the
                       // method --projection: ProjectionOptionParser::set takes either)
  const char* values;  // "pca|tsne|umap", "N": for help texts
  const char* help;
};
// Every projection option, in the order help texts list them.
const std::vector<ProjectionOption>& projection_options();

// Reads options one at a time onto a ProjectionRequest. Each error is a
// std::invalid_argument whose text starts with the option as the caller spelled it
// ("--perplexity must be > 0, not '-1'").
class ProjectionOptionParser {
 public:
  explicit ProjectionOptionParser(ProjectionRequest base = {}) : request_(std::move(base)) {}
  // `name` an option's name or flag; `spelled` how the message names it (default: name).
  void set(std::string_view name, const std::string& value, std::string spelled = {});
  const ProjectionRequest& request() const { return request_; }

 private:
  ProjectionRequest request_;
};

}  // namespace attnlab::session
