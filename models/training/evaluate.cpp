// Accuracy over a dataset, in memory or streamed from files.
#include "models/training/evaluate.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <numeric>

namespace attnlab::training {

Accuracy evaluate(models::Backbone& model, const data::ImageDataset& set,
                  const data::Normalisation& norm, int64_t limit, int64_t batch,
                  const std::function<void(int64_t, int64_t)>& on_batch) {
  models::require_classes(model, "evaluation");
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

Accuracy evaluate_files(models::Backbone& model, const std::vector<data::LabelledFile>& files,
                        const image::Preprocessing& preprocessing, int64_t limit, int64_t batch,
                        const std::function<void(const std::string&, const std::string&)>& on_error,
                        const std::function<void(int64_t, int64_t, const std::string&)>& on_batch) {
  models::require_classes(model, "evaluation");
  at::NoGradGuard no_grad;
  model.eval();
  const auto n = static_cast<size_t>(
      limit > 0 ? std::min<int64_t>(limit, static_cast<int64_t>(files.size())) : files.size());
  const auto step = static_cast<size_t>(std::max<int64_t>(batch, 1));
  const auto device =
      model.parameters().empty() ? c10::Device(c10::kCPU) : model.parameters().front().device();
  std::array<int64_t, 2> shape{0, 0};  // set by the first readable image
  Accuracy acc;
  for (size_t start = 0; start < n; start += step) {
    const size_t count = std::min(step, n - start);
    const data::FileBatch b = data::load_file_batch(files, start, count, preprocessing, shape);
    for (const auto& f : b.failed)
      if (on_error) on_error(f.path, f.error);
    acc.skipped += static_cast<int64_t>(b.failed.size());
    if (b.size() > 0) {
      const at::Tensor pred = model.run(b.images.to(device)).logits.argmax(1).cpu();
      acc.correct += pred.eq(b.labels).sum().item<int64_t>();
      acc.total += b.size();
    }
    if (on_batch)
      on_batch(static_cast<int64_t>(start + count), static_cast<int64_t>(n),
               files[start + count - 1].path);
  }
  return acc;
}

}  // namespace attnlab::training
