// concatenate_npy_rows: the rows of a sharded run's arrays, streamed from each shard's file
// after its header (read alone: a shard's token grids may be gigabytes).
#include "app/session/npy_rows.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/io/file_bytes.h"
#include "core/io/npy.h"

namespace attnlab::session {
namespace {

// The shape of a C-ordered .npy of `descr` ("<f4", "<i8"), from its header alone.
std::vector<int64_t> npy_rows_shape(const std::string& path, const std::string& descr,
                                    size_t& header_size) {
  std::ifstream in(path, std::ios::binary);
  char head[10] = {};
  if (!in.read(head, 10) || std::string(head + 1, 5) != "NUMPY")
    throw std::runtime_error(path + ": not an npy file");
  const auto u8 = [&](int i) { return size_t(static_cast<unsigned char>(head[i])); };
  size_t dict_len = u8(8) | (u8(9) << 8);
  size_t prefix = 10;
  if (head[6] != 1) {
    char more[2];
    in.read(more, 2);
    dict_len |= (size_t(static_cast<unsigned char>(more[0])) << 16) |
                (size_t(static_cast<unsigned char>(more[1])) << 24);
    prefix = 12;
  }
  std::string dict(dict_len, ' ');
  in.read(dict.data(), std::streamsize(dict_len));
  header_size = prefix + dict_len;
  if (dict.find("'descr': '" + descr + "'") == std::string::npos ||
      dict.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": not a C-ordered " + descr + " array");
  const size_t open = dict.find("'shape': (");
  const size_t close = dict.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    throw std::runtime_error(path + ": no shape in its header");
  std::vector<int64_t> shape;
  std::string inner = dict.substr(open + 10, close - open - 10);
  size_t pos = 0;
  while (pos < inner.size()) {
    const size_t comma = inner.find(',', pos);
    const std::string word =
        inner.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (word.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(word));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (shape.empty()) throw std::runtime_error(path + ": a 0-d array has no rows");
  return shape;
}

const char* npy_descr(io::DType dtype) {
  switch (dtype) {
    case io::DType::F32:
      return "<f4";
    case io::DType::I64:
      return "<i8";
    default:
      throw std::invalid_argument("concatenate_npy_rows: float32 or int64 arrays only");
  }
}

}  // namespace

int64_t concatenate_npy_rows(const std::vector<std::string>& dirs, const std::string& file,
                             io::DType dtype, const std::string& out_dir) {
  if (dirs.empty()) throw std::runtime_error("no folder to concatenate");
  const std::string descr = npy_descr(dtype);
  std::vector<std::vector<int64_t>> shapes;
  std::vector<size_t> headers;
  for (const auto& d : dirs) {
    size_t header = 0;
    shapes.push_back(npy_rows_shape(d + "/" + file, descr, header));
    headers.push_back(header);
    if (!std::equal(shapes.back().begin() + 1, shapes.back().end(), shapes.front().begin() + 1,
                    shapes.front().end()))
      throw std::runtime_error(d + "/" + file + ": rows of another shape than " + dirs.front() +
                               "'s");
  }
  std::vector<int64_t> total = shapes.front();
  total[0] = 0;
  for (const auto& s : shapes) total[0] += s[0];
  std::filesystem::create_directories(out_dir);
  const std::vector<uint8_t> header = io::npy_header(dtype, total);
  io::write_file_atomic(out_dir + "/" + file, [&](const io::ByteSink& sink) {
    sink(header.data(), header.size());
    std::vector<char> chunk(size_t(1) << 22);
    for (size_t i = 0; i < dirs.size(); ++i) {
      std::ifstream in(dirs[i] + "/" + file, std::ios::binary);
      in.seekg(std::streamoff(headers[i]));
      while (in) {
        in.read(chunk.data(), std::streamsize(chunk.size()));
        if (in.gcount() > 0) sink(chunk.data(), size_t(in.gcount()));
      }
    }
  });
  return total[0];
}

}  // namespace attnlab::session
