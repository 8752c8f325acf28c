// TokenIndex: a read-only, memory-mapped view of an embeddings file — a float32, C-ordered
// .npy of shape (N, T, F) (N images, T tokens each, F features: `attnlab embed --pool
// tokens`) or (N, F) (one vector per image: T = 1). Only the header is read (pread); the
// data is mmap(2)ed, so opening a 10 GB index costs no memory and no reading, and a query
// touches the pages it scans (the page cache keeps them for the next one).
//
// Errors: std::runtime_error for a file that cannot be opened or mapped, is not an .npy
// file, has a malformed header, or whose size differs from what its header says (truncated,
// or trailing bytes); std::invalid_argument for a well-formed file retrieval cannot use:
// not little-endian float32, Fortran order, rank other than 2 or 3, no rows (N = 0), or no
// tokens or features (T = 0, F = 0). Every message starts with the path.
//
// The file must not be truncated while mapped (reading a page past its new end raises
// SIGBUS): attnlab's writers replace files by rename, which leaves the mapped one intact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::retrieval {

class TokenIndex {
 public:
  explicit TokenIndex(const std::string& path);
  ~TokenIndex();
  TokenIndex(TokenIndex&& other) noexcept;
  TokenIndex& operator=(TokenIndex&& other) noexcept;
  TokenIndex(const TokenIndex&) = delete;
  TokenIndex& operator=(const TokenIndex&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<int64_t>& shape() const { return shape_; }  // as in the file
  int64_t images() const { return images_; }                    // N
  int64_t tokens() const { return tokens_; }                    // T (1 for an (N, F) file)
  int64_t features() const { return features_; }                // F
  int64_t rows() const { return images_ * tokens_; }            // N·T vectors
  // Where the data starts in the file, and the file's size (= offset + N·T·F·4).
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return file_size_; }

  // The F values of token `token` of image `image`, copied. std::out_of_range outside.
  std::vector<float> vector(int64_t image, int64_t token = 0) const;
  // The start of row r (0 ≤ r < rows(); unchecked) inside the mapping. Its F floats are
  // read with memcpy or through row_floats(): the data need not be 4-byte aligned (numpy
  // aligns it to 64 bytes, but a hand-written header may not).
  const unsigned char* row_bytes(int64_t r) const {
    return data_ + static_cast<size_t>(r) * static_cast<size_t>(features_) * sizeof(float);
  }
  // The row as floats: a pointer into the mapping when the data is aligned, else the row
  // copied into `scratch` (F floats).
  const float* row_floats(int64_t r, float* scratch) const;
  bool aligned() const { return aligned_; }

 private:
  void release() noexcept;
  std::string path_;
  std::vector<int64_t> shape_;
  int64_t images_ = 0, tokens_ = 0, features_ = 0;
  uint64_t data_offset_ = 0, file_size_ = 0;
  void* map_ = nullptr;  // the whole file, PROT_READ
  size_t map_size_ = 0;
  const unsigned char* data_ = nullptr;
  bool aligned_ = false;
};

}  // namespace attnlab::retrieval
