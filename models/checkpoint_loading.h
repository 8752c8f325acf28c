// Reading a checkpoint's weights for a model: unwrap the container ('model' → 'model_ema'
// → 'state_dict' → flat, or the key the user names), strip 'module.', drop
// num_batches_tracked (core/io/state_dict), convert to at::Tensor with half and bfloat16
// weights widened to float32, rename a transformers ViT/DeiT to timm's keys (hf_layout.h);
// then load strictly (nn::load_state lists every missing,
// unexpected and mis-shaped key in one error).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/nn/state_loading.h"

namespace attnlab::io {
struct TensorFile;
}

namespace torch::nn {
class Module;
}

namespace attnlab::models {

struct CheckpointWeights {
  std::string path;
  std::string source_key;          // container key the weights came from ("" = flat file)
  std::string architecture;        // family recognised from the key names (checkpoint_summary)
  std::string layout;              // "transformers" when renamed from that layout (hf_layout.h),
                                   // "clip" for a whole CLIP model's image tower (clip_layout.h),
                                   // "dino_training" for a DINO training network's backbone
  std::vector<std::string> notes;  // what the reader did that the user should know
  nn::TensorMap tensors;
};

CheckpointWeights read_checkpoint_weights(const std::string& path, const std::string& key = "");
// The same from a file already parsed (io::read_tensor_file of `file.path`), which it takes.
CheckpointWeights read_checkpoint_weights(io::TensorFile&& file, const std::string& key = "");

// read_checkpoint_weights + strict nn::load_state; the error message names the file and,
// when the keys look like another family than the model's, says so first.
void load_checkpoint(torch::nn::Module& model, const std::string& path,
                     const std::string& key = "");

class Backbone;

// A model ready to run: the config fitted to the checkpoint where a family's config
// leaves something to the weights (LITv2's Lo-Fi head split, so α-ablation checkpoints
// load), built, loaded strictly, in eval mode.
struct LoadedModel {
  std::shared_ptr<Backbone> model;
  nlohmann::json config;           // as fitted
  CheckpointWeights weights_info;  // path, container key, recognised family (no tensors)
};
LoadedModel load_model(nlohmann::json config, const std::string& path, const std::string& key = "");
// The same from weights already read (read_checkpoint_weights), without reading the file.
LoadedModel load_model(nlohmann::json config, CheckpointWeights weights);

}  // namespace attnlab::models
