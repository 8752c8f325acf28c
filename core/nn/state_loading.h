// Strict loading of named tensors into a torch::nn::Module. The reference loaders use
// strict=False and silently skip what does not fit; we refuse, listing every missing,
// unexpected and mis-shaped key (with both shapes) in one message.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace attnlab::nn {

using TensorMap = std::map<std::string, at::Tensor>;

struct StateLoadError : std::runtime_error {
  StateLoadError(const std::string& message, std::vector<std::string> missing_keys,
                 std::vector<std::string> unexpected_keys, std::vector<std::string> mismatched_keys)
      : std::runtime_error(message),
        missing(std::move(missing_keys)),
        unexpected(std::move(unexpected_keys)),
        mismatched(std::move(mismatched_keys)) {}
  std::vector<std::string> missing, unexpected, mismatched;
};

// Copy tensors[prefix + name] into every parameter and buffer `name` of module (converted
// to the parameter's dtype and device). Keys of `tensors` that start with prefix but name
// nothing in the module are unexpected; keys outside prefix are ignored.
void load_state(torch::nn::Module& module, const TensorMap& tensors,
                const std::string& prefix = "");
// The same, taking the tensors over: a parameter or buffer whose tensor has its dtype,
// shape and device and is contiguous takes over that tensor's memory instead of a copy
// (the checkpoint's weights then exist once; 88 MB of DeiT-S are not copied again).
// `tensors` is left empty.
void load_state(torch::nn::Module& module, TensorMap&& tensors, const std::string& prefix = "");

// Every tensor of a safetensors/.pth/.npy file by name, as CPU tensors (core/io reader).
TensorMap read_tensor_map(const std::string& path);

// "(3, 64, 1, 1)" for messages.
std::string shape_string(at::IntArrayRef shape);

}  // namespace attnlab::nn
