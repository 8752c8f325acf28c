// A small seeded generator with the same sequence on every platform and standard library:
// std::uniform_*_distribution are implementation-defined, and a projection must give the
// same picture for a seed everywhere. SplitMix64 (Steele, Lea & Flood 2014, "Fast
// splittable pseudorandom number generators").
#pragma once

#include <cmath>
#include <cstdint>

namespace attnlab::projection {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n): the modulo's bias is below n / 2^64, far under anything visible.
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Standard normal by Box–Muller (the second value is dropped: simplicity over speed).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

}  // namespace attnlab::projection
