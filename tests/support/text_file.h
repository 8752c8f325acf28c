// The whole content of a file as a string (bytes as they are; empty if it cannot be read),
// for tests that check what a writer produced.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace attnlab::testing {

inline std::string read_text(const std::string& path) {
  // Through rdbuf(), not istreambuf_iterator: GCC 12 warns of a null dereference inside
  // the iterator's inlined code once several test files share a unity unit.
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// A CSV file's lines split at every comma (no quoting: for files whose cells hold no comma,
// such as those the tests write from the committed samples); a trailing comma gives an
// empty last cell.
inline std::vector<std::vector<std::string>> read_csv_cells(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_text(path));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace attnlab::testing
