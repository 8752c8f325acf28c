// See token_index.h. The .npy header is read with pread (at most kMaxHeader bytes) and parsed
// by the small literal parser below: the same strict subset core/io/npy.cpp accepts (quoted
// strings, True/False, tuples of non-negative integers), nothing evaluated. core/io's parser
// wants the whole file in memory, which is what this view exists to avoid; the shape's byte
// count is checked by core/io's one shape rule, io::checked_nbytes.
#include "core/retrieval/token_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/io/raw_tensor.h"

namespace attnlab::retrieval {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy's own limit on a header it will read (max_header_size, 10 000) with room to spare.
constexpr size_t kMaxHeader = size_t(1) << 20;

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw std::runtime_error(path + ": " + message);
}
[[noreturn]] void refuse(const std::string& path, const std::string& message) {
  throw std::invalid_argument(path + ": " + message);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (N, T, F), }
class HeaderDict {
 public:
  HeaderDict(std::string text, const std::string& path) : s_(std::move(text)), path_(path) {}

  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;

  void parse() {
    space();
    expect('{', "'{' opening the header dict");
    space();
    while (peek() != '}') {
      const std::string key = string_value("a quoted key");
      space();
      expect(':', "':' after the key");
      space();
      if (key == "descr") {
        descr = string_value("a quoted descr such as '<f4'");
      } else if (key == "fortran_order") {
        fortran_order = bool_value();
      } else if (key == "shape") {
        shape = tuple_value();
      } else {
        bad("unknown key '" + key + "'; expected 'descr', 'fortran_order' and 'shape'");
      }
      space();
      if (peek() == ',') {
        ++pos_;
        space();
      } else if (peek() != '}') {
        bad("expected ',' or '}' after a value");
      }
    }
    ++pos_;
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n')) ++pos_;
    if (pos_ != s_.size()) bad("expected only padding after the header dict");
    if (!descr || !fortran_order || !shape)
      bad("the header lacks 'descr', 'fortran_order' or 'shape'");
  }

 private:
  [[noreturn]] void bad(const std::string& message) const {
    fail(path_,
         "malformed npy header at byte " + std::to_string(pos_) + " of the dict: " + message);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  void expect(char c, const char* what) {
    if (peek() != c) bad(std::string("expected ") + what);
    ++pos_;
  }
  std::string string_value(const char* what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad(std::string("expected ") + what);
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string v = s_.substr(pos_ + 1, end - pos_ - 1);
    if (v.find('\\') != std::string::npos) bad("escape sequences are not supported");
    pos_ = end + 1;
    return v;
  }
  bool bool_value() {
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  std::vector<int64_t> tuple_value() {
    expect('(', "'(' opening the shape");
    std::vector<int64_t> dims;
    space();
    while (peek() != ')') {
      if (peek() < '0' || peek() > '9') bad("expected a non-negative integer in the shape");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int d = peek() - '0';
        if (v > (INT64_MAX - d) / 10) bad("a dimension does not fit in 64 bits");
        v = v * 10 + d;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2's long suffix, as numpy still accepts
      dims.push_back(v);
      if (dims.size() > 64) bad("more than 64 dimensions");
      space();
      if (peek() == ',') {
        ++pos_;
        space();
      } else if (peek() != ')') {
        bad("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    return dims;
  }

  std::string s_;
  const std::string& path_;
  size_t pos_ = 0;
};

// Reads exactly n bytes at offset, or fewer at the end of the file (returned count).
size_t read_at(int fd, void* buffer, size_t n, uint64_t offset, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r =
        ::pread(fd, static_cast<char*>(buffer) + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(path, std::string("cannot read: ") + std::strerror(errno));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

TokenIndex::TokenIndex(const std::string& path) : path_(path) {
  FileDescriptor f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  file_size_ = static_cast<uint64_t>(st.st_size);

  // Magic, version, header length.
  unsigned char lead[12] = {};
  const size_t lead_got = read_at(f.fd, lead, sizeof lead, 0, path);
  if (lead_got == 0) fail(path, "empty file; expected an .npy file");
  if (std::memcmp(lead, kMagic, std::min(lead_got, kMagicLen)) != 0)
    fail(path, "not an .npy file (no \\x93NUMPY magic)");
  if (lead_got < 10) fail(path, "truncated .npy header");
  const unsigned major = lead[6], minor = lead[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail(path, "npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   "; expected 1.0, 2.0 or 3.0");
  size_t dict_pos = 10, dict_len = size_t(lead[8]) | size_t(lead[9]) << 8;
  if (major >= 2) {
    if (lead_got < 12) fail(path, "truncated .npy header");
    dict_pos = 12;
    dict_len =
        size_t(lead[8]) | size_t(lead[9]) << 8 | size_t(lead[10]) << 16 | size_t(lead[11]) << 24;
  }
  if (dict_len > kMaxHeader)
    fail(path, "npy header of " + std::to_string(dict_len) + " bytes; at most " +
                   std::to_string(kMaxHeader) + " accepted");
  std::string dict(dict_len, '\0');
  if (read_at(f.fd, dict.data(), dict_len, dict_pos, path) != dict_len)
    fail(path, "truncated .npy header (the file ends inside it)");
  HeaderDict h(std::move(dict), path);
  h.parse();

  // What retrieval can use.
  if (*h.descr != "<f4")
    refuse(path, "dtype '" + *h.descr +
                     "'; retrieval reads little-endian float32 ('<f4') embeddings only");
  if (*h.fortran_order)
    refuse(path, "Fortran-ordered array; retrieval reads C-ordered embeddings only");
  shape_ = *h.shape;
  if (shape_.size() != 2 && shape_.size() != 3)
    refuse(path, "shape " + shape_text(shape_) + " has rank " + std::to_string(shape_.size()) +
                     "; expected (N, T, F) tokens or (N, F) vectors");
  images_ = shape_[0];
  tokens_ = shape_.size() == 3 ? shape_[1] : 1;
  features_ = shape_.back();
  if (images_ == 0) refuse(path, "shape " + shape_text(shape_) + " has no rows (N = 0)");
  if (tokens_ == 0 || features_ == 0)
    refuse(path, "shape " + shape_text(shape_) + " has no tokens or no features");
  const std::optional<int64_t> nbytes = io::checked_nbytes(shape_, io::DType::F32);
  if (!nbytes) fail(path, "shape " + shape_text(shape_) + " overflows 64 bits");

  data_offset_ = dict_pos + dict_len;
  const uint64_t want = data_offset_ + static_cast<uint64_t>(*nbytes);
  if (file_size_ < want)
    fail(path, "truncated: the header's shape " + shape_text(shape_) + " needs " +
                   std::to_string(want) + " bytes but the file has " + std::to_string(file_size_));
  if (file_size_ > want)
    fail(path, std::to_string(file_size_ - want) + " trailing byte(s) after the " +
                   std::to_string(want) + " bytes of shape " + shape_text(shape_));
  if (want > static_cast<uint64_t>(SIZE_MAX)) fail(path, "too large to map");

  map_size_ = static_cast<size_t>(want);
  void* m = ::mmap(nullptr, map_size_, PROT_READ, MAP_SHARED, f.fd, 0);
  if (m == MAP_FAILED) fail(path, std::string("cannot map: ") + std::strerror(errno));
  map_ = m;
  data_ = static_cast<const unsigned char*>(map_) + data_offset_;
  aligned_ = data_offset_ % alignof(float) == 0;
}

TokenIndex::~TokenIndex() {
  release();
}

void TokenIndex::release() noexcept {
  if (map_) ::munmap(map_, map_size_);
  map_ = nullptr;
  data_ = nullptr;
  map_size_ = 0;
}

TokenIndex::TokenIndex(TokenIndex&& o) noexcept
    : path_(std::move(o.path_)),
      shape_(std::move(o.shape_)),
      images_(o.images_),
      tokens_(o.tokens_),
      features_(o.features_),
      data_offset_(o.data_offset_),
      file_size_(o.file_size_),
      map_(std::exchange(o.map_, nullptr)),
      map_size_(std::exchange(o.map_size_, 0)),
      data_(std::exchange(o.data_, nullptr)),
      aligned_(o.aligned_) {}

TokenIndex& TokenIndex::operator=(TokenIndex&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    shape_ = std::move(o.shape_);
    images_ = o.images_;
    tokens_ = o.tokens_;
    features_ = o.features_;
    data_offset_ = o.data_offset_;
    file_size_ = o.file_size_;
    map_ = std::exchange(o.map_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
    data_ = std::exchange(o.data_, nullptr);
    aligned_ = o.aligned_;
  }
  return *this;
}

std::vector<float> TokenIndex::vector(int64_t image, int64_t token) const {
  if (!data_) throw std::logic_error("TokenIndex: moved-from index");
  if (image < 0 || image >= images_ || token < 0 || token >= tokens_)
    throw std::out_of_range(path_ + ": no token " + std::to_string(token) + " of image " +
                            std::to_string(image) + " (" + std::to_string(images_) + " images of " +
                            std::to_string(tokens_) + " tokens)");
  std::vector<float> v(static_cast<size_t>(features_));
  std::memcpy(v.data(), row_bytes(image * tokens_ + token), v.size() * sizeof(float));
  return v;
}

const float* TokenIndex::row_floats(int64_t r, float* scratch) const {
  const unsigned char* p = row_bytes(r);
  if (aligned_) {
    const void* aligned = p;  // 4-byte aligned: checked at open
    return static_cast<const float*>(aligned);
  }
  std::memcpy(scratch, p, static_cast<size_t>(features_) * sizeof(float));
  return scratch;
}

}  // namespace attnlab::retrieval
