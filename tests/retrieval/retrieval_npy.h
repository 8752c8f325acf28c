// Hand-made .npy files for the retrieval tests: the header written here byte by byte (not by
// core/io), so that the tests can make what numpy would not (a misaligned data start, a
// cut-off file, another dtype) as easily as what it would.
#pragma once

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::testing {

// "(2, 3, 4)", "(5,)"
inline std::string retrieval_shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Magic, version 1.0, header length and the dict, padded with spaces and a '\n' so that the
// data starts at a multiple of `align` (64 as numpy; 1 lets it start anywhere), plus
// `extra_pad` more spaces (to misalign it on purpose).
inline std::string retrieval_npy_header(const std::string& descr, const std::vector<int64_t>& shape,
                                        bool fortran = false, size_t align = 64,
                                        size_t extra_pad = 0) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + retrieval_shape_text(shape) + ", }";
  size_t total = 10 + dict.size() + 1;
  while (total % align != 0) {
    dict += ' ';
    ++total;
  }
  dict += std::string(extra_pad, ' ') + "\n";
  std::string h = std::string("\x93NUMPY", 6) + '\x01' + '\x00';
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>((dict.size() >> 8) & 0xff);
  return h + dict;
}

inline void retrieval_write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// A float32 .npy of `shape` holding `values` (C order).
inline void retrieval_write_f32(const std::string& path, const std::vector<int64_t>& shape,
                                const std::vector<float>& values, size_t extra_pad = 0) {
  std::string bytes = retrieval_npy_header("<f4", shape, false, 64, extra_pad);
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  retrieval_write(path, bytes);
}

}  // namespace attnlab::testing
