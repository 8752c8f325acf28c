// format_result_key / parse_result_key; see result_key.h.
#include "core/analysis/result_key.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace attnlab::analysis {
namespace {

constexpr const char* kSep = "__";

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = name.find(kSep, start);
    out.push_back(name.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 2;
  }
}

std::string join(const std::vector<std::string>& words, size_t first, size_t last) {
  std::string out;
  for (size_t i = first; i < last; ++i) out += (i > first ? kSep : "") + words[i];
  return out;
}

bool all_digits(const std::string& s, size_t from) {
  if (s.size() <= from) return false;
  for (size_t i = from; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

std::optional<int64_t> parse_layer_tag(const std::string& s) {
  if (s.empty() || s[0] != 'L' || !all_digits(s, 1)) return std::nullopt;
  return std::strtoll(s.c_str() + 1, nullptr, 10);
}

// Shapes declared at run time by analyses other than the built-in ones.
std::map<std::string, ResultKeyShape>& declared_shapes() {
  static std::map<std::string, ResultKeyShape> shapes;
  return shapes;
}

// The shipped analyses' key shapes (image, layer, query, branch, part): their names on disk.
const std::map<std::string, ResultKeyShape>& built_in_shapes() {
  static const std::map<std::string, ResultKeyShape> shapes = {
      {"maps", {true, true, true, false, true}},          // maps__<image>__L03__q7-3__heads
      {"rollout", {true, false, true, false, false}},     // rollout__<image>__cls
      {"anchors", {true, true, false, false, true}},      // anchors__<image>__L03__soft
      {"spectra", {false, true, false, true, true}},      // spectra__L03__hifi__radial
      {"rank_sigma", {false, true, false, false, true}},  // rank_sigma__L03__kv
  };
  return shapes;
}

}  // namespace

void register_result_key_shape(const std::string& analysis, ResultKeyShape shape) {
  if (built_in_shapes().count(analysis))
    throw std::invalid_argument("the key shape of '" + analysis + "' is built in");
  declared_shapes()[analysis] = shape;
}

ResultKeyShape result_key_shape(const std::string& analysis) {
  if (const auto it = built_in_shapes().find(analysis); it != built_in_shapes().end())
    return it->second;
  if (const auto it = declared_shapes().find(analysis); it != declared_shapes().end())
    return it->second;
  ResultKeyShape image_only;
  image_only.image = true;
  return image_only;
}

std::string layer_tag(int64_t layer) {
  const std::string s = std::to_string(layer);
  return "L" + std::string(s.size() < 2 ? 2 - s.size() : 0, '0') + s;
}

std::string grid_query_tag(int64_t row, int64_t col) {
  return "q" + std::to_string(row) + "-" + std::to_string(col);
}

std::optional<std::pair<int64_t, int64_t>> parse_grid_query_tag(const std::string& tag) {
  const size_t dash = tag.find('-');
  if (tag.size() < 4 || tag[0] != 'q' || dash == std::string::npos) return std::nullopt;
  const std::string row = tag.substr(1, dash - 1), col = tag.substr(dash + 1);
  if (!all_digits(row, 0) || !all_digits(col, 0)) return std::nullopt;
  return std::make_pair(std::strtoll(row.c_str(), nullptr, 10),
                        std::strtoll(col.c_str(), nullptr, 10));
}

std::string format_result_key(const ResultKey& k) {
  std::string out = k.analysis;
  const auto add = [&](const std::string& field) {
    if (!field.empty()) out += kSep + field;
  };
  add(k.image);
  if (k.layer >= 0) add(layer_tag(k.layer));
  add(k.query);
  add(k.branch);
  add(k.part);
  return out;
}

std::optional<ResultKey> parse_result_key(const std::string& name) {
  const std::vector<std::string> w = split(name);
  ResultKey k;
  k.analysis = w.front();
  if (k.analysis.empty()) return std::nullopt;
  const ResultKeyShape shape = result_key_shape(k.analysis);
  size_t first = 1, last = w.size();  // the words not read yet: [first, last)
  if (shape.image) {
    // Fixed fields after the image, read from the right; the image takes the rest.
    const size_t tail =
        size_t(shape.layer) + size_t(shape.query) + size_t(shape.branch) + size_t(shape.part);
    if (last < first + 1 + tail) return std::nullopt;
    k.image = join(w, first, last - tail);
    first = last - tail;
  }
  if (shape.layer) {
    if (first >= last) return std::nullopt;
    const auto layer = parse_layer_tag(w[first++]);
    if (!layer) return std::nullopt;
    k.layer = *layer;
  }
  if (shape.query) {
    if (first >= last) return std::nullopt;
    k.query = w[first++];
  }
  if (shape.branch) {
    if (first >= last) return std::nullopt;
    k.branch = w[first++];
  }
  if (shape.part) {
    if (first >= last) return std::nullopt;
    k.part = join(w, first, last);  // the rest
    first = last;
  }
  if (first != last) return std::nullopt;
  if ((shape.image && k.image.empty()) || (shape.query && k.query.empty()) ||
      (shape.branch && k.branch.empty()) || (shape.part && k.part.empty()))
    return std::nullopt;
  return k;
}

}  // namespace attnlab::analysis
