// `attnlab infer`: run a checkpoint on the tensor `input` of a safetensors file and write
// every tensor the reference fixtures' expected files hold, under the same names
// ("logits", "out.<path>", "attn.<block>", "hifi.<block>", "lofi.<block>"; for the
// single-module archs "out.inference", "out.with_sparse_branch" / "out"; with `text_tokens`
// beside `input`, a whole CLIP's both towers: models/image_text.h), so parity with
// any reference run can be checked from the command line. The model config comes from
// --config, --preset, or the checkpoint's own safetensors metadata.
#include <ATen/ATen.h>

#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/cli/model_options.h"
#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "models/attention_module.h"
#include "models/checkpoint_loading.h"
#include "models/image_text.h"
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
  const int64_t merge = take_merge(args);
  if (!args.positionals().empty()) throw UsageError("infer takes no positional arguments");
  if (checkpoint.empty() || input_path.empty() || out_path.empty())
    throw UsageError("infer needs --checkpoint FILE --input IN.safetensors --out OUT.safetensors");

  GlobalOptions with_half = g;
  if (half) with_half.dtype = "fp16";  // the older spelling of --dtype fp16
  const runtime::ComputeTarget target = compute_target(with_half);
  models::Json config = config_for_checkpoint(checkpoint, preset, config_path, key);
  if (merge >= 0) config["tome_r"] = merge;  // make_backbone refuses it outside the ViT family
  const auto inputs = nn::read_tensor_map(input_path);
  if (!inputs.count("input")) throw std::runtime_error(input_path + " has no tensor named 'input'");
  const at::Tensor input = inputs.at("input").to(at::kFloat);
  const std::string arch = models::get_string(config, "arch", "model", "");

  std::map<std::string, at::Tensor> outputs;
  if (models::is_attention_module_arch(arch)) {
    if (merge >= 0) throw UsageError("--merge is for a ViT-family model, not the module " + arch);
    outputs = models::run_attention_module(config,
                                           models::read_checkpoint_weights(checkpoint, key).tensors,
                                           input.to(target.device, target.dtype));
  } else {
    auto model = models::load_model(config, checkpoint, key).model;
    model->to(target.device);
    model->set_precision(target.dtype);
    at::NoGradGuard no_grad;
    if (inputs.count("text_tokens")) {
      // A whole CLIP: both towers and the image–text logits under the fixture's names.
      if (!models::image_text_model(*model))
        throw UsageError(input_path + " has text_tokens, but " + arch +
                         " reads images only (text needs a whole CLIP, arch clip_full)");
      outputs = models::run_image_text(*model, input.to(target.device), inputs.at("text_tokens"));
      outputs["text_tokens"] = inputs.at("text_tokens");  // as given, as the fixtures keep them
    } else {
      models::ForwardOptions options;
      options.record_outputs = true;
      models::ForwardResult r = model->run(input.to(target.device), options);
      outputs = std::move(r.outputs);
      outputs["logits"] = r.logits;
    }
  }

  io::TensorDict dict;
  // Floating outputs as float32 (what the fixtures hold, whatever --dtype ran); integer ones
  // (ToMe's token counts, BiFormer's routed regions) keep their type.
  for (const auto& [name, t] : outputs)
    dict.add(name, io::from_torch(t.is_floating_point() ? t.to(at::kCPU, at::kFloat) : t.cpu()));
  io::write_safetensors(out_path, dict, models::config_to_metadata(config));
  std::printf("%s: %s, %zu tensors written to %s\n", checkpoint.c_str(), arch.c_str(), dict.size(),
              out_path.c_str());
  return kExitOk;
}

}  // namespace attnlab::cli
