// ModelResults lookups; see results.h.
#include "app/session/results.h"

#include <algorithm>
#include <cmath>

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

const char* fusion_name(int fusion) {
  return fusion == 1 ? "max" : fusion == 2 ? "min" : "mean";
}

int MapView::layer_in(int n) const {
  if (n <= 0) return -1;
  if (layer < 0) return n - 1;
  if (layer_of <= 0 || layer_of == n) return std::clamp(layer, 0, n - 1);
  // Relative depth: the same fraction of the way through the network.
  const int ref = std::min(layer, layer_of - 1);
  const double rel = layer_of > 1 ? double(ref) / double(layer_of - 1) : 1.0;
  return std::clamp(int(std::lround(rel * (n - 1))), 0, n - 1);
}

std::string MapView::title(const std::string& query_label) const {
  if (rollout) return "Attention rollout of " + query_label;
  const std::string where =
      layer < 0 ? std::string("last layer") : "layer " + std::to_string(layer);
  if (!similarity.empty())
    return "Cosine similarity of the " + similarity + " to " + query_label + ", " + where;
  const std::string what =
      head >= 0 ? "Head " + std::to_string(head) : std::string("Head-") + fusion_name(fusion);
  return what + " attention of " + query_label + ", " +
         (layer < 0 ? std::string("last layer") : "layer " + std::to_string(layer));
}

}  // namespace attnlab::session
