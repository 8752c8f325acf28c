// How many softmax-core calls took the fused and the eager path while a piece of code ran:
// the one counter-difference helper shared by the kernel-, mechanism- and model-level tests
// of which path a forward takes (issue 65).
#pragma once

#include <utility>

#include "core/attention/fused_attention.h"

namespace attnlab::testing {

// The calls each path took while `body` ran (this thread's and its workers' counts alike:
// attention_path_counts() is process-wide).
template <class F>
attention::AttentionPathCounts attention_paths_during(F&& body) {
  const auto before = attention::attention_path_counts();
  std::forward<F>(body)();
  const auto after = attention::attention_path_counts();
  return {after.fused - before.fused, after.eager - before.eager};
}

}  // namespace attnlab::testing
