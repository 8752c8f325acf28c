// The projection options and their parser (projection_options.h).
#include "app/session/projection_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace attnlab::session {
namespace {

// The whole text as a positive int (what Args::take_positive_int accepts).
int projection_int_value(const std::string& value, const std::string& spelled) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || errno != 0 || *end != '\0' || v <= 0 || v > 1000000000)
    throw std::invalid_argument(spelled + " wants a positive integer, not '" + value + "'");
  return int(v);
}

double projection_real_value(const std::string& value, const std::string& spelled) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || errno != 0 || *end != '\0' || !std::isfinite(v))
    throw std::invalid_argument(spelled + " wants a number, not '" + value + "'");
  return v;
}

uint64_t projection_seed_value(const std::string& value, const std::string& spelled) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value.front() == '-' || value.front() == '+' || errno != 0 || *end != '\0')
    throw std::invalid_argument(spelled + " wants an integer >= 0, not '" + value + "'");
  return uint64_t(v);
}

}  // namespace

const std::vector<ProjectionOption>& projection_options() {
  static const std::vector<ProjectionOption> options = {
      {"method", "--method", "pca|tsne|umap", "the projection (default pca)"},
      {"dims", "--dims", "N", "2 or 3 dimensions (default 2; figures are 2-D)"},
      {"perplexity", "--perplexity", "P", "t-SNE's perplexity (default 30)"},
      {"neighbors", "--neighbors", "K", "UMAP's n_neighbors (default 15)"},
      {"min_dist", "--min-dist", "D", "UMAP's min_dist (default 0.1)"},
      {"iterations", "--iterations", "N", "t-SNE's iterations / UMAP's epochs (default theirs)"},
      {"seed", "--seed", "S", "t-SNE's and UMAP's seed (default 0)"},
  };
  return options;
}

void ProjectionOptionParser::set(std::string_view name, const std::string& value,
                                 std::string spelled) {
  const ProjectionOption* option = nullptr;
  for (const auto& o : projection_options())
    if (name == o.name || name == o.flag) option = &o;
  if (!option && name == "--projection") option = &projection_options().front();
  if (!option) throw std::invalid_argument("unknown projection option '" + std::string(name) + "'");
  if (spelled.empty()) spelled = std::string(name);
  const std::string which = option->name;
  if (which == "method") {
    try {
      request_.method = parse_projection_method(value);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(spelled + ": pca, tsne or umap, not '" + value + "'");
    }
  } else if (which == "dims") {
    request_.dims = projection_int_value(value, spelled);
    if (request_.dims != 2 && request_.dims != 3)
      throw std::invalid_argument(spelled + ": 2 or 3 dimensions, not " + value);
  } else if (which == "perplexity") {
    request_.perplexity = projection_real_value(value, spelled);
    if (!(request_.perplexity > 0))
      throw std::invalid_argument(spelled + " must be > 0, not '" + value + "'");
  } else if (which == "neighbors") {
    request_.neighbors = projection_int_value(value, spelled);
  } else if (which == "min_dist") {
    request_.min_dist = projection_real_value(value, spelled);
    if (!(request_.min_dist >= 0))
      throw std::invalid_argument(spelled + " must be >= 0, not '" + value + "'");
  } else if (which == "iterations") {
    request_.iterations = projection_int_value(value, spelled);
  } else {
    request_.seed = projection_seed_value(value, spelled);
  }
}

}  // namespace attnlab::session
