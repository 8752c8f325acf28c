// SHA-256 (FIPS 180-4), our own implementation: fingerprints checkpoints in the settings
// sidecar so a result can be traced to the exact weights. Files are hashed in 1 MiB
// chunks in constant memory.
#include "core/analysis/sha256.h"

#include <cpuid.h>
#include <fcntl.h>
#include <immintrin.h>
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

// The x86 SHA extensions (SHA-NI: Intel since Goldmont/Ice Lake, AMD since Zen) do two
// rounds per instruction: about 5x the portable code below, which matters for a multi-GB
// checkpoint. Same state layout and result; chosen at run time by what the CPU reports.
bool cpu_has_sha_extensions() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool ssse3 = c & (1u << 9), sse41 = c & (1u << 19);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return ssse3 && sse41 && (b & (1u << 29));
}

// Compresses `blocks` 64-byte blocks into state (a..h) with the SHA instructions. The
// message schedule is kept four words to a register: W[t..t+3] from the four before it.
__attribute__((target("sha,ssse3,sse4.1"))) void compress_sha_extensions(uint32_t state[8],
                                                                        const uint8_t* data,
                                                                        size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  // The instructions want the state as ABEF and CDGH.
  __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)),
                                  0xB1);  // CDAB
  __m128i state1 = _mm_shuffle_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);  // EFGH
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);                         // ABEF
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);                              // CDGH
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef = state0, cdgh = state1;
    __m128i w[4];
    for (int g = 0; g < 16; ++g) {
      __m128i next;
      if (g < 4) {
        next = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byte_swap);
      } else {  // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]
        __m128i part = _mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]);
        part = _mm_add_epi32(part, _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));
        next = _mm_sha256msg2_epu32(part, w[(g + 3) % 4]);
      }
      w[g % 4] = next;
      __m128i msg = _mm_add_epi32(
          next, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g)));
      state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
      msg = _mm_shuffle_epi32(msg, 0x0E);
      state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
    }
    state0 = _mm_add_epi32(state0, abef);
    state1 = _mm_add_epi32(state1, cdgh);
  }
  tmp = _mm_shuffle_epi32(state0, 0x1B);           // FEBA
  state1 = _mm_shuffle_epi32(state1, 0xB1);        // DCHG
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);     // DCBA
  state1 = _mm_alignr_epi8(state1, tmp, 8);        // HGFE
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), state1);
}

// Incremental hasher: whole 64-byte blocks are compressed as they arrive, so a file is
// hashed in constant memory.
class Sha256 {
 public:
  explicit Sha256(bool sha_extensions) : sha_extensions_(sha_extensions) {}

  void update(const uint8_t* p, size_t n) {
    bytes_ += n;
    while (n > 0) {
      if (fill_ == 0 && n >= 64 && sha_extensions_) {  // whole blocks straight from the input
        const size_t blocks = n / 64;
        compress_sha_extensions(h_, p, blocks);
        p += 64 * blocks, n -= 64 * blocks;
        continue;
      }
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
    if (sha_extensions_) return compress_sha_extensions(h_, block_, 1);
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
  bool sha_extensions_;
};

bool use_sha_extensions() {
  static const bool available = cpu_has_sha_extensions();  // the CPU does not change
  return available;
}

}  // namespace

std::string sha256_hex(const void* data, size_t n) {
  return sha256_hex(data, n, Sha256Code::Fastest);
}

bool sha256_extensions_available() {
  return use_sha_extensions();
}

std::string sha256_hex(const void* data, size_t n, Sha256Code code) {
  Sha256 h(code == Sha256Code::Fastest && use_sha_extensions());
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
  Sha256 h(use_sha_extensions());
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
