// The GPU check's session program (session.cpp): how one analysis's results on the device
// are compared with the CPU's, output by output (a table's value column, a family of arrays),
// and the tolerance of each, derived, not fitted:
//
//   fp32 (TF32 off): each operation rounds its result once to fp32 (u = 2^-24) and a
//     reduction of K terms adds K roundings; the errors of distinct roundings are
//     independent and of mean zero, so they add like a random walk: with probability
//     1 − 7.5e-6 their sum stays within λ·√N·u with λ = 5 (Higham and Mary, SIAM J. Sci.
//     Comput. 41(5), 2019; the same model as tests/support/bf16_bounds.h). Along the longest
//     path through L blocks (R = 16 operations each, + 2) with reductions of up to K = 4096
//     terms, N = (16·L + 2)·K: ε32 = λ·√((16L + 2)·K)·u. The CPU and the device are each
//     within ε32 of the exact forward, so they differ by at most 2·ε32.
//   bf16: the device's bf16 forward against the CPU's fp32 one, the bound of
//     tests/support/bf16_bounds.h (ε16 = λ·√(16L + 2)·2^-8 + (16L + 2)·K·2^-24, accumulation
//     in fp32 on the GPU as on the CPU), plus the reference's own ε32.
//
// A value column or array moves by at most κ·ε of its scale (its largest |reference|), κ
// its conditioning: 1 for a mean, maximum, norm, distance or entropy of one layer's values,
// 2 for a ratio, 2p for degree p, one ε per layer for a product over layers; a share of a
// total (a spectrum's high-frequency share, in [0, 1]) moves by κ·ε of 1 — the rules of
// tests/analysis/bf16_analyses_test.cpp, extended to the arrays and to the opt-in analyses
// (erf, heads, faithfulness) that test does not run. Outputs that are not continuous in the
// activations (an argmax, a count over a threshold, a numerical rank, a mask) have no such
// bound: a value within ε of a tie or threshold may go either way, at bf16 and, rarely, at
// fp32, so they are reported as "flips: k of n" (entries that moved by more than ε of the
// scale, which rounding alone cannot do) and never fail. Outputs that depend on such
// a decision as a whole (a PCA fitted on a thresholded set, perturbation curves ordered by a
// map's values, anything of the predicted class when the two sides predict different
// classes) are reported with their difference and "not judged", with the reason.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"

namespace attnlab::gpucheck {

// What one analysis left on one side (CPU or device) for one image.
struct SideResults {
  std::vector<analysis::Table> tables;
  std::vector<analysis::Array> arrays;  // per-image (emitted) and image-averaged ones
  std::vector<std::string> warnings, skipped;
  int64_t top1 = -1;  // the forward's predicted class (-1: an embedding model)
};

// The tolerances of one comparison.
struct Bounds {
  bool bf16 = false;
  double eps = 0;  // 2·ε32 (fp32) or ε16 + ε32 (bf16), relative to an output's scale
  int blocks = 0;  // L above (rollout's κ)
};
// ε as above for a model of `blocks` blocks.
Bounds bounds_for(bool bf16, int blocks);

// One printed line: an output's comparison.
struct Verdict {
  std::string output;  // "table rank_heads.rank_mean", "array maps[heads]"
  std::string text;    // "max|d|/scale 1.2e-06 <= 5.3e-04 (k=1) PASS", "flips: 3 of 49", ...
  bool failed = false;
  bool flips = false;  // a discrete output that changed somewhere (reported, not failed)
};

// Every table and array of `analysis` on the device against the CPU's.
std::vector<Verdict> compare_results(const std::string& analysis, const SideResults& cpu,
                                     const SideResults& device, const Bounds& bounds);

}  // namespace attnlab::gpucheck
