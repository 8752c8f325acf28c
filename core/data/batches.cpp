// Epoch order, augmentation and normalisation of training batches.
#include "core/data/batches.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "core/io/image_io.h"

namespace attnlab::data {

uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 rng(mix_seed(seed, static_cast<uint64_t>(epoch)));
  // Fisher–Yates with our own index draw: std::shuffle's draws are library-specific.
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

at::Tensor make_batch(const ImageDataset& set, const std::vector<int64_t>& indices,
                      const Normalisation& norm, const Augmentation* augment,
                      uint64_t augment_seed) {
  at::Tensor idx = at::tensor(indices, at::kLong);
  at::Tensor px = set.images.index_select(0, idx);  // (B, C, H, W) uint8
  if (augment && (augment->max_shift > 0 || augment->hflip)) {
    const int64_t s = augment->max_shift, h = px.size(2), w = px.size(3);
    at::Tensor padded = s > 0 ? at::constant_pad_nd(px, {s, s, s, s}, 0) : px;
    std::mt19937_64 rng(augment_seed);
    std::vector<at::Tensor> out;
    out.reserve(indices.size());
    for (int64_t b = 0; b < px.size(0); ++b) {
      const auto span = static_cast<uint64_t>(2 * s + 1);
      const auto dy = static_cast<int64_t>(rng() % span), dx = static_cast<int64_t>(rng() % span);
      const bool flip = augment->hflip && (rng() & 1u);
      at::Tensor img = padded[b].slice(1, dy, dy + h).slice(2, dx, dx + w);
      out.push_back(flip ? img.flip({2}) : img);
    }
    px = at::stack(out);
  }
  at::Tensor x = px.to(at::kFloat).div_(255.0);
  if (x.size(1) == 1) x = x.expand({-1, 3, -1, -1});
  at::Tensor mean = at::tensor({norm.mean[0], norm.mean[1], norm.mean[2]}).view({1, 3, 1, 1});
  at::Tensor sd = at::tensor({norm.std[0], norm.std[1], norm.std[2]}).view({1, 3, 1, 1});
  return ((x - mean) / sd).contiguous();
}

at::Tensor batch_labels(const ImageDataset& set, const std::vector<int64_t>& indices) {
  return set.labels.index_select(0, at::tensor(indices, at::kLong));
}

FileBatch load_file_batch(const std::vector<LabelledFile>& files, size_t start, size_t count,
                          const image::Preprocessing& p, std::array<int64_t, 2>& shape) {
  FileBatch batch;
  std::vector<at::Tensor> images;
  std::vector<int64_t> labels;
  const size_t end = std::min(files.size(), start + count);
  for (size_t i = start; i < end; ++i) {
    const LabelledFile& f = files[i];
    try {
      at::Tensor x = image::preprocess(io::load_rgb_image(f.path), p);  // (1, 3, H, W)
      if (shape[0] == 0) shape = {x.size(2), x.size(3)};
      if (x.size(2) != shape[0] || x.size(3) != shape[1])
        throw std::runtime_error("preprocessed to " + std::to_string(x.size(3)) + "×" +
                                 std::to_string(x.size(2)) + ", the other images to " +
                                 std::to_string(shape[1]) + "×" + std::to_string(shape[0]) +
                                 " (the preprocessing has no crop)");
      images.push_back(std::move(x));
      labels.push_back(f.label);
    } catch (const std::exception& e) {
      batch.failed.push_back({f.path, e.what()});
    }
  }
  if (!images.empty()) {
    batch.images = at::cat(images);
    batch.labels = at::tensor(labels, at::kLong);
  }
  return batch;
}

}  // namespace attnlab::data
