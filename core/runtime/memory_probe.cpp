// CpuMemoryProbe: a counting wrapper around LibTorch's default CPU allocator.
#include "core/runtime/memory_probe.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "core/runtime/torch_compat.h"

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

// The blocks handed out while probing, by data pointer. The context of each DataPtr is
// its data pointer (some LibTorch code, e.g. raw_allocate(), requires exactly that), so
// the bookkeeping lives in this side table.
struct Block {
  c10::DataPtr inner;
  int64_t bytes;
};
std::mutex g_blocks_mutex;
std::unordered_map<void*, Block>& blocks() {
  static auto* table = new std::unordered_map<void*, Block>();  // outlives static dtors
  return *table;
}

void free_block(void* data) {
  Block block;
  {
    std::lock_guard<std::mutex> lock(g_blocks_mutex);
    auto it = blocks().find(data);
    if (it == blocks().end()) return;
    block = std::move(it->second);
    blocks().erase(it);
  }
  g_counters.live -= block.bytes;
  // `block.inner` frees the memory through the wrapped allocator here.
}

// allocate's qualifier and copy_data differ between LibTorch 1.13 and 2.3+ (torch_compat.h).

class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) ATTNLAB_ALLOCATE_QUALIFIER override {
    c10::DataPtr inner = g_previous->allocate(n);
    void* data = inner.get();
    const c10::Device device = inner.device();
    const auto bytes = static_cast<int64_t>(n);
    if (data) {
      std::lock_guard<std::mutex> lock(g_blocks_mutex);
      blocks()[data] = Block{std::move(inner), bytes};
    }
    const int64_t live = (g_counters.live += bytes);
    raise_max(g_counters.peak, live);
    raise_max(g_counters.largest, bytes);
    ++g_counters.count;
    return {data, data, &free_block, device};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }
#ifdef ATTNLAB_ALLOCATOR_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif
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
