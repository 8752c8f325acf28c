// An `attnlab embed` folder read for the GUI's Projector tab (issue 70): the rows of
// embeddings.npy as N × F float32 — for a tokens folder ((N, T, F), `embed --pool tokens`)
// the mean of each image's T tokens, read through the memory map a row at a time, so the
// projection shows images (as `--pool mean` would) and a large index is never held whole —
// images.csv read by the session's
// read_embedding_rows (the same row order as the .npy) and the few fields of embed.json the
// tab shows. Images named
// "fashion-mnist:test#i" (or :train) keep their 28×28 pixels, read from the dataset once,
// so the tab can show and open them without the dataset. A folder written with
// `attnlab embed --heads` also gives its head statistics (session/dataset_heads.h): the
// per-image entropy of every layer's heads and each head's extreme images. Runs on a
// worker: no GL, no ImGui.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "app/session/dataset_embedding.h"

namespace attnlab::gui {

// One row of images.csv (image: a file path, or "fashion-mnist:test#i"; confidence NaN for
// a model without classes).
using EmbedRow = session::EmbeddingRow;

// One attention layer of heads.json.
struct EmbedHeadLayer {
  std::string path, mechanism;
  int64_t heads = 0;
};

// One of a head's extreme images (session::head_extremes): among the k of lowest mean
// entropy ("sharpest", lowest first) or of highest ("broadest", highest first).
struct EmbedHeadExtreme {
  int64_t layer = 0, head = 0, rank = 0, row = 0;
  bool sharpest = true;
  double entropy = 0;
};

// The extremes kept per layer, head and kind (as `attnlab embed --heads` writes by default).
inline constexpr int64_t kEmbedHeadExtremes = 8;

struct EmbedFolder {
  std::string dir;
  int64_t n = 0, dims = 0;
  int64_t tokens = 1;    // T of an (N, T, F) tokens folder (x holds their mean); 1 otherwise
  std::vector<float> x;  // n × dims, row-major
  std::vector<EmbedRow> rows;
  std::vector<std::string> label_names, class_names;  // index = label / class
  std::string description;                            // "block -1, pool head, ..." from embed.json
  nlohmann::json meta;  // embed.json as read (null: none); patch retrieval reads its pool,
                        // grid, block and model (projector/patch_retrieval.h)
  // Images of a dataset, decoded: thumb_w × thumb_h grey pixels per row (empty for file rows:
  // has_pixels[i] says which).
  int thumb_w = 0, thumb_h = 0;
  std::vector<uint8_t> pixels;  // n × thumb_w × thumb_h where has_pixels
  std::vector<uint8_t> has_pixels;
  // Head statistics (`attnlab embed --heads`); head_layers == 0: none (or heads_error).
  int64_t head_layers = 0, max_heads = 0;
  std::vector<EmbedHeadLayer> head_info;  // head_layers entries
  std::vector<float> head_entropy;        // n × head_layers × max_heads; NaN: padding
  std::vector<float> head_rank;  // the same shape: each head's effective output rank (empty: a
                                 // folder written before head_output_rank.npy)
  std::vector<EmbedHeadExtreme> head_extremes;  // kEmbedHeadExtremes per layer, head, kind
  std::string heads_error;                      // why they could not be read (the rest was)
  bool has_heads() const { return head_layers > 0; }
  bool has_head_rank() const { return has_heads() && !head_rank.empty(); }
  // head_entropy[i, layer, head] (rank: head_rank's); NaN outside the arrays.
  float head_value(int64_t i, int64_t layer, int64_t head, bool rank = false) const {
    const std::vector<float>& v = rank ? head_rank : head_entropy;
    if (i < 0 || i >= n || layer < 0 || layer >= head_layers || head < 0 || head >= max_heads ||
        v.empty())
      return std::numeric_limits<float>::quiet_NaN();
    return v[size_t((i * head_layers + layer) * max_heads + head)];
  }
};

// Reads DIR/embeddings.npy, DIR/images.csv and DIR/embed.json (optional). Throws
// std::runtime_error naming the file and the problem (a missing file, a row count that
// differs from the .npy's, a header that is not images.csv's). Head statistics that cannot
// be read leave heads_error set, not a throw.
EmbedFolder read_embed_folder(const std::string& dir);

}  // namespace attnlab::gui
