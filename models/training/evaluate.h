// Classification accuracy of a model on a labelled image set: the first `limit` images
// (all when 0), in order, in batches, in eval mode, without autograd. The set is either
// in memory (ImageDataset) or a list of files read a batch at a time (evaluate_files:
// memory does not grow with the number of images).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/data/batches.h"
#include "core/data/image_dataset.h"
#include "models/backbone.h"

namespace attnlab::training {

struct Accuracy {
  int64_t correct = 0, total = 0;
  int64_t skipped = 0;  // files that could not be read (evaluate_files), not in total
  double percent() const {
    return total > 0 ? 100.0 * static_cast<double>(correct) / static_cast<double>(total) : 0.0;
  }
};

// on_batch(done, total) after each batch (progress); may be empty.
Accuracy evaluate(models::Backbone& model, const data::ImageDataset& set,
                  const data::Normalisation& norm, int64_t limit = 0, int64_t batch = 250,
                  const std::function<void(int64_t, int64_t)>& on_batch = {});

// The first `limit` files (all when 0), `batch` at a time, each decoded and preprocessed
// with `preprocessing` (data::load_file_batch); every image must come out at one shape. A
// file that cannot be read is handed to on_error(path, message), counted in `skipped` and
// left out; on_batch(files done, files to do, last file) after each batch.
Accuracy evaluate_files(
    models::Backbone& model, const std::vector<data::LabelledFile>& files,
    const image::Preprocessing& preprocessing, int64_t limit = 0, int64_t batch = 250,
    const std::function<void(const std::string&, const std::string&)>& on_error = {},
    const std::function<void(int64_t, int64_t, const std::string&)>& on_batch = {});

}  // namespace attnlab::training
