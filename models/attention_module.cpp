// Single attention modules as models: arch "<mechanism>_attention" for every registered
// mechanism that declares its reference module (MechanismInfo::reference_module).
#include "models/attention_module.h"

#include <ATen/ATen.h>

#include "core/attention/registry.h"
#include "models/backbone.h"

namespace attnlab::models {
namespace {

constexpr const char* kSuffix = "_attention";

// The mechanism of arch "<mechanism>_attention" when it declares a reference module.
const attention::MechanismInfo* module_mechanism(const std::string& arch) {
  const size_t n = std::string(kSuffix).size();
  if (arch.size() <= n || arch.compare(arch.size() - n, n, kSuffix) != 0) return nullptr;
  const attention::MechanismInfo* info = attention::find_mechanism(arch.substr(0, arch.size() - n));
  return info && info->reference_module ? info : nullptr;
}

// A reference constructor argument as an option value (true/false as 1/0).
double option_value(const Json& c, const std::string& key, const std::string& arch) {
  const Json& v = c.at(key);
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  throw ModelError(arch + ": '" + key + "' must be a number or a boolean");
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
  m.dim = get_int(config, "dim", arch);
  m.heads = get_int(config, "num_heads", arch);
  for (const auto& [arg, option] : module.args)
    if (config.contains(arg)) m.options[option] = option_value(config, arg, arch);
  if (module.fit_to_weights) module.fit_to_weights(m, weights);
  auto attn = attention::make_mechanism(info->name, m);
  nn::load_state(*attn, weights);
  // A sequence module mixes tokens as a 1-D sequence; a 1×N grid says exactly that.
  const auto layout =
      module.grid ? attention::grid_layout(get_int(config, "H", arch), get_int(config, "W", arch))
                  : attention::grid_layout(1, input.size(1));
  at::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> out;
  attn->eval();
  out[module.eval_output] = attn->forward(input, layout);
  if (!module.train_output.empty()) {
    attn->train();
    out[module.train_output] = attn->forward(input, layout);
    attn->eval();
  }
  return out;
}

}  // namespace attnlab::models
