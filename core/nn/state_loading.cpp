// Strict state loading.
#include "core/nn/state_loading.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <set>

#include "core/io/tensor_file.h"
#include "core/io/torch_bridge.h"

namespace attnlab::nn {

std::string shape_string(at::IntArrayRef shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

namespace {

// Checks every key (throwing StateLoadError listing all that do not fit) and returns the
// module's parameters and buffers by name.
std::map<std::string, at::Tensor> checked_targets(torch::nn::Module& module,
                                                  const TensorMap& tensors,
                                                  const std::string& prefix) {
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
  return targets;
}

// Whether `target` can take over `source`'s memory as it is: same dtype, shape and device,
// contiguous and not a view into a larger buffer.
bool can_adopt(const at::Tensor& target, const at::Tensor& source) {
  return source.scalar_type() == target.scalar_type() && source.device() == target.device() &&
         source.sizes().equals(target.sizes()) && source.is_contiguous() &&
         source.storage_offset() == 0 &&
         int64_t(source.storage().nbytes()) == source.numel() * int64_t(source.element_size());
}

}  // namespace

void load_state(torch::nn::Module& module, const TensorMap& tensors, const std::string& prefix) {
  auto targets = checked_targets(module, tensors, prefix);
  at::NoGradGuard no_grad;
  for (auto& [name, target] : targets) target.copy_(tensors.at(prefix + name));
}

void load_state(torch::nn::Module& module, TensorMap&& tensors, const std::string& prefix) {
  auto targets = checked_targets(module, tensors, prefix);
  at::NoGradGuard no_grad;
  std::set<const void*> adopted;  // a storage handed to two targets would tie them: copy
  for (auto& [name, target] : targets) {
    at::Tensor& source = tensors.at(prefix + name);
    if (can_adopt(target, source) && adopted.insert(source.storage().data()).second)
      target.set_data(source);
    else
      target.copy_(source);
    source = at::Tensor();
  }
  tensors.clear();
}

TensorMap read_tensor_map(const std::string& path) {
  io::TensorFile file = io::read_tensor_file(path);
  TensorMap out;
  for (const auto& entry : file.tensors) out[entry.name] = io::to_torch(entry.tensor);
  return out;
}

}  // namespace attnlab::nn
