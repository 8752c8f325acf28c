// Choosing the weights inside a checkpoint: unwrap the container ('model' → 'model_ema'
// → 'state_dict' → a flat file → 'teacher' (DINO's training checkpoints), or the key the
// user picks), strip a 'module.' prefix
// (DataParallel saves) and drop BatchNorm's num_batches_tracked counters — the common
// loader rules of SPEC §2. Strict key matching against a model happens in models/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/io/tensor_file.h"

namespace attnlab::io {

struct StateDict {
  std::string source_key;  // container key used; "" for a flat file
  TensorDict tensors;
  std::vector<std::string> dropped;  // names removed by the rules (num_batches_tracked)
};

// Container keys that hold tensors, in file order ("" first when the file is flat).
std::vector<std::string> state_dict_candidates(const TensorFile& file);

// The container key extract_state_dict would use ("" = flat). Throws like it.
std::string state_dict_key(const TensorFile& file, const std::string& prefer = "");

// The state dict as indices into file.tensors, without copying any weights: what
// extract_state_dict returns, for readers that only look (summaries, key checks).
// Throws like extract_state_dict, including on names that collide after 'module.'.
struct StateDictView {
  std::string source_key;
  std::vector<std::pair<size_t, std::string>> entries;  // (index in file.tensors, name)
  std::vector<std::string> dropped;
};
StateDictView view_state_dict(const TensorFile& file, const std::string& prefer = "");

// Throws IoError(MissingEntry) naming the candidates when `prefer` is absent or when no
// state dict can be chosen unambiguously.
StateDict extract_state_dict(const TensorFile& file, const std::string& prefer = "");
// The same, moving the chosen tensors out of `file` instead of copying them (large
// checkpoints: avoids holding the weights twice).
StateDict extract_state_dict(TensorFile&& file, const std::string& prefer = "");

}  // namespace attnlab::io
