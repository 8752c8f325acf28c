// The fixtures' single-module architectures — an attention module on its own, fed tokens
// (B, N, C): arch "<mechanism>_attention" for each mechanism that declares its reference
// module (core/attention/registry.h: ReferenceModule: the constructor's argument names,
// options read from the weights, grid or sequence, the outputs' names). Today Castling
// (out.inference in eval, out.with_sparse_branch with the training-only masked softmax)
// and HiLo (out, on the config's H×W grid). `attnlab infer` runs them so parity can be
// checked from the command line.
#pragma once

#include <map>
#include <string>

#include "core/nn/state_loading.h"
#include "models/model_config.h"

namespace attnlab::models {

bool is_attention_module_arch(const std::string& arch);

// Builds the module from `config`, loads `weights` strictly, runs `input` (B, N, C) on
// the input's device and returns the named outputs (there too). Throws ModelError /
// StateLoadError / AttentionError.
std::map<std::string, at::Tensor> run_attention_module(const Json& config,
                                                       const nn::TensorMap& weights,
                                                       const at::Tensor& input);

}  // namespace attnlab::models
