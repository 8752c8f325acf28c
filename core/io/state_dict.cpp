#include "core/io/state_dict.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace attnlab::io {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : ", ") + (x.empty() ? std::string("(flat)") : "'" + x + "'");
  return s.empty() ? "none" : s;
}
}  // namespace

std::vector<std::string> state_dict_candidates(const TensorFile& file) {
  std::vector<std::string> keys;
  for (const std::string& k : file.container_key)
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  return keys;
}

// Which container key to take the weights from, following SPEC §2's order.
std::string state_dict_key(const TensorFile& file, const std::string& prefer) {
  std::vector<std::string> cands = state_dict_candidates(file);
  auto has = [&](const std::string& k) {
    return std::find(cands.begin(), cands.end(), k) != cands.end();
  };
  std::string chosen;
  bool found = false;
  if (!prefer.empty()) {
    if (!has(prefer))
      throw IoError(
          IoErrorKind::MissingEntry, file.path,
          "no tensors under container key '" + prefer + "'; keys holding tensors: " + join(cands));
    chosen = prefer;
    found = true;
  } else {
    // SPEC §2's order; then a DINO training checkpoint's 'teacher' (beside 'student',
    // 'optimizer', ...), the network DINO's and DINOv2's own evaluations load.
    for (const char* k : {"model", "model_ema", "state_dict", "", "teacher"}) {
      if (has(k)) {
        chosen = k;
        found = true;
        break;
      }
    }
    // A container with exactly one key holding a state dict ({'net': sd, 'epoch': 3}).
    if (!found) {
      std::vector<std::string> dicts;
      for (const auto& e : file.container)
        if (e.kind == "state dict") dicts.push_back(e.key);
      if (dicts.size() == 1) {
        chosen = dicts[0];
        found = true;
      }
    }
  }
  if (!found && cands.empty()) {
    std::string objects;
    for (const auto& e : file.container)
      if (e.kind == "object") objects += (objects.empty() ? "" : ", ") + e.summary;
    throw IoError(IoErrorKind::MissingEntry, file.path,
                  "the file holds no tensors that could be read" +
                      (objects.empty()
                           ? std::string()
                           : "; it holds pickled objects (" + objects +
                                 "): if this is a whole model saved with torch.save(model), "
                                 "re-save its weights with torch.save(model.state_dict(), path)"));
  }
  if (!found)
    throw IoError(IoErrorKind::MissingEntry, file.path,
                  "cannot tell which entry holds the model weights; keys holding tensors: " +
                      join(cands) + " (pick one explicitly)");

  return chosen;
}

StateDictView view_state_dict(const TensorFile& file, const std::string& prefer) {
  StateDictView view;
  view.source_key = state_dict_key(file, prefer);
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    if (file.container_key[i] != view.source_key) continue;
    std::string name = file.name_in_container[i];
    if (ends_with(name, "num_batches_tracked")) {  // BatchNorm bookkeeping, not weights
      view.dropped.push_back(name);
      continue;
    }
    if (name.rfind("module.", 0) == 0) name = name.substr(7);
    if (!seen.insert(name).second)
      throw IoError(IoErrorKind::BadField, file.path,
                    "two tensors map to '" + name + "' after removing the 'module.' prefix");
    view.entries.emplace_back(i, std::move(name));
  }
  return view;
}

namespace {

// Builds the state dict from a view; `take(i)` copies or moves entry i's tensor.
template <class Take>
StateDict build(StateDictView view, Take take) {
  StateDict out;
  out.source_key = std::move(view.source_key);
  out.dropped = std::move(view.dropped);
  for (auto& [index, name] : view.entries) out.tensors.add(std::move(name), take(index));
  return out;
}

}  // namespace

StateDict extract_state_dict(const TensorFile& file, const std::string& prefer) {
  return build(view_state_dict(file, prefer),
               [&](size_t i) { return file.tensors.entries()[i].tensor; });
}

StateDict extract_state_dict(TensorFile&& file, const std::string& prefer) {
  return build(view_state_dict(file, prefer), [&](size_t i) { return file.tensors.take(i); });
}

}  // namespace attnlab::io
