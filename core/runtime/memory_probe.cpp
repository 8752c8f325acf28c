// CpuMemoryProbe: a counting wrapper around LibTorch's default CPU allocator.
#include "core/runtime/memory_probe.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <stdexcept>

namespace attnlab::runtime {
namespace {

// Installed with this priority so that it wins over the default allocator (priority 0)
// and so that restoring the default (with the same priority) is allowed.
constexpr uint8_t kProbePriority = 1;

struct Counters {
  std::atomic<int64_t> live{0}, peak{0}, largest{0}, count{0};
};
Counters g_counters;
std::atomic<bool> g_installed{false};
c10::Allocator* g_previous = nullptr;

void raise_max(std::atomic<int64_t>& target, int64_t value) {
  int64_t seen = target.load();
  while (value > seen && !target.compare_exchange_weak(seen, value)) {
  }
}

// What each probed block carries so that its free can be counted.
struct Block {
  c10::DataPtr inner;
  int64_t bytes;
};

void free_block(void* ctx) {
  auto* block = static_cast<Block*>(ctx);
  g_counters.live -= block->bytes;
  delete block;  // frees `inner` through the wrapped allocator
}

class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    c10::DataPtr inner = g_previous->allocate(n);
    void* data = inner.get();
    const c10::Device device = inner.device();
    auto* block = new Block{std::move(inner), static_cast<int64_t>(n)};
    const int64_t live = (g_counters.live += block->bytes);
    raise_max(g_counters.peak, live);
    raise_max(g_counters.largest, block->bytes);
    ++g_counters.count;
    return {data, block, &free_block, device};
  }
};
CountingAllocator g_counting;

}  // namespace

CpuMemoryProbe::CpuMemoryProbe() {
  if (g_installed.exchange(true)) throw std::logic_error("a CpuMemoryProbe is already active");
  g_previous = c10::GetCPUAllocator();
  c10::SetCPUAllocator(&g_counting, kProbePriority);
  reset_peak();
}

CpuMemoryProbe::~CpuMemoryProbe() {
  c10::SetCPUAllocator(g_previous, kProbePriority);
  g_installed = false;
}

void CpuMemoryProbe::reset_peak() {
  g_counters.peak = g_counters.live.load();
  g_counters.largest = 0;
  g_counters.count = 0;
}

int64_t CpuMemoryProbe::live_bytes() const {
  return g_counters.live;
}
int64_t CpuMemoryProbe::peak_bytes() const {
  return g_counters.peak;
}
int64_t CpuMemoryProbe::largest_block() const {
  return g_counters.largest;
}
int64_t CpuMemoryProbe::allocations() const {
  return g_counters.count;
}

}  // namespace attnlab::runtime
