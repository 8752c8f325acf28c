// `attnlab infer`: run a checkpoint on the tensor `input` of a safetensors file and write
// every tensor the reference fixtures' expected files hold, under the same names
// ("logits", "out.<path>", "attn.<block>", "hifi.<block>", "lofi.<block>"; for the
// single-module archs "out.inference", "out.with_sparse_branch" / "out"), so parity with
// any reference run can be checked from the command line. The model config comes from
// --config, --preset, or the checkpoint's own safetensors metadata.
#include <ATen/ATen.h>

#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/cli/model_options.h"
#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "core/runtime/device.h"
#include "models/attention_module.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "models/model_registry.h"

namespace attnlab::cli {
int cmd_infer(Args args, const GlobalOptions& g) {
  const std::string checkpoint = args.take_option("--checkpoint");
  const std::string config_path = args.take_option("--config");
  const std::string preset = args.take_option("--preset");
  const std::string key = args.take_option("--key");
  const std::string input_path = args.take_option("--input");
  const std::string out_path = args.take_option("--out");
  const bool half = args.take_flag("--half");
  if (!args.positionals().empty()) throw UsageError("infer takes no positional arguments");
  if (checkpoint.empty() || input_path.empty() || out_path.empty())
    throw UsageError("infer needs --checkpoint FILE --input IN.safetensors --out OUT.safetensors");

  if (half && !runtime::select_device(g.device).is_cuda())
    throw UsageError("--half keeps half-precision weights on a CUDA device; this run is on " +
                     runtime::select_device(g.device).str());
  const models::Json config = config_for_checkpoint(checkpoint, preset, config_path, key);
  const auto inputs = nn::read_tensor_map(input_path);
  if (!inputs.count("input")) throw std::runtime_error(input_path + " has no tensor named 'input'");
  const at::Tensor input = inputs.at("input").to(at::kFloat);
  const std::string arch = models::get_string(config, "arch", "model", "");

  std::map<std::string, at::Tensor> outputs;
  const c10::Device device = runtime::select_device(g.device);
  if (models::is_attention_module_arch(arch)) {
    outputs = models::run_attention_module(
        config, models::read_checkpoint_weights(checkpoint, key).tensors, input.to(device));
  } else {
    auto model = models::load_model(config, checkpoint, key).model;
    model->to(device);
    if (half) model->to(at::kHalf);
    at::NoGradGuard no_grad;
    models::ForwardOptions options;
    options.record_outputs = true;
    models::ForwardResult r = model->run(input.to(device, half ? at::kHalf : at::kFloat), options);
    outputs = std::move(r.outputs);
    outputs["logits"] = r.logits;
  }

  io::TensorDict dict;
  for (const auto& [name, t] : outputs) dict.add(name, io::from_torch(t.to(at::kCPU, at::kFloat)));
  io::write_safetensors(out_path, dict, models::config_to_metadata(config));
  std::printf("%s: %s, %zu tensors written to %s\n", checkpoint.c_str(), arch.c_str(), dict.size(),
              out_path.c_str());
  return kExitOk;
}

}  // namespace attnlab::cli
