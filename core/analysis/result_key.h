// Typed names of the analyses' result arrays. An array's name (its file name on disk,
// its key in the report and the GUI) is the fields below joined by "__", in this order,
// each present only when set:
//
//   analysis [image] [L<layer>] [query] [branch] [part]
//   maps__chelsea__L03__q7-3__heads        rollout__chelsea__cls
//   anchors__chelsea__L11__soft            gradcam__chelsea
//   spectra__L02__hifi__log_amplitude      rank_sigma__L05__kv
//
// format_result_key and parse_result_key are the one pair that writes and reads these
// names; code that looks a result up builds a ResultKey, never a string. Image tags are
// file stems and may themselves hold "__": the parser reads the fixed fields of each
// analysis from the right and gives the image what is left. Plain data, no LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attnlab::analysis {

struct ResultKey {
  std::string analysis;  // "maps", "rollout", "anchors", "spectra", "rank_sigma", ...
  std::string image;     // the image's tag; "" for image-averaged arrays
  int64_t layer = -1;    // traced layer index; -1: none
  std::string query;     // "q7-3", "cls", ...; "" : none
  std::string branch;    // "hifi", "lofi", "output" (spectra); "" : none
  std::string part;      // "heads", "fused", "hard", "soft", "log_amplitude", "kv", ...

  bool operator==(const ResultKey& o) const {
    return analysis == o.analysis && image == o.image && layer == o.layer && query == o.query &&
           branch == o.branch && part == o.part;
  }
  bool operator!=(const ResultKey& o) const { return !(*this == o); }
};

// The fields an analysis's keys carry, for parsing (formatting needs none). The shipped
// analyses' shapes are built in (they are the on-disk names of docs/ANALYSIS.md); another
// analysis declares its own (session::AnalysisInfo::key_shape, registered with the
// analysis); an analysis with neither names its arrays "<analysis>__<image>".
struct ResultKeyShape {
  bool image = false, layer = false, query = false, branch = false, part = false;
};
ResultKeyShape result_key_shape(const std::string& analysis);
// Declares the key shape of `analysis` (before any key of it is parsed; not thread-safe
// against a concurrent parse). A built-in shape cannot be changed: std::invalid_argument.
void register_result_key_shape(const std::string& analysis, ResultKeyShape shape);

// "L03": a traced layer's index, at least two digits.
std::string layer_tag(int64_t layer);
// "q7-3": a grid query's tag (row 7, column 3 of the first layer's grid).
std::string grid_query_tag(int64_t row, int64_t col);
// "q7-3" -> (7, 3); nullopt for a prefix token's tag ("cls").
std::optional<std::pair<int64_t, int64_t>> parse_grid_query_tag(const std::string& tag);

std::string format_result_key(const ResultKey& key);
// nullopt when `name` is not a well-formed key of its analysis's shape.
std::optional<ResultKey> parse_result_key(const std::string& name);

}  // namespace attnlab::analysis
