// The CUDA caching allocator's statistics (cuda_memory.h). Compiled against its header only
// in a CUDA build; this machine's CPU-only LibTorch takes the #else branch.
#include "core/runtime/cuda_memory.h"

#include <stdexcept>

#ifdef ATTNLAB_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>  // CUDART_VERSION: the toolkit this file was compiled with
#endif

namespace attnlab::runtime {

#ifdef ATTNLAB_WITH_CUDA

namespace {
// Index 0 of a statistic's array is the aggregate over pool kinds (StatType::AGGREGATE in
// every LibTorch from 1.10 to 2.x, where the enum moved namespace).
constexpr size_t kAggregate = 0;
}  // namespace

bool cuda_memory_stats_available() {
  return true;
}
std::string cuda_build_description() {
  return "compiled in (CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
         std::to_string(CUDART_VERSION % 1000 / 10) + ")";
}
void reset_cuda_peak(int device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(device);
}
int64_t cuda_allocated_bytes(int device) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(device)
      .allocated_bytes[kAggregate]
      .current;
}
int64_t cuda_peak_allocated_bytes(int device) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(device).allocated_bytes[kAggregate].peak;
}

#else

namespace {
[[noreturn]] void no_cuda() {
  throw std::runtime_error(
      "this build has no CUDA: its LibTorch is CPU-only (scripts/build_cuda.sh)");
}
}  // namespace

bool cuda_memory_stats_available() {
  return false;
}
std::string cuda_build_description() {
  return "not compiled in (a CPU-only LibTorch)";
}
void reset_cuda_peak(int) {
  no_cuda();
}
int64_t cuda_allocated_bytes(int) {
  no_cuda();
}
int64_t cuda_peak_allocated_bytes(int) {
  no_cuda();
}

#endif

}  // namespace attnlab::runtime
