// Classification accuracy of a model on a labelled image set: the first `limit` images
// (all when 0), in order, in batches, in eval mode, without autograd.
#pragma once

#include <cstdint>
#include <functional>

#include "core/data/batches.h"
#include "core/data/image_dataset.h"
#include "models/backbone.h"

namespace attnlab::training {

struct Accuracy {
  int64_t correct = 0, total = 0;
  double percent() const {
    return total > 0 ? 100.0 * static_cast<double>(correct) / static_cast<double>(total) : 0.0;
  }
};

// on_batch(done, total) after each batch (progress); may be empty.
Accuracy evaluate(models::Backbone& model, const data::ImageDataset& set,
                  const data::Normalisation& norm, int64_t limit = 0, int64_t batch = 250,
                  const std::function<void(int64_t, int64_t)>& on_batch = {});

}  // namespace attnlab::training
