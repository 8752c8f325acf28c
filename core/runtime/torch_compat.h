// The one place where attnlab's code meets differences between LibTorch versions: Debian
// 12's 1.13.1 (scripts/test.sh) and PyPI's 2.x (scripts/test_pytorch.sh; the pin is in
// scripts/pytorch-requirements.txt). Every version test lives here and becomes a feature
// macro or a type alias that the rest of the tree uses; nothing else compares
// TORCH_VERSION_* (a test may print it). Verified: 1.13.1 and 2.11.0 (README, "Two LibTorch
// worlds"); the GPU check has also built against 2.11 + CUDA 13.0.
#pragma once

#include <c10/util/Exception.h>
#include <torch/version.h>

// True when the LibTorch compiled against is major.minor or newer.
#define ATTNLAB_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||          \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// at::scaled_dot_product_attention came with 2.0 (core/attention/fused_attention.cpp);
// its `scale` argument with 2.1 (2.0 divides by √d itself).
#if ATTNLAB_TORCH_AT_LEAST(2, 0)
#define ATTNLAB_HAS_SDPA 1
#endif
#if ATTNLAB_TORCH_AT_LEAST(2, 1)
#define ATTNLAB_SDPA_HAS_SCALE 1
#endif

// 2.3 made c10::Allocator::allocate non-const and added a pure virtual copy_data
// (core/runtime/memory_probe.cpp wraps the CPU allocator).
#if ATTNLAB_TORCH_AT_LEAST(2, 3)
#define ATTNLAB_ALLOCATE_QUALIFIER
#define ATTNLAB_ALLOCATOR_COPY_DATA 1
#else
#define ATTNLAB_ALLOCATE_QUALIFIER const
#endif

namespace attnlab::compat {

// A warning handler that drops every warning: 2.0 changed WarningHandler::process to take
// one c10::Warning, and moved the guard from c10::Warning to c10::WarningUtils.
struct SilentWarningHandler : c10::WarningHandler {
#if ATTNLAB_TORCH_AT_LEAST(2, 0)
  void process(const c10::Warning&) override {}
#else
  void process(const c10::SourceLocation&, const std::string&, const bool) override {}
#endif
};
#if ATTNLAB_TORCH_AT_LEAST(2, 0)
using WarningHandlerGuard = c10::WarningUtils::WarningHandlerGuard;
#else
using WarningHandlerGuard = c10::Warning::WarningHandlerGuard;
#endif

}  // namespace attnlab::compat
