// The forward's peak-memory estimate and the budget check; see memory_estimate.h.
#include "models/memory_estimate.h"

#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "core/attention/capabilities.h"
#include "core/attention/registry.h"
#include "core/runtime/memory_budget.h"

namespace attnlab::models {
namespace {

using runtime::format_bytes;

// Activations of one block (and the stem before it) per token and channel: qkv 3C, the
// MLP's hidden (up to 4C) before and after its activation, the residual stream, norms,
// a convolution's unfolded input. Calibrated on the measured peaks of the five families
// (tests/models/memory_estimate_test.cpp), which it bounds.
constexpr double kActivationsPerTokenChannel = 24.0;

// Stage i's modules live under "layers.i." (stage_shapes); the rest are stage 0.
size_t stage_of(const std::string& path) {
  const std::string prefix = "layers.";
  if (path.compare(0, prefix.size(), prefix) != 0) return 0;
  return static_cast<size_t>(std::strtoul(path.c_str() + prefix.size(), nullptr, 10));
}

double tensor_bytes(const std::vector<at::Tensor>& tensors) {
  double bytes = 0;
  for (const auto& t : tensors)
    if (t.defined())
      bytes += static_cast<double>(t.numel()) * static_cast<double>(t.element_size());
  return bytes;
}

}  // namespace

std::string ForwardMemory::describe() const {
  std::string s = "weights " + format_bytes(weights) + ", input " + format_bytes(input) +
                  ", kept across layers " + format_bytes(kept);
  if (!largest_layer.empty())
    s += ", largest layer " + largest_layer + " " + format_bytes(transient) + " (" +
         format_bytes(largest_scores) + " of attention scores)";
  return s;
}

ForwardMemory estimate_forward_memory(const Backbone& model, int64_t batch, int64_t height,
                                      int64_t width, const ForwardOptions& options) {
  ForwardMemory m;
  m.weights = tensor_bytes(model.parameters()) + tensor_bytes(model.buffers());
  const double element = static_cast<double>(c10::elementSize(model.dtype()));
  const double b = static_cast<double>(batch);
  // The images, and once more as the stem's unfolded copy (a patch convolution's input).
  m.input = 2.0 * b * 3.0 * static_cast<double>(height) * static_cast<double>(width) * element;
  const std::vector<Backbone::StageShape> stages = model.stage_shapes(height, width);
  if (stages.empty()) return m;
  // Each stage's blocks, with or without attention (LITv2's first stages have none).
  for (const auto& s : stages) {
    const double blocks = kActivationsPerTokenChannel * b * static_cast<double>(s.layout.tokens()) *
                          static_cast<double>(s.channels) * element;
    if (blocks > m.transient) {
      m.transient = blocks;
      m.largest_scores = 0;
      m.largest_layer = "the blocks on the " + s.layout.describe();
    }
  }
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    const std::string& path = item.key();
    const auto* attn = dynamic_cast<const attention::AttentionMechanism*>(item.value().get());
    if (!attn) continue;
    const attention::TokenLayout& layout =
        stages[std::min(stage_of(path), stages.size() - 1)].layout;
    const attention::MechanismConfig& config = attn->config();
    const attention::MechanismInfo* info = attention::find_mechanism(attn->mechanism_name());
    const double n = static_cast<double>(layout.tokens()), c = static_cast<double>(config.dim);
    const double full = static_cast<double>(config.heads) * n * n;  // every head's N×N
    const double scores = info ? attention::score_elements(*info, config, layout) : full;
    const double transient = (kActivationsPerTokenChannel * b * n * c + 2.0 * b * scores) * element;
    double kept = 0;
    if (options.trace_attention) {
      kept += 4.0 * b * n * c;
      if (options.trace.keep_scores && info &&
          std::count(info->capabilities.begin(), info->capabilities.end(),
                     std::string(attention::capability::kAuxiliaryMask)))
        kept += b * full;
      if (options.trace.explicit_attention) kept += b * full;
    }
    if (options.record_outputs)
      kept +=
          3.0 * b * n * c +
          (options.record_attention_outputs && info && !info->linear_in_tokens ? b * scores : 0);
    else if (options.record_block_outputs)
      kept += b * n * c;  // the block's output alone
    m.kept += kept * element;
    if (transient > m.transient) {
      m.transient = transient;
      m.largest_scores = 2.0 * b * scores * element;
      m.largest_layer = path + " (" + layout.describe() + ", " + attn->mechanism_name() + ")";
    }
  }
  return m;
}

void check_forward_memory(const Backbone& model, const at::Tensor& images,
                          const ForwardOptions& options) {
  if (images.dim() != 4) return;  // the family's own check names the shape
  const runtime::MemoryBudget budget = runtime::memory_budget();
  if (!budget.limited() || images.is_meta()) return;
  if (!images.is_cpu() && !budget.set) return;  // the default is a share of RAM
  const ForwardMemory m =
      estimate_forward_memory(model, images.size(0), images.size(2), images.size(3), options);
  if (m.total() <= static_cast<double>(budget.bytes)) return;
  const std::string images_text =
      std::to_string(images.size(0)) + (images.size(0) == 1 ? " image" : " images") + " of " +
      std::to_string(images.size(3)) + "×" + std::to_string(images.size(2));
  throw MemoryBudgetError(
      model.arch() + " on " + images_text + " would need about " + format_bytes(m.total()) + " (" +
      m.describe() + "), over the memory budget of " +
      format_bytes(static_cast<double>(budget.bytes)) + " (" + budget.origin +
      "). Use a smaller input size (--img-size), fewer images at once, or a mechanism linear "
      "in tokens; or change the budget with --max-memory SIZE (off: no limit)");
}

}  // namespace attnlab::models
