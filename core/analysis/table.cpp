// Plain result tables: cell text forms, row checks, and the streaming accumulator that
// turns one Table per image into a mean/std Table over an image set.
//
// Numbers are formatted with std::to_chars rather than printf: printf follows LC_NUMERIC,
// and the GUI (Qt sets the locale from the environment) could otherwise write "0,5" into
// a CSV. to_chars is locale-independent and exact.
#include "core/analysis/table.h"
#include "core/io/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace attnlab::analysis {

namespace {

// "a, b, c" for error messages.
// The accumulator's map key for a row: the key cells' text forms, separated by a control
// character no key is expected to hold, and tagged with the kind so that Int 1 and
// Text "1" stay distinct rows.
std::string row_key(const std::vector<Cell>& row, size_t key_columns) {
  std::string k;
  for (size_t c = 0; c < key_columns; ++c) {
    k += static_cast<char>('0' + static_cast<int>(row[c].kind));
    k += row[c].str();
    k += '\x1f';
  }
  return k;
}

// Whether a row's key cells are exactly `key` (same kinds, same values). Stricter than
// row_key's equality (a real is keyed by 9 digits): a mismatch here only sends the row the
// slow way, through row_key.
bool same_key(const std::vector<Cell>& row, const std::vector<Cell>& key) {
  for (size_t c = 0; c < key.size(); ++c) {
    const Cell &a = row[c], &b = key[c];
    if (a.kind != b.kind) return false;
    if (a.kind == Cell::Kind::Int    ? a.i != b.i
        : a.kind == Cell::Kind::Text ? a.t != b.t
                                     : a.r != b.r)
      return false;
  }
  return true;
}

}  // namespace

std::string Cell::str() const {
  switch (kind) {
    case Kind::Int:
      return std::to_string(i);
    case Kind::Text:
      return t;
    case Kind::Real:
      break;
  }
  if (std::isnan(r)) return "nan";  // never "-nan": the sign of a NaN carries nothing
  if (std::isinf(r)) return r > 0 ? "inf" : "-inf";
  // 9 significant digits are enough for any float32 to round-trip (FLT_DECIMAL_DIG).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::general, 9);
  std::string s(buf, res.ptr);
  // A real that prints like an integer ("3") gets ".0" so that a reader can tell it from
  // an Int column and the cell's kind survives a CSV round trip.
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

void Table::add_row(std::vector<Cell> row) {
  if (row.size() != columns.size())
    throw std::invalid_argument("table '" + name + "': a row has " + std::to_string(row.size()) +
                                " cells, but the table has " + std::to_string(columns.size()) +
                                " columns (" + text::join(columns) + ")");
  rows.push_back(std::move(row));
}

size_t Table::column(const std::string& col) const {
  for (size_t c = 0; c < columns.size(); ++c)
    if (columns[c] == col) return c;
  throw std::out_of_range("table '" + name + "' has no column '" + col +
                          "'; its columns are: " + text::join(columns));
}

void TableAccumulator::add(const Table& t) {
  // Check everything before touching the running state, so that a rejected table leaves
  // the accumulator exactly as it was.
  const std::string where = "TableAccumulator: table '" + t.name + "'";
  if (t.key_columns > t.columns.size())
    throw std::invalid_argument(where + " declares " + std::to_string(t.key_columns) +
                                " key columns but has only " + std::to_string(t.columns.size()));
  if (images_ > 0 && (t.columns != shape_.columns || t.key_columns != shape_.key_columns))
    throw std::invalid_argument(where + " has columns [" + text::join(t.columns) + "] with " +
                                std::to_string(t.key_columns) +
                                " key columns; the first table had [" + text::join(shape_.columns) +
                                "] with " + std::to_string(shape_.key_columns));
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    if (row.size() != t.columns.size())
      throw std::invalid_argument(where + ": row " + std::to_string(r) + " has " +
                                  std::to_string(row.size()) + " cells for " +
                                  std::to_string(t.columns.size()) + " columns");
    for (size_t c = t.key_columns; c < row.size(); ++c)
      if (!row[c].numeric())
        throw std::invalid_argument(where + ": row " + std::to_string(r) + ", value column '" +
                                    t.columns[c] + "' holds text '" + row[c].t +
                                    "'; only numbers can be averaged");
  }
  // The last table's keys, in its order (so unique, as that table's were checked)?
  bool same_rows = images_ > 0 && t.rows.size() == last_rows_.size();
  for (size_t r = 0; same_rows && r < t.rows.size(); ++r)
    same_rows = same_key(t.rows[r], rows_[last_rows_[r]].key);
  std::vector<std::string> keys;
  if (!same_rows) {
    keys.reserve(t.rows.size());
    std::map<std::string, size_t> seen;  // key -> row index within this table
    for (size_t r = 0; r < t.rows.size(); ++r) {
      keys.push_back(row_key(t.rows[r], t.key_columns));
      // A key twice in one image would be counted as two images of that row.
      if (auto [it, fresh] = seen.emplace(keys.back(), r); !fresh)
        throw std::invalid_argument(where + ": rows " + std::to_string(it->second) + " and " +
                                    std::to_string(r) + " have the same key");
    }
  }

  if (images_ == 0) {
    shape_.name = t.name;
    shape_.caption = t.caption;
    shape_.columns = t.columns;
    shape_.key_columns = t.key_columns;
  }
  const size_t values = t.columns.size() - t.key_columns;
  if (!same_rows) last_rows_.assign(t.rows.size(), 0);
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    if (!same_rows) {
      auto [it, fresh] = index_.emplace(keys[r], rows_.size());
      if (fresh) {
        RowState run;
        run.key.assign(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(t.key_columns));
        run.mean.assign(values, 0.0);
        run.m2.assign(values, 0.0);
        rows_.push_back(std::move(run));
      }
      last_rows_[r] = it->second;
    }
    // Welford's update: numerically stable without keeping the per-image values.
    RowState& run = rows_[last_rows_[r]];
    ++run.n;
    for (size_t v = 0; v < values; ++v) {
      const double x = row[t.key_columns + v].number();
      const double delta = x - run.mean[v];
      run.mean[v] += delta / static_cast<double>(run.n);
      run.m2[v] += delta * (x - run.mean[v]);
    }
  }
  ++images_;
}

Table TableAccumulator::result() const {
  Table out;
  out.name = shape_.name;
  out.caption = shape_.caption;
  out.key_columns = shape_.key_columns;
  out.columns.assign(shape_.columns.begin(),
                     shape_.columns.begin() + static_cast<std::ptrdiff_t>(shape_.key_columns));
  for (size_t c = shape_.key_columns; c < shape_.columns.size(); ++c) {
    out.columns.push_back(shape_.columns[c] + "_mean");
    out.columns.push_back(shape_.columns[c] + "_std");
  }
  // Per row: a row missing from some images is averaged over the images that have it.
  out.columns.push_back("images");
  for (const RowState& run : rows_) {
    std::vector<Cell> row = run.key;
    for (size_t v = 0; v < run.mean.size(); ++v) {
      row.emplace_back(run.mean[v]);
      row.emplace_back(std::sqrt(run.m2[v] / static_cast<double>(run.n)));  // population std
    }
    row.emplace_back(run.n);
    out.rows.push_back(std::move(row));
  }
  return out;
}

void TableAccumulator::absorb(const TableAccumulator& other) {
  if (other.images_ == 0) return;
  if (images_ > 0 &&
      (other.shape_.columns != shape_.columns || other.shape_.key_columns != shape_.key_columns))
    throw std::invalid_argument("TableAccumulator: table '" + other.shape_.name +
                                "' has columns [" + text::join(other.shape_.columns) +
                                "]; this one has [" + text::join(shape_.columns) + "]");
  if (images_ == 0) shape_ = other.shape_;
  for (const RowState& b : other.rows_) {
    auto [it, fresh] = index_.emplace(row_key(b.key, b.key.size()), rows_.size());
    if (fresh) {
      rows_.push_back(b);
      continue;
    }
    RowState& a = rows_[it->second];
    const double na = double(a.n), nb = double(b.n), n = na + nb;
    for (size_t v = 0; v < a.mean.size(); ++v) {
      const double delta = b.mean[v] - a.mean[v];
      a.mean[v] += delta * (nb / n);
      a.m2[v] += b.m2[v] + delta * delta * (na * nb / n);
    }
    a.n += b.n;
  }
  images_ += other.images_;
}

TableAccumulator TableAccumulator::restore(const Table& shape, std::vector<RowState> rows,
                                           int64_t images) {
  TableAccumulator acc;
  acc.shape_ = shape;
  acc.shape_.rows.clear();
  acc.images_ = images;
  const size_t values = shape.columns.size() - std::min(shape.key_columns, shape.columns.size());
  for (auto& r : rows) {
    if (r.key.size() != shape.key_columns || r.mean.size() != values || r.m2.size() != values ||
        r.n < 1)
      throw std::invalid_argument("TableAccumulator: a saved row of '" + shape.name +
                                  "' does not fit its columns");
    if (!acc.index_.emplace(row_key(r.key, r.key.size()), acc.rows_.size()).second)
      throw std::invalid_argument("TableAccumulator: a saved row of '" + shape.name +
                                  "' repeats a key");
    acc.rows_.push_back(std::move(r));
  }
  return acc;
}

int64_t Array::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace attnlab::analysis
