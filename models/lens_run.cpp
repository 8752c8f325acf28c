// See lens_run.h.
#include "models/lens_run.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <set>

namespace attnlab::models {
namespace {

const at::Tensor& block_output(const ForwardResult& result, const std::string& block) {
  const auto it = result.outputs.find("out." + block);
  if (it == result.outputs.end())
    throw ModelError("no recorded output of block " + block +
                     " (run the forward with record_block_outputs or record_outputs)");
  return it->second;
}

// The channel count of a block output: B×N×C tokens or NCHW (RAVLT).
int64_t width_of(const at::Tensor& output) {
  return output.dim() == 4 ? output.size(1) : output.size(-1);
}

// The stage a block belongs to: "layers.2" of "layers.2.blocks.1", "" for an isotropic
// model's "blocks.5" (one stage).
std::string stage_of_block(const std::string& block) {
  const size_t at = block.find(".blocks.");
  return at == std::string::npos ? "" : block.substr(0, at);
}

}  // namespace

ForwardOptions lens_forward_options() {
  ForwardOptions o;
  o.record_block_outputs = true;
  o.record_block_inputs = true;
  return o;
}

std::vector<std::string> forward_blocks(const ForwardResult& result) {
  std::vector<std::string> blocks;
  for (const auto& in : result.block_inputs) blocks.push_back(in.block);
  if (blocks.empty()) {
    // "blocks.3.attn" -> "blocks.3"; a block seen twice (two traced modules) once.
    std::set<std::string> seen;
    for (const auto& t : result.traces) {
      const size_t dot = t.path.rfind('.');
      const std::string block = dot == std::string::npos ? t.path : t.path.substr(0, dot);
      if (seen.insert(block).second) blocks.push_back(block);
    }
  }
  if (blocks.empty())
    throw ModelError(
        "the forward recorded no blocks (run it with lens_forward_options(), or "
        "with traces and record_outputs)");
  for (const auto& b : blocks) block_output(result, b);  // each has its output
  return blocks;
}

LensLogits lens_logits(Backbone& model, const ForwardResult& result, int64_t b) {
  require_classes(model, "the logit lens");
  const std::vector<std::string> blocks = forward_blocks(result);
  const at::Tensor& last = block_output(result, blocks.back());
  if (b < 0 || b >= last.size(0))
    throw ModelError("the logit lens: image " + std::to_string(b) + " is outside the batch of " +
                     std::to_string(last.size(0)));
  // The tail reads the last stage: a hierarchical model's earlier stages are followed by a
  // downsampling (a new basis, and mostly another width: RAVLT's stages 3 and 4 share one),
  // which a readout would skip.
  const int64_t width = width_of(last);
  const std::string stage = stage_of_block(blocks.back());
  LensLogits out;
  out.total_blocks = int64_t(blocks.size());
  std::vector<at::Tensor> rows;
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const at::Tensor& o = block_output(result, blocks[i]);
    if (stage_of_block(blocks[i]) != stage || width_of(o) != width) {
      out.skipped.push_back(blocks[i] + " (width " + std::to_string(width_of(o)) +
                            ", before the downsampling to " + stage + ")");
      continue;
    }
    rows.push_back(model.readout_logits(o.slice(0, b, b + 1)).select(0, 0).to(at::kCPU));
    out.blocks.push_back(blocks[i]);
    out.depth.push_back(int64_t(i));
  }
  out.logits = at::stack(rows);
  // The last block read out is the forward's own tail on the same tensor: anything beyond
  // rounding means the family's readout is not its forward's.
  const at::Tensor own = result.logits[b].detach().to(at::kCPU, at::kDouble);
  const double scale = std::max(own.abs().max().item<double>(), 1e-30);
  const double gap = (out.logits[-1].to(at::kDouble) - own).abs().max().item<double>();
  if (!(gap <= 1e-2 * scale))
    throw ModelError("the logit lens: " + model.arch() + "'s last block, read out, is " +
                     std::to_string(gap) + " from its logits (largest " + std::to_string(scale) +
                     "): its readout is not its forward's tail");
  return out;
}

std::vector<BlockFeatures> block_readout_features(Backbone& model, const ForwardResult& result) {
  const std::vector<std::string> blocks = forward_blocks(result);
  std::vector<BlockFeatures> out;
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < blocks.size(); ++i)
    out.push_back({blocks[i], int64_t(i),
                   model.readout_features(block_output(result, blocks[i]))
                       .detach()
                       .to(at::kCPU, at::kDouble)});
  return out;
}

}  // namespace attnlab::models
