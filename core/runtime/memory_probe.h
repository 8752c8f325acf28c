// Measures what LibTorch allocates on the CPU while a probe is alive: bytes live now,
// the peak since the probe started (or reset_peak()), and the largest single block.
// The tests use it to prove that an implicit-row query never allocates an N×N tensor;
// the benchmarks use it for peak memory. It wraps the CPU allocator process-wide, so at
// most one probe may exist at a time (a second one throws). CUDA peak memory comes from
// the CUDA caching allocator's own statistics instead (see bench/attention_bench.cpp).
#pragma once

#include <cstdint>

namespace attnlab::runtime {

class CpuMemoryProbe {
 public:
  CpuMemoryProbe();
  ~CpuMemoryProbe();
  CpuMemoryProbe(const CpuMemoryProbe&) = delete;
  CpuMemoryProbe& operator=(const CpuMemoryProbe&) = delete;

  // Peak and largest block restart from the bytes live now.
  void reset_peak();
  int64_t live_bytes() const;     // allocated through the probe and not yet freed
  int64_t peak_bytes() const;     // maximum of live_bytes since start / reset_peak()
  int64_t largest_block() const;  // largest single allocation since start / reset_peak()
  int64_t allocations() const;    // number of allocations since start / reset_peak()
};

}  // namespace attnlab::runtime
