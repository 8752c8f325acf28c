// The helpers the families' recognition rules share; see shape_reading.h.
#include "models/shape_reading.h"

#include <cmath>

#include "core/io/text.h"
#include "models/presets.h"

namespace attnlab::models {

bool any_key_contains(const KeyNames& names, const std::string& needle) {
  for (const auto& n : names)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

bool any_key_starts_with(const KeyNames& names, const std::string& prefix) {
  for (const auto& n : names)
    if (n.rfind(prefix, 0) == 0) return true;
  return false;
}

const std::vector<int64_t>& need_shape(const ShapeMap& w, const std::string& key, size_t dims) {
  const auto it = w.find(key);
  if (it == w.end() || it->second.size() != dims) throw CannotDerive{};
  return it->second;
}

int64_t leading_size(const ShapeMap& w, const std::string& key) {
  const auto it = w.find(key);
  if (it == w.end() || it->second.empty()) throw CannotDerive{};
  return it->second[0];
}

int64_t count_indices(const ShapeMap& w, const std::string& prefix) {
  int64_t n = 0;
  while (true) {
    const std::string p = prefix + std::to_string(n) + ".";
    const auto it = w.lower_bound(p);
    if (it == w.end() || it->first.compare(0, p.size(), p) != 0) return n;
    ++n;
  }
}

int64_t square_side(int64_t square) {
  const auto r = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(square))));
  if (r < 1 || r * r != square) throw CannotDerive{};
  return r;
}

std::string Recognition::summary() const {
  if (exact) return "recognised as " + preset;
  std::string s = "recognised as a " + get_string(config, "arch", "model", "model") + " like " +
                  preset + ", read from its shapes: " + text::join(derived);
  if (!assumed.empty()) s += "; not in the weights: " + text::join(assumed);
  return s;
}

Derivation Derivation::from_preset(const std::string& preset) {
  Derivation d;
  d.r.preset = preset;
  d.r.config = find_preset(preset).config;
  return d;
}

void Derivation::set(const std::string& key, const Json& value, const std::string& from) {
  r.config[key] = value;
  keys.push_back(key);
  r.derived.push_back(key + " " + value.dump() + " (" + from + ")");
}

void Derivation::assume(const std::string& key, const Json& value, const std::string& why) {
  r.config[key] = value;
  r.assumed.push_back(key + " " + value.dump() + " (" + why + ")");
}

}  // namespace attnlab::models
