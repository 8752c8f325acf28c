// What a checkpoint is, in a few lines: format, which architecture family its keys
// belong to (the families' key rules, model_family.h), the container
// key holding the weights, parameter count and dtypes. Shown by `attnlab inspect` and
// the GUI; the strict loaders of each backbone come with the models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/tensor_file.h"

namespace attnlab::models {

struct CheckpointSummary {
  std::string path;
  std::string format;       // "safetensors", "PyTorch zip (.pth)", ...
  std::string weights_key;  // container key the state dict came from ("" = flat)
  // the family its key names tell (a KeyRule's family, model_family.h), or "unknown"
  std::string architecture;
  int64_t parameter_count = 0;  // elements of floating-point tensors in the state dict
  size_t tensor_count = 0;
  std::vector<std::string> non_finite;  // weight tensors holding NaN or Inf
  std::vector<std::string> lines;       // human-readable summary, one fact per line
  std::vector<std::string> warnings;    // problems with the weights, to show prominently
};

CheckpointSummary summarize_checkpoint(const io::TensorFile& file);

// Only the architecture family, from the key names (no pass over the values, which the
// summary's NaN scan makes): what loading needs to word its refusals.
std::string checkpoint_architecture(const io::TensorFile& file);

}  // namespace attnlab::models
