// LibTorch's intra-op thread pool starts at 1 thread on this Debian build (measured), so
// attnlab sets it explicitly at start-up: to the machine's cores unless overridden by
// --threads N or the ATTNLAB_THREADS environment variable.
#pragma once

namespace attnlab::runtime {

// requested > 0 wins; otherwise ATTNLAB_THREADS if set and valid; otherwise the number of
// hardware threads. Returns the count now in effect. Throws std::invalid_argument for a
// malformed ATTNLAB_THREADS.
int configure_threads(int requested = 0);

// Thread count LibTorch currently uses for intra-op parallelism.
int current_threads();

}  // namespace attnlab::runtime
