// Deterministic data parallelism for the projections: work is cut into fixed blocks whose
// results each land in their own slots, so the answer does not depend on which thread ran
// which block; any reduction is then done by the caller in index order. Progress is
// reported (and cancellation checked) from the calling thread between waves of blocks.
#pragma once

#include <cstdint>
#include <functional>

#include "core/projection/matrix.h"

namespace attnlab::projection {

// Runs body(block) for block in [0, blocks) on `threads` threads (1: inline). Exceptions
// from a body are rethrown in the caller (the first by block order). When `progress` is
// set it is told (blocks done, blocks) after each wave of 4×threads blocks and may cancel.
void parallel_blocks(int64_t blocks, int threads, const std::function<void(int64_t)>& body,
                     const Progress& progress = {}, const char* stage = "");

}  // namespace attnlab::projection
