// An `attnlab embed` folder read for the GUI's Projector tab (issue 70): the rows of
// embeddings.npy (flattened to N × F float32), images.csv read by the session's
// read_embedding_rows (the same row order as the .npy) and the few fields of embed.json the
// tab shows. Images named
// "fashion-mnist:test#i" (or :train) keep their 28×28 pixels, read from the dataset once,
// so the tab can show and open them without the dataset. Runs on a worker: no GL, no ImGui.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/session/dataset_embedding.h"

namespace attnlab::gui {

// One row of images.csv (image: a file path, or "fashion-mnist:test#i"; confidence NaN for
// a model without classes).
using EmbedRow = session::EmbeddingRow;

struct EmbedFolder {
  std::string dir;
  int64_t n = 0, dims = 0;
  std::vector<float> x;  // n × dims, row-major
  std::vector<EmbedRow> rows;
  std::vector<std::string> label_names, class_names;  // index = label / class
  std::string description;                            // "block -1, pool head, ..." from embed.json
  // Images of a dataset, decoded: thumb_w × thumb_h grey pixels per row (empty for file rows:
  // has_pixels[i] says which).
  int thumb_w = 0, thumb_h = 0;
  std::vector<uint8_t> pixels;  // n × thumb_w × thumb_h where has_pixels
  std::vector<uint8_t> has_pixels;
};

// Reads DIR/embeddings.npy, DIR/images.csv and DIR/embed.json (optional). Throws
// std::runtime_error naming the file and the problem (a missing file, a row count that
// differs from the .npy's, a header that is not images.csv's).
EmbedFolder read_embed_folder(const std::string& dir);

}  // namespace attnlab::gui
