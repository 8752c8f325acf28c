// Accuracy over a dataset.
#include "models/training/evaluate.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

namespace attnlab::training {

Accuracy evaluate(models::Backbone& model, const data::ImageDataset& set,
                  const data::Normalisation& norm, int64_t limit, int64_t batch,
                  const std::function<void(int64_t, int64_t)>& on_batch) {
  at::NoGradGuard no_grad;
  model.eval();
  const int64_t n = limit > 0 ? std::min(limit, set.size()) : set.size();
  const auto device =
      model.parameters().empty() ? c10::Device(c10::kCPU) : model.parameters().front().device();
  Accuracy acc;
  for (int64_t start = 0; start < n; start += batch) {
    std::vector<int64_t> indices(static_cast<size_t>(std::min(batch, n - start)));
    std::iota(indices.begin(), indices.end(), start);
    const at::Tensor x = data::make_batch(set, indices, norm, nullptr, 0).to(device);
    const at::Tensor pred = model.run(x).logits.argmax(1).cpu();
    acc.correct += pred.eq(data::batch_labels(set, indices)).sum().item<int64_t>();
    acc.total += static_cast<int64_t>(indices.size());
    if (on_batch) on_batch(acc.total, n);
  }
  return acc;
}

}  // namespace attnlab::training
