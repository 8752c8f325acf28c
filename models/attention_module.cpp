// Single attention modules as models: arch "<mechanism>_attention" (or the arch its
// ReferenceModule names) for every registered mechanism that declares its reference module
// (MechanismInfo::reference_module).
#include "models/attention_module.h"

#include <ATen/ATen.h>

#include "core/attention/registry.h"
#include "models/backbone.h"

namespace attnlab::models {
namespace {

constexpr const char* kSuffix = "_attention";

// The arch a mechanism's reference module answers to.
std::string module_arch(const attention::MechanismInfo& info) {
  const auto& module = *info.reference_module;
  return module.arch.empty() ? info.name + kSuffix : module.arch;
}

// The registered mechanism whose reference module answers to `arch`.
const attention::MechanismInfo* module_mechanism(const std::string& arch) {
  for (const auto& info : attention::mechanisms())
    if (info.reference_module && module_arch(info) == arch) return &info;
  return nullptr;
}

// A reference constructor argument as an option value (true/false as 1/0, a string as the
// choice it names).
double option_value(const attention::MechanismInfo& info, const Json& c, const std::string& key,
                    const std::string& option, const std::string& arch) {
  const Json& v = c.at(key);
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return attention::option_from_text(info, option, v.get<std::string>());
    } catch (const attention::AttentionError& e) {
      throw ModelError(arch + ": '" + key + "': " + e.what());
    }
  }
  throw ModelError(arch + ": '" + key + "' must be a number, a boolean or a choice's name");
}

}  // namespace

bool is_attention_module_arch(const std::string& arch) {
  return module_mechanism(arch) != nullptr;
}

std::map<std::string, at::Tensor> run_attention_module(const Json& config,
                                                       const nn::TensorMap& weights,
                                                       const at::Tensor& input) {
  const std::string arch = get_string(config, "arch", "model", "");
  const attention::MechanismInfo* info = module_mechanism(arch);
  if (!info) throw ModelError("'" + arch + "' is not a single attention module arch");
  const attention::ReferenceModule& module = *info->reference_module;
  attention::MechanismConfig m;
  m.dim = module.dim_arg.empty() ? 0 : get_int(config, module.dim_arg, arch);
  const bool has_heads = config.contains(module.heads_arg) && !config[module.heads_arg].is_null();
  m.heads = has_heads ? get_int(config, module.heads_arg, arch) : 0;
  for (const auto& [arg, option] : module.args)
    if (config.contains(arg) && !config[arg].is_null())
      m.options[option] = option_value(*info, config, arg, option, arch);
  for (const auto& [option, value] : module.fixed_options) m.options[option] = value;
  if (module.fit_to_weights) module.fit_to_weights(m, weights);
  // A sequence module mixes tokens as a 1-D sequence; a 1×N grid says exactly that.
  int64_t grid_h = 1, grid_w = 0;
  if (module.channels_first) {
    if (input.dim() != 4) throw ModelError(arch + ": the input must be (B, C, H, W)");
    grid_h = input.size(2), grid_w = input.size(3);
  } else if (module.channels_last) {
    if (input.dim() != 4) throw ModelError(arch + ": the input must be (B, H, W, C)");
    grid_h = input.size(1), grid_w = input.size(2);
  } else if (module.grid && !module.grid_arg.empty()) {
    const auto hw = get_ints(config, module.grid_arg, arch);
    if (hw.size() != 2) throw ModelError(arch + ": '" + module.grid_arg + "' must be [H, W]");
    grid_h = hw[0], grid_w = hw[1];
  } else if (module.grid) {
    grid_h = get_int(config, "H", arch), grid_w = get_int(config, "W", arch);
  } else {
    grid_w = input.size(1);
  }
  if (!module.grid_options.first.empty()) {
    m.options[module.grid_options.first] = double(grid_h);
    m.options[module.grid_options.second] = double(grid_w);
  }
  auto attn = attention::make_mechanism(info->name, m);
  nn::load_state(*attn, weights);
  attn->to(input.device());  // it runs where its input is, at its precision
  if (input.is_floating_point() && input.scalar_type() != at::kFloat)
    cast_floating(*attn, input.scalar_type());
  auto layout = attention::grid_layout(grid_h, grid_w);
  if (module.class_token) layout.prefix = {"cls"};
  // (B, C, H, W) images in and out for the channels-first modules, (B, H, W, C) for the
  // channels-last ones; tokens otherwise.
  at::Tensor tokens = input;
  if (module.channels_first) tokens = input.flatten(2).transpose(1, 2).contiguous();
  if (module.channels_last) tokens = input.flatten(1, 2);
  const auto as_output = [&](const at::Tensor& y) {
    if (module.channels_first) return y.transpose(1, 2).reshape(input.sizes()).contiguous();
    if (module.channels_last) return y.reshape(input.sizes());
    return y;
  };
  at::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> out;
  attn->eval();
  out[module.eval_output] = as_output(attn->forward(tokens, layout));
  if (!module.train_output.empty()) {
    attn->train();
    out[module.train_output] = as_output(attn->forward(tokens, layout));
    attn->eval();
  }
  return out;
}

}  // namespace attnlab::models
