// Plain results: what leaves the analysis engine for viz, the exporters and the GUI.
// A Table is one statistic as rows (key columns, then numeric value columns); an Array is
// an n-d float buffer with named axes (maps, spectra). Neither depends on LibTorch, so viz
// can draw them and the exporters can write them without it.
//
// Streaming over an image set: every per-image Table goes into a TableAccumulator, which
// keeps a running mean and variance per (row key, value column) — memory grows with the
// number of distinct rows, never with the number of images.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnlab::analysis {

// One table cell: an integer, a real or a text.
struct Cell {
  enum class Kind { Int, Real, Text };
  Kind kind = Kind::Real;
  int64_t i = 0;
  double r = 0.0;
  std::string t;

  Cell() = default;
  Cell(int v) : kind(Kind::Int), i(v) {}  // NOLINT(google-explicit-constructor)
  Cell(int64_t v) : kind(Kind::Int), i(v) {}  // NOLINT(google-explicit-constructor)
  Cell(double v) : kind(Kind::Real), r(v) {}  // NOLINT(google-explicit-constructor)
  Cell(std::string v) : kind(Kind::Text), t(std::move(v)) {}  // NOLINT
  Cell(const char* v) : kind(Kind::Text), t(v) {}  // NOLINT(google-explicit-constructor)

  bool numeric() const { return kind != Kind::Text; }
  double number() const { return kind == Kind::Int ? static_cast<double>(i) : r; }
  // Text form used by CSV and row keys: integers exactly, reals with 9 significant digits
  // (float32 round-trips), text as is.
  std::string str() const;
};

struct Table {
  std::string name;     // file stem, e.g. "rank_heads"
  std::string caption;  // one sentence: what a row is, what the values mean
  std::vector<std::string> columns;
  size_t key_columns = 0;  // the first key_columns identify a row; the rest are values
  std::vector<std::vector<Cell>> rows;

  // Throws std::invalid_argument when the row's width is not columns.size().
  void add_row(std::vector<Cell> row);
  // Index of column `name`; throws std::out_of_range naming the columns there are.
  size_t column(const std::string& name) const;
};

// Mean and standard deviation (population std, n in the denominator; 0 for one image) of
// every value column, per row key, over the tables added. Non-numeric value cells and key
// mismatches in the column lists throw std::invalid_argument.
class TableAccumulator {
 public:
  void add(const Table& per_image);
  // Key columns, then "<col>_mean", "<col>_std" for each value column, then "images".
  // Rows keep the order in which their keys were first seen.
  Table result() const;
  int64_t count() const { return images_; }

  // One row's running state: its key, images, means and sums of squared deviations.
  struct RowState {
    std::vector<Cell> key;
    std::vector<double> mean, m2;
    int64_t n = 0;
  };
  // Another accumulator's images added (a shard's, `attnlab merge`): Chan, Golub and
  // LeVeque's pairwise combination of counts, means and squared deviations, row by row;
  // rows new here are appended in the other's order, so a run's shards absorbed in order
  // give the single run's rows in its order, with its means and stds up to rounding (a few
  // units in the last place). Throws std::invalid_argument when the columns differ.
  void absorb(const TableAccumulator& other);
  // What a shard saves (core/analysis/exact_table_json.h) and a merge reads back.
  const Table& shape() const { return shape_; }  // name, caption, columns, key_columns
  const std::vector<RowState>& rows() const { return rows_; }
  // Throws std::invalid_argument for rows that do not fit the shape or repeat a key.
  static TableAccumulator restore(const Table& shape, std::vector<RowState> rows, int64_t images);

 private:
  Table shape_;  // name, caption, columns, key_columns of the first table
  std::vector<RowState> rows_;
  std::map<std::string, size_t> index_;
  int64_t images_ = 0;
  // rows_'s index of each row of the last table added: the next image's table almost always
  // has the same keys in the same order, which is then checked cell by cell instead of
  // looking every key up (spectra's 4608 channel rows per image of a ViT-S).
  std::vector<size_t> last_rows_;
};

// An n-d float32 array in C order with a name for each axis ("layer", "head", "y", "x").
struct Array {
  std::string name;  // file stem
  std::string caption;
  std::vector<int64_t> shape;
  std::vector<std::string> axes;  // one per dimension
  std::vector<float> data;

  int64_t numel() const;
};

}  // namespace attnlab::analysis
