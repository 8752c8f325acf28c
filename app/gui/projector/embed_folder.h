// An `attnlab embed` folder read for the GUI's Projector tab (issue 70): the rows of
// embeddings.npy (flattened to N × F float32), images.csv parsed row by row (the same row
// order as the .npy) and the few fields of embed.json the tab shows. Images named
// "fashion-mnist:test#i" (or :train) keep their 28×28 pixels, read from the dataset once,
// so the tab can show and open them without the dataset. Runs on a worker: no GL, no ImGui.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::gui {

// One row of images.csv.
struct EmbedRow {
  int64_t index = 0;
  std::string image;  // a file path, or "fashion-mnist:test#i"
  int64_t label = -1;
  std::string label_name;
  int64_t prediction = -1;
  std::string prediction_name;
  double confidence = -1.0;  // < 0: none (a model without classes)
  int correct = -1;          // 1, 0, or -1: not judged
};

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

// RFC 4180 CSV as `attnlab embed` writes it: fields split on commas, a field in double quotes
// may hold commas, newlines and "" (a quote). Rows end at \n (a \r before it is dropped);
// blank lines are skipped. Throws std::runtime_error on an unterminated quote.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// Reads DIR/embeddings.npy, DIR/images.csv and DIR/embed.json (optional). Throws
// std::runtime_error naming the file and the problem (a missing file, a row count that
// differs from the .npy's, a header that is not images.csv's).
EmbedFolder read_embed_folder(const std::string& dir);

}  // namespace attnlab::gui
