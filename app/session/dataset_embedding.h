// A dataset's embeddings, streamed to disk (issue 70, `attnlab embed`, attnlab.embed): every
// image through the model a batch at a time (models/embedding_run.h), the pooled features
// written as rows of a float32 .npy and the image's metadata as a CSV row: its name, its
// label (folder name, dataset label, or none), the model's prediction and confidence.
// Memory is one batch: the rows go to a temporary file that the final .npy is copied from,
// so an interrupted run (Ctrl-C, an error) leaves neither file under its name.
//
// Files in the output folder:
//   embeddings.npy   (N, F) float32; with pool "tokens": (N, H·W, F), grid row-major; F is
//                    the block output's width, or heads·d with features keys / queries
//   images.csv       index,image,label,label_name,prediction,prediction_name,confidence,correct
// `label` is −1 for an image without one; `prediction` −1 for a model without classes
// (DINO, an image-only CLIP), whose confidence is then empty; `correct` 1/0, empty
// without both. Unreadable images are reported through on_error and left out.
#pragma once

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/data/image_dataset.h"
#include "core/image/preprocess.h"
#include "models/embedding_run.h"

namespace attnlab::session {

inline constexpr const char* kEmbeddingsNpy = "embeddings.npy";
inline constexpr const char* kEmbeddingsCsv = "images.csv";
inline constexpr const char* kEmbeddingsCsvHeader =
    "index,image,label,label_name,prediction,prediction_name,confidence,correct\n";

// What is embedded: files (each with its label, −1 for none), read through `preprocessing`,
// or images [begin, end) of an in-memory set (normalised with the preprocessing's mean/std).
struct EmbeddingSource {
  std::vector<data::LabelledFile> files;
  std::shared_ptr<const data::ImageDataset> set;
  int64_t begin = 0, end = 0;
  std::vector<std::string> label_names;  // a label's name ("" beyond them)
  // Whether label i is the model's class i (a correct/wrong column): false for labels of
  // other classes than the model predicts (a folder of more classes than its head has).
  bool labels_are_classes = true;
  int64_t first_index = 0;  // the CSV's index of the first image (a shard's)
  std::string what;         // "fashion-mnist:test", "folder:DIR", "30 images": for messages
  int64_t size() const { return set ? end - begin : int64_t(files.size()); }
  // Images [from, to) of this source (a shard's part, or the first --limit), keeping
  // their indices in the CSV.
  EmbeddingSource part(int64_t from, int64_t to) const;
};

// What every front end embeds (one parser: the CLI's --images/--dataset, attnlab.embed's
// images=/dataset=): `dataset` a spec (fashion-mnist:test, folder:DIR) or `images` — one
// directory whose images sit in class sub-folders (labelled by the folder names, as
// folder:DIR), or image files and flat folders (no labels). Folders are listed, nothing is
// decoded; Fashion-MNIST is loaded at `img_size` (its 28×28 must be what the model takes).
// `model_classes` (0: an embedding) decides labels_are_classes. Throws
// std::invalid_argument for a missing path, both or neither of images and dataset, an
// unknown spec, and a dataset of another image size.
EmbeddingSource embedding_source(const std::vector<std::string>& images, const std::string& dataset,
                                 int64_t img_size, int64_t model_classes);

struct EmbeddingOptions {
  int64_t layer = -1;  // block index; negative from the end
  models::EmbeddingPool pool = models::EmbeddingPool::head;
  // What of the block: its output, or its attention layer's keys or queries (pool not head).
  models::EmbeddingFeatures features = models::EmbeddingFeatures::output;
  int64_t batch = 32;
  // Also every head's sharpness per image (dataset_heads.h; the forward then keeps its
  // attention traces) and the `head_examples` extremes per head.
  bool heads = false;
  int64_t head_examples = 8;
};

struct EmbeddingSummary {
  int64_t embedded = 0, skipped = 0, correct = 0, labelled_predicted = 0;
  std::string block;
  int64_t layer = 0;
  std::vector<std::string> blocks;
  std::vector<int64_t> shape;     // of embeddings.npy
  attention::TokenLayout layout;  // the block's tokens (pools cls, mean, tokens; else empty)
  std::string attention;          // keys/queries: the attention layer read; else empty
};

struct EmbeddingCallbacks {
  std::function<void(const std::string& image, const std::string& error)> on_error;
  std::function<void(int64_t done, int64_t total, const std::string& last)> on_progress;
  // Polled between batches: true stops the run (session::AnalysisCancelled; no file is
  // left under its name).
  std::function<bool()> cancelled;
};

// Embeds every image of `source` into `out_dir` (created). `class_names` names the model's
// classes (empty: unnamed). Throws std::runtime_error when no image could be read, and the
// model's errors (a layer outside it, a pool its tokens cannot give) at the first batch.
EmbeddingSummary write_embeddings(models::Backbone& model,
                                  const image::Preprocessing& preprocessing,
                                  const std::vector<std::string>& class_names,
                                  const EmbeddingSource& source, const EmbeddingOptions& options,
                                  const std::string& out_dir,
                                  const EmbeddingCallbacks& callbacks = {});

// embed.json's common part (the CLI and the Python module add the model, the device and the
// time): block, blocks, pool, features (and the attention layer for keys/queries), grid,
// shape, counts, names, accuracy.
nlohmann::json embedding_record(const EmbeddingSummary& summary, const EmbeddingSource& source,
                                const EmbeddingOptions& options,
                                const std::vector<std::string>& class_names);

// embed.json's "features" ("output", "keys", "queries"): "output" for a folder written
// before the key existed (or by a run that embedded the block output).
std::string embedding_features_of(const nlohmann::json& record);

// One row of images.csv, read back.
struct EmbeddingRow {
  int64_t index = 0;
  std::string image;
  int64_t label = -1;
  std::string label_name;
  int64_t prediction = -1;
  std::string prediction_name;
  double confidence = 0;  // NaN without a prediction
  int correct = -1;       // 1, 0, or -1 when not judged
};

// images.csv of an embed folder. Throws std::runtime_error naming the file and line of a
// malformed row (another header, a bad number, an unterminated quote).
std::vector<EmbeddingRow> read_embedding_rows(const std::string& dir);

// Concatenates the rows of several folders' embeddings.npy and images.csv (a sharded run's,
// in order) into `out_dir`: the single run's files. Throws std::runtime_error naming the
// folder whose array does not match the first's shape or dtype.
int64_t concatenate_embeddings(const std::vector<std::string>& dirs, const std::string& out_dir);

}  // namespace attnlab::session
