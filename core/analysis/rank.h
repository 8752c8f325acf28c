// Rank statistics (SPEC §3; RALA Figs. 2, 4, 5, 8) of a stack of matrices: singular values
// σ (descending), numerical rank with torch.linalg.matrix_rank's tolerance by default
// (σ > max(m, n)·eps(dtype)·σ_max) or one the user sets, effective rank exp(H(σ/Σσ)),
// stable rank Σσ²/σ_max². The tolerance actually used is returned with every result so
// each export can state it.
//
// rank_subjects() names the matrices a trace offers per head:
//   "kv"           the KV buffer (d×d): linear Σκ(k)ᵀv; RALA Σα_j κ(k_j)ᵀv_j; Castling k̂ᵀv
//   "kv_plain"     RALA's un-augmented buffer (α = 1)
//   "output"       the head's attention output rows·v (N×d) — every mechanism
//   "output_gated" RALA's gated output y ⊙ o (y = output + lepe, the tensor the gate multiplies)
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

struct RankOptions {
  // Absolute tolerance when > 0; otherwise relative `rtol`·σ_max, and rtol <= 0 means
  // max(m, n)·eps of the matrices' dtype (torch.linalg.matrix_rank's default).
  double atol = 0.0;
  double rtol = 0.0;
  // "max(m,n)*eps(float32)*sigma_max", "rtol=1e-3", "atol=0.01": for exports.
  std::string describe() const;
};

struct RankStats {
  at::Tensor sigma;  // (min(m, n),) float64 on CPU, descending
  int64_t rank = 0;
  double effective_rank = 0.0;
  double stable_rank = 0.0;
  double tolerance = 0.0;  // absolute threshold σ > tolerance used for `rank`
};

// matrices: (n, m, k) (or (m, k)); one RankStats per matrix. Singular values are computed
// in the matrices' dtype (as torch does) on their device. All-zero matrices: rank 0,
// effective and stable rank 0.
std::vector<RankStats> rank_statistics(const at::Tensor& matrices, const RankOptions& options = {});

struct RankSubject {
  std::string name;     // "kv", "kv_plain", "output", "output_gated"
  at::Tensor matrices;  // (heads, m, k)
};
std::vector<RankSubject> rank_subjects(const attention::AttentionTrace& trace, int64_t b);

}  // namespace attnlab::analysis
