// Architecture recognition works on key names alone, by the families' key rules
// (model_family.h; the reference layouts differ in their attention modules: qkv,
// l_q/h_qkv, qkvo, x_to_emb, dconv), so it also names the family of checkpoints whose
// sizes we do not ship presets for.
#include "models/checkpoint_summary.h"

#include <map>
#include <vector>

#include "core/io/io_error.h"
#include "core/io/state_dict.h"
#include "core/io/tensor_stats.h"
#include "models/model_family.h"

namespace attnlab::models {

std::string checkpoint_architecture(const io::TensorFile& file) {
  io::StateDictView view;
  try {
    view = io::view_state_dict(file);
  } catch (const io::IoError&) {
    return "unknown";
  }
  std::vector<std::string> names;
  for (const auto& entry : view.entries) names.push_back(entry.second);
  return family_of_keys(names);
}

CheckpointSummary summarize_checkpoint(const io::TensorFile& file) {
  CheckpointSummary s;
  s.path = file.path;
  s.format = io::file_format_name(file.format);
  s.lines.push_back("file: " + file.path);
  s.lines.push_back("format: " + s.format);
  for (const auto& e : file.container)
    s.lines.push_back("container '" + e.key + "': " + e.kind + " — " + e.summary);

  io::StateDictView view;
  try {
    view = io::view_state_dict(file);
  } catch (const io::IoError& e) {
    s.architecture = "unknown";
    s.tensor_count = file.tensors.size();
    s.lines.push_back("weights: " + e.message());
    return s;
  }
  // A view, not a copy: a summary must not duplicate a checkpoint's weights.
  s.weights_key = view.source_key;
  std::vector<std::string> names;
  std::map<std::string, size_t> dtypes;
  const size_t dropped = view.dropped.size();
  for (const auto& [index, name] : view.entries) {
    const io::RawTensor& t = file.tensors.entries()[index].tensor;
    names.push_back(name);
    if (io::has_non_finite(t)) s.non_finite.push_back(name);
    ++dtypes[io::dtype_name(t.dtype)];
    if (io::is_floating(t.dtype)) s.parameter_count += t.numel();
  }
  s.architecture = family_of_keys(names);
  s.tensor_count = names.size();
  s.lines.push_back("weights: " + (s.weights_key.empty()
                                       ? std::string("flat state dict")
                                       : "container key '" + s.weights_key + "'"));
  s.lines.push_back("architecture (from key names): " + s.architecture);
  // Files written by attnlab (and other safetensors writers) may say what they are.
  const auto arch = file.metadata.find("arch");
  if (arch != file.metadata.end()) {
    const auto attention = file.metadata.find("attention");
    auto unquote = [](std::string v) {
      return v.size() >= 2 && v.front() == '"' && v.back() == '"' ? v.substr(1, v.size() - 2) : v;
    };
    s.lines.push_back("model config in its metadata: " + unquote(arch->second) +
                      (attention != file.metadata.end()
                           ? " with " + unquote(attention->second) + " attention"
                           : ""));
  }
  s.lines.push_back("tensors: " + std::to_string(s.tensor_count) + ", floating-point elements: " +
                    std::to_string(s.parameter_count) + " (parameters and float buffers)");
  if (dropped > 0)
    s.lines.push_back("dropped " + std::to_string(dropped) +
                      " num_batches_tracked counter(s) (BatchNorm bookkeeping, not weights)");
  if (!s.non_finite.empty())
    s.warnings.push_back(std::to_string(s.non_finite.size()) +
                         " tensor(s) hold NaN or Inf values, first '" + s.non_finite.front() +
                         "' (a diverged run?)");
  std::string dt = "dtypes:";
  for (const auto& [name, n] : dtypes) dt += " " + name + "×" + std::to_string(n);
  s.lines.push_back(dt);
  for (const auto& [k, v] : file.metadata) s.lines.push_back("metadata " + k + " = " + v);
  for (const auto& n : file.notes) s.lines.push_back("note: " + n);
  return s;
}

}  // namespace attnlab::models
