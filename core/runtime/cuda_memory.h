// Device memory on CUDA, from the CUDA caching allocator's own statistics: the bytes its
// tensors hold now and the peak since the last reset, per device. Only a build against a
// CUDA LibTorch has them (ATTNLAB_WITH_CUDA, set by CMake when Torch brings torch_cuda);
// elsewhere available() is false and the others throw. The CPU's counterpart is
// CpuMemoryProbe (memory_probe.h).
#pragma once

#include <cstdint>
#include <string>

namespace attnlab::runtime {

// True when this build can read the CUDA allocator's statistics: its LibTorch has CUDA.
bool cuda_memory_stats_available();
// "compiled in (CUDA 13.0)" for a build against a CUDA LibTorch, with the toolkit's version
// it was compiled with; "not compiled in (a CPU-only LibTorch)" otherwise. Whether a device
// is present is another question (runtime::cuda_device_count).
std::string cuda_build_description();
// The peak restarts from the bytes allocated now (torch.cuda.reset_peak_memory_stats).
void reset_cuda_peak(int device);
// Bytes held by tensors on `device` now, and the most since reset_cuda_peak
// (torch.cuda.memory_allocated / max_memory_allocated).
int64_t cuda_allocated_bytes(int device);
int64_t cuda_peak_allocated_bytes(int device);

}  // namespace attnlab::runtime
