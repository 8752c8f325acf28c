// SHA-256 (FIPS 180-4), our own implementation: fingerprints checkpoints in the settings
// sidecar so a result can be traced to the exact weights. Files are hashed in 1 MiB
// chunks in constant memory.
#include "core/analysis/sha256.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/io/io_error.h"

namespace attnlab::analysis {
namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

// Incremental hasher: whole 64-byte blocks are compressed as they arrive, so a file is
// hashed in constant memory.
class Sha256 {
 public:
  void update(const uint8_t* p, size_t n) {
    bytes_ += n;
    while (n > 0) {
      size_t take = std::min(n, size_t(64) - fill_);
      std::memcpy(block_ + fill_, p, take);
      fill_ += take, p += take, n -= take;
      if (fill_ == 64) compress(), fill_ = 0;
    }
  }
  std::string hex() {
    // Finishes the hash (call once). Padding: 0x80, zeros to 56 mod 64, then the message
    // length in bits, big-endian.
    const uint64_t bits = bytes_ * 8;
    const uint8_t one = 0x80, zero = 0;
    update(&one, 1);
    while (fill_ != 56) update(&zero, 1);
    uint8_t len[8];
    for (int b = 0; b < 8; ++b) len[b] = static_cast<uint8_t>(bits >> (56 - 8 * b));
    update(len, 8);
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    for (uint32_t w : h_)
      for (int s = 28; s >= 0; s -= 4) out += kHex[(w >> s) & 0xf];
    return out;
  }

 private:
  void compress() {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t)
      w[t] = uint32_t(block_[4 * t]) << 24 | uint32_t(block_[4 * t + 1]) << 16 |
             uint32_t(block_[4 * t + 2]) << 8 | uint32_t(block_[4 * t + 3]);
    for (int t = 16; t < 64; ++t) {
      uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int t = 0; t < 64; ++t) {
      uint32_t t1 =
          h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    const uint32_t v[8] = {a, b, c, d, e, f, g, h};
    for (int i = 0; i < 8; ++i) h_[i] += v[i];
  }

  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t block_[64] = {};
  size_t fill_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace

std::string sha256_hex(const void* data, size_t n) {
  Sha256 h;
  h.update(static_cast<const uint8_t*>(data), n);
  return h.hex();
}

std::string sha256_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw io::IoError(errno == ENOENT ? io::IoErrorKind::NotFound : io::IoErrorKind::ReadFailed,
                      path, std::string("cannot open: ") + std::strerror(errno));
  // Streamed in 1 MiB chunks: checkpoints can be gigabytes.
  std::vector<uint8_t> chunk(size_t(1) << 20);
  Sha256 h;
  for (;;) {
    ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int e = errno;
      ::close(fd);
      throw io::IoError(io::IoErrorKind::ReadFailed, path,
                        std::string("read: ") + std::strerror(e));
    }
    if (got == 0) break;
    h.update(chunk.data(), static_cast<size_t>(got));
  }
  ::close(fd);
  return h.hex();
}

}  // namespace attnlab::analysis
