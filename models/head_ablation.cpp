// See head_ablation.h.
#include "models/head_ablation.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <limits>
#include <map>

#include "core/attention/mechanism.h"

namespace attnlab::models {
namespace {

// Zeroes one head's projection channels for its lifetime (restored on destruction, also
// when the forward in between throws).
class ZeroedHead {
 public:
  ZeroedHead(const std::map<std::string, at::Tensor>& params, const AblatableLayer& layer,
             const attention::HeadColumns& head) {
    const auto it = params.find(layer.path + "." + head.parameter);
    if (it == params.end())
      throw ModelError("head ablation: " + layer.path + " (" + layer.mechanism +
                       ") has no parameter '" + head.parameter + "'");
    const at::Tensor& w = it->second;
    if (w.dim() < 2 || head.first < 0 || head.first + head.count > w.size(1))
      throw ModelError("head ablation: channels " + std::to_string(head.first) + ".." +
                       std::to_string(head.first + head.count) + " lie outside " + layer.path +
                       "." + head.parameter);
    slice_ = w.narrow(1, head.first, head.count);
    saved_ = slice_.clone();
    slice_.zero_();
  }
  ~ZeroedHead() { slice_.copy_(saved_); }
  ZeroedHead(const ZeroedHead&) = delete;
  ZeroedHead& operator=(const ZeroedHead&) = delete;

 private:
  at::Tensor slice_, saved_;
};

struct Outcome {
  at::Tensor probability, loss, correct, predicted;
};

Outcome outcome(const at::Tensor& logits, const at::Tensor& predicted, const at::Tensor& labels) {
  const at::Tensor logp = logits.to(at::kDouble).log_softmax(-1);
  Outcome o;
  o.predicted = logits.argmax(-1);
  o.probability = logp.gather(1, predicted.unsqueeze(1)).squeeze(1).exp();
  if (labels.defined()) {
    const at::Tensor l = labels.to(logits.device(), at::kLong);
    o.loss = -logp.gather(1, l.unsqueeze(1)).squeeze(1);
    o.correct = o.predicted.eq(l).to(at::kDouble);
  } else {
    o.loss = o.correct =
        at::full({logits.size(0)}, std::numeric_limits<double>::quiet_NaN(), logp.options());
  }
  return o;
}

// The block holding the attention module at `path` ("blocks.5" for "blocks.5.attn"): the
// longest recorded block path that prefixes it; null when none does.
const BlockInput* enclosing_block(const std::vector<BlockInput>& inputs, const std::string& path) {
  const BlockInput* found = nullptr;
  for (const auto& in : inputs)
    if (path.compare(0, in.block.size() + 1, in.block + ".") == 0 &&
        (!found || in.block.size() > found->block.size()))
      found = &in;
  return found;
}

}  // namespace

int64_t AblationPlan::heads() const {
  int64_t n = 0;
  for (const auto& l : layers) n += int64_t(l.heads.size());
  return n;
}

AblationPlan plan_head_ablation(Backbone& model) {
  AblationPlan plan;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    const auto* mech = dynamic_cast<const attention::AttentionMechanism*>(item.value().get());
    if (!mech) continue;
    const auto* source = dynamic_cast<const attention::HeadOutputSource*>(mech);
    std::vector<attention::HeadColumns> heads;
    if (source) heads = source->head_columns();
    if (heads.empty())
      plan.unsupported.push_back(item.key() + " (" + mech->mechanism_name() + ")");
    else
      plan.layers.push_back({item.key(), mech->mechanism_name(), std::move(heads)});
  }
  return plan;
}

HeadAblationBatch ablate_heads(Backbone& model, const AblationPlan& plan, const at::Tensor& images,
                               const at::Tensor& labels,
                               const std::function<void(int64_t, int64_t)>& on_head, bool resume) {
  require_classes(model, "head importance");
  if (plan.layers.empty())
    throw ModelError(
        "head ablation: " + model.arch() + " has no attention layer whose heads " +
        "can be switched off one at a time" +
        (plan.unsupported.empty() ? std::string() : " (" + plan.unsupported.front() + ", ...)"));
  if (labels.defined() && (labels.dim() != 1 || labels.size(0) != images.size(0)))
    throw ModelError("head ablation: one label per image is needed");
  const at::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> params;
  for (const auto& p : model.named_parameters()) params[p.key()] = p.value();

  HeadAblationBatch out;
  // The unablated forward keeps each block's input, so that each ablated forward starts
  // at the ablated layer's block (the blocks before it see the same input either way);
  // on average this halves the work of a plain ViT.
  ForwardOptions record;
  record.record_block_inputs = true;
  const ForwardResult base_run = model.run(images, record);
  const at::Tensor& base_logits = base_run.logits;
  const at::Tensor predicted = base_logits.argmax(-1);
  const Outcome base = outcome(base_logits, predicted, labels);
  out.predicted = predicted.cpu();
  out.probability = base.probability.cpu();
  out.loss = base.loss.cpu();
  out.correct = base.correct.cpu();

  int64_t max_heads = 0;
  for (const auto& l : plan.layers)
    max_heads = std::max<int64_t>(max_heads, int64_t(l.heads.size()));
  const int64_t layers = int64_t(plan.layers.size()), batch = images.size(0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.ablated_probability = at::full({layers, max_heads, batch}, nan, at::kDouble);
  out.ablated_loss = out.ablated_probability.clone();
  out.ablated_correct = out.ablated_probability.clone();
  out.ablated_top1_kept = out.ablated_probability.clone();
  int64_t done = 0;
  const int64_t total = plan.heads();
  for (int64_t l = 0; l < layers; ++l) {
    const AblatableLayer& layer = plan.layers[size_t(l)];
    ForwardOptions resumed;
    if (resume) resumed.resume = enclosing_block(base_run.block_inputs, layer.path);
    for (size_t h = 0; h < layer.heads.size(); ++h) {
      at::Tensor logits;
      {
        const ZeroedHead off(params, layer, layer.heads[h]);
        logits = model.run(images, resumed).logits;
      }
      const Outcome o = outcome(logits, predicted, labels);
      out.ablated_probability[l][int64_t(h)] = o.probability.cpu();
      out.ablated_loss[l][int64_t(h)] = o.loss.cpu();
      out.ablated_correct[l][int64_t(h)] = o.correct.cpu();
      out.ablated_top1_kept[l][int64_t(h)] = o.predicted.eq(predicted).to(at::kDouble).cpu();
      if (on_head) on_head(++done, total);
    }
  }
  return out;
}

}  // namespace attnlab::models
