// The interface every vision backbone implements (ViT/DeiT, AnchorDeiT, Castling-DeiT,
// LITv2, RAVLT): images in, logits out, and on request everything the analyses and the
// parity checks need — each attention layer's trace with its token layout, and the
// intermediate outputs under the names the reference fixtures use:
//   "logits"                      the model output (eval)
//   "out.<state-dict path>"       the output of the module at that path: patch_embed,
//                                 every block, stage (layers.i), downsample, attention
//                                 module (…attn), the final norm
//   "attn.<block path>"           softmax probabilities (B, h, N, N) of a softmax block
//   "hifi.<block path>", "lofi.<block path>"  HiLo branch outputs (B, H, W, C')
// Tensors keep the reference layout of their module (RAVLT: NCHW; the others B×N×C).
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/attention_trace.h"
#include "core/attention/mechanism.h"

namespace attnlab::models {

// A block's input as it entered the block; height and width are the token grid of the
// hierarchical families' B×N×C tokens (0 where the tensor carries its grid: ViT, NCHW).
struct BlockInput {
  std::string block;  // state-dict path, "blocks.5", "layers.2.blocks.1"
  at::Tensor input;
  int64_t height = 0, width = 0;
};

struct ForwardOptions {
  bool trace_attention = false;   // keep every attention layer's AttentionTrace
  attention::TraceOptions trace;  // passed to each traced layer
  bool record_outputs = false;    // fill ForwardResult::outputs ("out.*", "attn.*", ...)
  // With record_outputs, also each attention layer's fixture-style outputs ("attn.<block>":
  // softmax's whole N×N matrices, "hifi."/"lofi." branches), which `infer` and the parity
  // tests compare. The session reads only "out.*" and the traces, so it turns them off:
  // materialising every head's matrix cost it 14 ms of deit_small's 73 ms forward (issue 51).
  bool record_attention_outputs = true;
  // Only every block's output ("out.<block>"): what reading the blocks out needs
  // (models/lens_run.h), without the attention maps and traced forwards record_outputs keeps.
  bool record_block_outputs = false;
  // Class-specific explanations (Grad-CAM): the module output to take gradients at, by its
  // state-dict path ("blocks.11.norm1", "blocks.3", "layers.3"); "" for none.
  std::string gradient_target;
  at::Tensor target_offset;  // added to that output when defined (finite-difference checks)
  // The target stays in the graph (ForwardResult::target is the output itself, not a cut
  // copy): gradients of it with respect to the input (effective receptive field).
  bool target_in_graph = false;
  // Keep each block's input (ForwardResult::block_inputs), for resumed forwards.
  bool record_block_inputs = false;
  // Resume part-way: the blocks before this one are skipped (with the stem and the
  // downsamplings between them) and the forward starts at `resume->block` from its
  // recorded input. Head ablation reruns only the blocks from the ablated one on.
  const BlockInput* resume = nullptr;
};

// What a forward's `logits` hold: class scores (a classifier head), or an embedding (a
// backbone released without a classifier: DINO, DINOv2, CLIP's image tower). An embedding
// has no classes to rank, explain or evaluate.
enum class OutputKind { classes, embedding };

struct LayerTrace {
  std::string path;  // state-dict path of the attention module, e.g. "blocks.3.attn"
  std::shared_ptr<const attention::AttentionTrace> trace;  // its layout says stage, H, W
};

struct ForwardResult {
  at::Tensor logits;  // (B, classes), or (B, dims) of an embedding: see output_kind
  OutputKind output_kind = OutputKind::classes;
  std::vector<LayerTrace> traces;             // in forward order
  std::map<std::string, at::Tensor> outputs;  // fixture-style names, see above
  // With ForwardOptions::gradient_target: that module's output as the forward went on
  // from it (a leaf that requires grad unless target_in_graph, in the module's own layout: B×N×C
  // with prefix tokens first, or NCHW for RAVLT); undefined when no module has that path.
  at::Tensor target;
  std::vector<BlockInput> block_inputs;  // with ForwardOptions::record_block_inputs, in order
};

// Bad model configuration (unknown arch, inconsistent sizes, ...).
struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Backbone : public torch::nn::Module {
 public:
  virtual ~Backbone() = default;
  // images: (B, 3, H, W), normalised as the model's preprocessing says, on the model's
  // device. The one place a forward's precision is set: `images` are cast to dtype()
  // here, so every activation, trace and output is at the model's precision.
  ForwardResult run(const at::Tensor& images, const ForwardOptions& options = {});
  // The precision of the floating-point weights, and so of the forward: that of the first
  // floating-point parameter (set_precision, or a test's Module::to(kDouble)); fp32 for a
  // model without one, whose input run() then leaves as it is.
  c10::ScalarType dtype() const;
  // Casts every floating-point parameter and buffer to `dtype` (integer buffers, such as
  // relative-position indices, stay as they are, unlike Module::to(dtype)). A precision
  // this LibTorch cannot run on the model's device is refused first, with
  // std::invalid_argument(runtime::precision_refusal(...)), and the model stays as it was.
  void set_precision(c10::ScalarType dtype);
  virtual std::string arch() const = 0;
  // Class scores unless the model is a backbone with no classifier (ForwardResult::logits
  // is then its embedding); run() copies it into ForwardResult::output_kind.
  virtual OutputKind output_kind() const { return OutputKind::classes; }
  // What the model's classifier reads of a block's output, for reading every block out as
  // if it were the last (models/lens_run.h: the logit lens and the linear probes). `tokens`
  // is a recorded block output ("out.<block>": B×N×C with prefix tokens first, or NCHW).
  // readout_features: the tokens the head pools, before the final norm: the class token
  // (B, C), the class and distillation tokens side by side (B, 2C), or the mean of the grid
  // tokens (B, C). readout_logits: the model's own tail on them — final norm, pooling and
  // head, with a distilled model's two heads averaged as its eval forward does — so the
  // last block's output gives the model's logits. Both throw ModelError where the family
  // does not implement them, and readout_logits also for a model without a classifier
  // (an embedding) and for an output of another width than the final norm's (an earlier
  // stage of a hierarchical model).
  virtual at::Tensor readout_features(const at::Tensor& tokens) const;
  virtual at::Tensor readout_logits(const at::Tensor& tokens) const;
  // Each stage's token layout and channel count for (height × width) images: one entry
  // for a plain ViT, one per stage for the hierarchical families, whose stage i modules
  // live under "layers.i" (the reference state-dict layout). The forward's memory estimate
  // reads it (models/memory_estimate.h); empty: only the weights and input are counted.
  struct StageShape {
    attention::TokenLayout layout;
    int64_t channels = 0;
  };
  virtual std::vector<StageShape> stage_shapes(int64_t height, int64_t width) const {
    (void)height, (void)width;
    return {};
  }
  // The config it was built from, as JSON text (make_backbone records it; "" for a model
  // made otherwise): what rebuilding it takes, e.g. the randomisation check's copies with
  // fresh weights (models/faithfulness_run.h). Text, so that this header does not pull in
  // the JSON library.
  const std::string& config_text() const { return config_text_; }
  void set_config_text(std::string text) { config_text_ = std::move(text); }

 protected:
  // The backbone's forward, its `images` already at dtype().
  virtual ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) = 0;

 private:
  std::string config_text_;
};

// Throws ModelError naming `what` (a command or analysis: "classify", "grad-cam") when the
// model's output is an embedding: there is no class to rank, explain or evaluate.
void require_classes(const Backbone& model, const std::string& what);
// The same refusal as a sentence (a skipped analysis, a GUI note): `dims` the embedding's
// size when known (> 0), `arch` the model's arch when known.
std::string embedding_output_note(const std::string& what, int64_t dims = 0,
                                  const std::string& arch = "");

// Casts every floating-point parameter and buffer of `module` to `dtype`, leaving integer
// ones (indices) as they are; Module::to(dtype) would cast those too.
void cast_floating(torch::nn::Module& module, c10::ScalarType dtype);

// Records outputs and traces during one forward; backbones call it at each module.
class ForwardRecorder {
 public:
  ForwardRecorder(const ForwardOptions& options, ForwardResult& result)
      : options_(options), result_(result), skipping_(options.resume != nullptr) {}
  bool tracing() const { return options_.trace_attention; }
  bool recording() const { return options_.record_outputs; }
  const attention::TraceOptions& trace_options() const { return options_.trace; }
  // Stores `t` (detached) under "<kind>.<path>" when recording (with record_block_outputs
  // alone: the output of the block entered last).
  void output(const std::string& kind, const std::string& path, const at::Tensor& t) {
    if (skipping_) return;
    if (recording() || (options_.record_block_outputs && kind == "out" && path == block_))
      result_.outputs[kind + "." + path] = t.detach();
  }
  // The forward continues with what this returns: `t`, or at the module named by
  // gradient_target a copy cut from the graph that requires grad, so that gradients of
  // the logits with respect to that activation can be taken (ForwardResult::target).
  at::Tensor tap(const std::string& path, const at::Tensor& t) {
    if (options_.gradient_target.empty() || path != options_.gradient_target) return t;
    if (options_.target_in_graph) return result_.target = t;
    at::Tensor leaf = t.detach();
    if (options_.target_offset.defined()) leaf = leaf + options_.target_offset.to(leaf.options());
    result_.target = leaf.requires_grad_(true);
    return result_.target;
  }
  // True while a resumed forward has not reached its resume block: the backbone skips
  // what it would compute (stem, blocks, downsamplings).
  bool skipping() const { return skipping_; }
  // At each block's entry, with the block's input `x` (and, for B×N×C tokens on a grid,
  // the grid): false when the block is to be skipped; at the resume block, `x` and the
  // grid become the recorded input. Records the input with record_block_inputs.
  bool enter_block(const std::string& path, at::Tensor& x, int64_t* height = nullptr,
                   int64_t* width = nullptr);
  // After the last block: throws when a resumed forward never met its resume block.
  void check_resumed() const;
  void trace(const std::string& path, std::shared_ptr<const attention::AttentionTrace> t) {
    if (tracing()) result_.traces.push_back({path, std::move(t)});
  }
  // Runs an attention module at `path`, traced when tracing or when its probabilities /
  // branch outputs must be recorded; returns its output.
  at::Tensor attend(attention::AttentionMechanism& attn, const std::string& path,
                    const at::Tensor& tokens, const attention::TokenLayout& layout);

 private:
  const ForwardOptions& options_;
  ForwardResult& result_;
  bool skipping_;
  std::string block_;  // the block entered last (enter_block)
};

}  // namespace attnlab::models
