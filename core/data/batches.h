// Turning dataset pixels into model input: a reproducible epoch order, light
// augmentation (random shift with zero fill, horizontal flip) and normalisation to the
// float (B, 3, H, W) a backbone takes (grey images are repeated over the three channels,
// as the GUI and `classify` do when they open a grey PNG).
//
// Every random choice comes from a counter-based seed (seed, epoch) or (seed, step), not
// from a running generator, so a resumed run draws exactly what the uninterrupted run
// would have drawn.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/image_dataset.h"
#include "core/image/preprocess.h"

namespace attnlab::data {

struct Normalisation {
  std::array<float, 3> mean{0.5f, 0.5f, 0.5f};
  std::array<float, 3> std{0.5f, 0.5f, 0.5f};
};

// The mean/std part of an evaluation preprocessing.
inline Normalisation normalisation_of(const image::Preprocessing& p) {
  Normalisation n;
  n.mean = p.mean;
  n.std = p.std;
  return n;
}

struct Augmentation {
  int max_shift = 2;  // pixels, each direction, zero fill; 0 = off
  bool hflip = true;  // with probability 1/2
};

// A permutation of 0..n-1 that depends only on (seed, epoch).
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch);

// A 64-bit seed mixed from several values (splitmix64), for per-step draws.
uint64_t mix_seed(uint64_t a, uint64_t b);

// The images at `indices`, augmented when `augment` is non-null (draws from
// `augment_seed`), normalised: float (B, 3, H, W) on the CPU.
at::Tensor make_batch(const ImageDataset& set, const std::vector<int64_t>& indices,
                      const Normalisation& norm, const Augmentation* augment,
                      uint64_t augment_seed);

// Labels at `indices`: int64 (B,).
at::Tensor batch_labels(const ImageDataset& set, const std::vector<int64_t>& indices);

// A batch read from files: decoded and preprocessed one file at a time (image::preprocess:
// resize, centre crop, mean/std), so only the batch is ever in memory.
struct FileBatch {
  at::Tensor images;  // (B, 3, H, W) float32 CPU, B = the files that could be read
  at::Tensor labels;  // (B,) int64
  struct Failure {
    std::string path, error;
  };
  std::vector<Failure> failed;  // unreadable, or preprocessed to another shape
  int64_t size() const { return images.defined() ? images.size(0) : 0; }
};

// files[start, start + count) through `p`. `shape` is the (H, W) every image must come out
// at: {0, 0} on entry adopts the first readable image's and returns it. A file that cannot
// be decoded or preprocessed, or comes out at another shape, is listed in `failed`.
FileBatch load_file_batch(const std::vector<LabelledFile>& files, size_t start, size_t count,
                          const image::Preprocessing& p, std::array<int64_t, 2>& shape);

}  // namespace attnlab::data
