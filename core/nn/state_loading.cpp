// Strict state loading.
#include "core/nn/state_loading.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include "core/io/tensor_file.h"
#include "core/io/torch_bridge.h"

namespace attnlab::nn {

std::string shape_string(at::IntArrayRef shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

void load_state(torch::nn::Module& module, const TensorMap& tensors, const std::string& prefix) {
  std::map<std::string, at::Tensor> targets;
  for (const auto& p : module.named_parameters(true)) targets[p.key()] = p.value();
  for (const auto& b : module.named_buffers(true)) targets[b.key()] = b.value();

  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& [name, target] : targets) {
    auto it = tensors.find(prefix + name);
    if (it == tensors.end()) {
      missing.push_back(prefix + name);
    } else if (!it->second.sizes().equals(target.sizes())) {
      mismatched.push_back(prefix + name + ": checkpoint " + shape_string(it->second.sizes()) +
                           ", model " + shape_string(target.sizes()));
    }
  }
  for (const auto& [key, tensor] : tensors) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    if (!targets.count(key.substr(prefix.size()))) unexpected.push_back(key);
  }
  if (!missing.empty() || !unexpected.empty() || !mismatched.empty()) {
    std::string msg = "the weights do not fit the model";
    if (!prefix.empty()) msg += " (under '" + prefix + "')";
    auto list = [&msg](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      msg += "\n  " + std::to_string(keys.size()) + " " + what + ":";
      for (const auto& k : keys) msg += "\n    " + k;
    };
    list("missing", missing);
    list("unexpected", unexpected);
    list("with the wrong shape", mismatched);
    throw StateLoadError(msg, missing, unexpected, mismatched);
  }
  at::NoGradGuard no_grad;
  for (auto& [name, target] : targets) target.copy_(tensors.at(prefix + name));
}

TensorMap read_tensor_map(const std::string& path) {
  io::TensorFile file = io::read_tensor_file(path);
  TensorMap out;
  for (const auto& entry : file.tensors) out[entry.name] = io::to_torch(entry.tensor);
  return out;
}

}  // namespace attnlab::nn
