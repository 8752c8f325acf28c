// Single attention modules as models (castling_attention, hilo_attention).
#include "models/attention_module.h"

#include <ATen/ATen.h>

#include "core/attention/registry.h"
#include "models/backbone.h"

namespace attnlab::models {
namespace {

attention::MechanismConfig base_config(const Json& c, const std::string& arch) {
  attention::MechanismConfig m;
  m.dim = get_int(c, "dim", arch);
  m.heads = get_int(c, "num_heads", arch);
  return m;
}

std::map<std::string, at::Tensor> run_castling(const Json& c, const nn::TensorMap& w,
                                               const at::Tensor& x) {
  attention::MechanismConfig m = base_config(c, "castling_attention");
  m.options = {
      {"qkv_bias", get_bool(c, "qkv_bias", "castling_attention", false) ? 1.0 : 0.0},
      {"threshold", get_real(c, "sparse_threshold", "castling_attention", 0.02)},
      {"kernel", static_cast<double>(get_int(c, "res_kernel_size", "castling_attention", 9))}};
  auto attn = attention::make_mechanism("castling", m);
  nn::load_state(*attn, w);
  // The module mixes tokens as a 1-D sequence; a 1×N grid says exactly that.
  const auto layout = attention::grid_layout(1, x.size(1));
  at::NoGradGuard no_grad;
  attn->eval();
  std::map<std::string, at::Tensor> out;
  out["out.inference"] = attn->forward(x, layout);
  attn->train();
  out["out.with_sparse_branch"] = attn->forward(x, layout);
  attn->eval();
  return out;
}

std::map<std::string, at::Tensor> run_hilo(const Json& c, const nn::TensorMap& w,
                                           const at::Tensor& x) {
  attention::MechanismConfig m = base_config(c, "hilo_attention");
  // The Lo-Fi head count is read from the weights (l_q rows / head dim), so α-ablation
  // modules load whatever alpha their config claims.
  const int64_t head_dim = m.dim / std::max<int64_t>(1, m.heads);
  const auto lq = w.find("l_q.weight");
  const int64_t lofi = lq == w.end() ? 0 : lq->second.size(0) / head_dim;
  m.options = {{"qkv_bias", get_bool(c, "qkv_bias", "hilo_attention", true) ? 1.0 : 0.0},
               {"alpha", get_real(c, "alpha", "hilo_attention", 0.9)},
               {"window", static_cast<double>(get_int(c, "window_size", "hilo_attention", 2))},
               {"lofi_heads", static_cast<double>(lofi)}};
  auto attn = attention::make_mechanism("hilo", m);
  nn::load_state(*attn, w);
  const auto layout =
      attention::grid_layout(get_int(c, "H", "hilo_attention"), get_int(c, "W", "hilo_attention"));
  at::NoGradGuard no_grad;
  attn->eval();
  return {{"out", attn->forward(x, layout)}};
}

}  // namespace

bool is_attention_module_arch(const std::string& arch) {
  return arch == "castling_attention" || arch == "hilo_attention";
}

std::map<std::string, at::Tensor> run_attention_module(const Json& config,
                                                       const nn::TensorMap& weights,
                                                       const at::Tensor& input) {
  const std::string arch = get_string(config, "arch", "model", "");
  if (arch == "castling_attention") return run_castling(config, weights, input);
  if (arch == "hilo_attention") return run_hilo(config, weights, input);
  throw ModelError("'" + arch + "' is not a single attention module arch");
}

}  // namespace attnlab::models
