// The fixtures' single-module architectures — an attention module on its own, fed tokens
// (B, N, C): "castling_attention" (outputs out.inference in eval and
// out.with_sparse_branch with the training-only masked softmax) and "hilo_attention"
// (output out, on the config's H×W grid, padded and cropped when the window does not
// divide it). `attnlab infer` runs them so parity can be checked from the command line.
#pragma once

#include <map>
#include <string>

#include "core/nn/state_loading.h"
#include "models/model_config.h"

namespace attnlab::models {

bool is_attention_module_arch(const std::string& arch);

// Builds the module from `config`, loads `weights` strictly, runs `input` (B, N, C) and
// returns the named outputs. Throws ModelError / StateLoadError / AttentionError.
std::map<std::string, at::Tensor> run_attention_module(const Json& config,
                                                       const nn::TensorMap& weights,
                                                       const at::Tensor& input);

}  // namespace attnlab::models
