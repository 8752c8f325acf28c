// ModelResults lookups; see results.h.
#include "app/session/results.h"

#include <algorithm>

namespace attnlab::session {

const analysis::Array* ModelResults::array(const analysis::ResultKey& key) const {
  const std::string wanted = analysis::format_result_key(key);
  for (const auto& a : arrays)
    if (a.name == wanted) return &a;
  return nullptr;
}

const analysis::Table* ModelResults::table(const std::string& n) const {
  for (const auto& t : tables)
    if (t.name == n) return &t;
  return nullptr;
}

const ResultImage* ModelResults::image(const std::string& tag) const {
  for (const auto& im : images)
    if (im.tag == tag) return &im;
  return nullptr;
}

std::vector<std::pair<analysis::ResultKey, const analysis::Array*>> ModelResults::arrays_of(
    const std::string& analysis, const std::string& image) const {
  std::vector<const analysis::Array*> sorted;
  for (const auto& a : arrays) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(),
            [](const analysis::Array* x, const analysis::Array* y) { return x->name < y->name; });
  std::vector<std::pair<analysis::ResultKey, const analysis::Array*>> out;
  for (const analysis::Array* a : sorted) {
    const auto key = analysis::parse_result_key(a->name);
    if (key && key->analysis == analysis && (image.empty() || key->image == image))
      out.emplace_back(*key, a);
  }
  return out;
}

}  // namespace attnlab::session
