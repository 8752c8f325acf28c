// One case's four runs (reference and this world, float32 and float64) compared group by
// group under tolerance.h's bounds and output_kinds.h's rules. Returns what failed and, per
// analysis, the largest difference against its bound, for the test to report.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/cross_world/output_values.h"

namespace attnlab::testing::cross_world {

using Values = std::map<std::string, ValueGroup>;

struct Runs {
  Values ref32, ref64, cur32, cur64;
  int roundings = 0;              // n on the model's longest path (bf16_bounds.h's rule)
  bool float32_constants = false;  // tolerance.h (c)
};

// The largest difference of one analysis at one precision, and its bound there.
struct Worst {
  double ratio = 0.0, diff = 0.0, bound = 0.0;
  std::string where;  // group and element
  int compared = 0;   // values compared
};

struct Comparison {
  std::vector<std::string> failures;  // one line each
  // analysis → worst at float64 and float32 (continuous values)
  std::map<std::string, Worst> float64, float32;
  // analysis → discrete values compared (each at both precisions), and those allowed to
  // differ, with the reason
  std::map<std::string, int> discrete_compared;
  std::vector<std::string> allowed;  // one line per allowed difference
};

// `analysis_of` names the analysis a group belongs to (by table or array folder).
Comparison compare_runs(const Runs& runs,
                        const std::map<std::string, std::string>& analysis_of);

}  // namespace attnlab::testing::cross_world
