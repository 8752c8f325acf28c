// --dtype: parsing, the probe that refuses a precision this LibTorch cannot run, and the
// fp32 copy the full-precision steps read. See precision.h.
#include "core/runtime/precision.h"

#include "core/runtime/bf16_products.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/runtime/device.h"

namespace attnlab::runtime {

c10::ScalarType parse_dtype(const std::string& spec) {
  if (spec == "fp32" || spec == "float32") return c10::kFloat;
  if (spec == "bf16" || spec == "bfloat16") return c10::kBFloat16;
  if (spec == "fp16" || spec == "float16") return c10::kHalf;
  throw std::invalid_argument("unknown dtype '" + spec + "' (expected fp32, bf16 or fp16)");
}

std::string dtype_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::kFloat:
      return "fp32";
    case c10::kBFloat16:
      return "bf16";
    case c10::kHalf:
      return "fp16";
    default:
      return c10::toString(dtype);
  }
}

std::string default_dtype_spec() {
  const char* env = std::getenv("ATTNLAB_DTYPE");
  return env && *env ? env : "fp32";
}

namespace {

// The op kinds a forward of the shipped backbones runs, each once on a tiny input.
std::string probe(c10::ScalarType dtype, const c10::Device& device) {
  const auto o = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor x = at::rand({2, 4, 8}, o);
  const at::Tensor w = at::rand({8, 8}, o), bias = at::rand({8}, o);
  const at::Tensor img = at::rand({1, 8, 6, 6}, o);
  const std::vector<std::pair<std::string, std::function<void()>>> ops = {
      {"at::linear", [&] { at::linear(x, w, bias); }},
      {"at::matmul", [&] { at::matmul(x, x.transpose(1, 2)); }},
      {"at::softmax", [&] { at::softmax(x, -1); }},
      {"at::layer_norm", [&] { at::layer_norm(x, {8}, bias, bias); }},
      {"at::gelu", [&] { at::gelu(x); }},
      {"conv2d",
       [&] {
         at::conv2d(img, at::rand({8, 8, 3, 3}, o), bias, 1, 1);
       }},
      {"depthwise conv2d",
       [&] {
         at::conv2d(img, at::rand({8, 1, 3, 3}, o), bias, 1, 1, 1, 8);
       }},
      {"batch_norm",
       [&] { at::batch_norm(img, bias, bias, bias, bias.abs(), false, 0.1, 1e-5, false); }},
      {"avg_pool2d",
       [&] {
         at::avg_pool2d(img, {2, 2});
       }},
  };
  for (const auto& [name, run] : ops) {
    try {
      run();
    } catch (const std::exception& e) {
      std::string why = e.what();
      why = why.substr(0, why.find('\n'));
      return name + " fails at " + dtype_name(dtype) + " on " + device.str() + " (" + why + ")";
    }
  }
  return "";
}

// ATTNLAB_REFUSE_PRECISION's list ("bf16", "bf16,fp16"): the precisions a test run treats
// as refused, to exercise what follows a refusal on a CPU where they run.
bool refused_by_environment(c10::ScalarType dtype) {
  const char* env = std::getenv("ATTNLAB_REFUSE_PRECISION");
  if (!env || !*env) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find("," + dtype_name(dtype) + ",") != std::string::npos;
}

}  // namespace

std::string precision_unsupported(c10::ScalarType dtype, const c10::Device& device) {
  if (dtype == c10::kFloat) return "";
  if (refused_by_environment(dtype))
    return dtype_name(dtype) + " refused on " + device.str() +
           " by ATTNLAB_REFUSE_PRECISION (a test's stand-in for a CPU that cannot run it)";
  static std::mutex mutex;
  static std::map<std::pair<int, std::string>, std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(int(dtype), device.str());
  auto it = known.find(key);
  if (it == known.end()) it = known.emplace(key, probe(dtype, device)).first;
  return it->second;
}

std::string ComputeTarget::str() const {
  return reduced() ? device.str() + " " + dtype_name(dtype) : device.str();
}

ComputeTarget select_target(const std::string& device, const std::string& dtype) {
  ComputeTarget t{select_device(device), parse_dtype(dtype)};
  // bf16 on a CPU whose LibTorch adds matrix products in bf16: fp32 accumulation instead,
  // before the probe below and any model runs (bf16_products.h says why).
  if (t.dtype == c10::kBFloat16) install_fp32_accumulating_bf16_products();
  require_precision(t.dtype, t.device);
  return t;
}

std::string precision_refusal(c10::ScalarType dtype, const c10::Device& device) {
  const std::string why = precision_unsupported(dtype, device);
  if (why.empty()) return "";
  return "--dtype " + dtype_name(dtype) + " is not supported here: " + why + "; use --dtype fp32" +
         (dtype == c10::kHalf ? " or bf16" : "") + (device.is_cpu() ? ", or a CUDA device" : "");
}

void require_precision(c10::ScalarType dtype, const c10::Device& device) {
  const std::string refusal = precision_refusal(dtype, device);
  if (!refusal.empty()) throw std::invalid_argument(refusal);
}

at::Tensor full_precision(const at::Tensor& t) {
  return t.defined() && (t.scalar_type() == c10::kBFloat16 || t.scalar_type() == c10::kHalf)
             ? t.to(c10::kFloat)
             : t;
}

}  // namespace attnlab::runtime
