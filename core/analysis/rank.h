// Rank statistics (SPEC §3; RALA Figs. 2, 4, 5, 8) of a stack of matrices, under every
// definition a reader needs to judge "rank r of d":
//   rank            numerical rank, float32 rule as torch.linalg.matrix_rank: SVD in the
//                   matrices' own dtype, σ > max(m, n)·ε(dtype)·σ_max (or the user's
//                   atol / rtol). The paper's rule and the default.
//   precision_rank  float64 singular values of the values above the noise floor of
//                   the precision the values were computed in: σ > 2·√max(m, n)·ε_data·σ_max,
//                   ε_data = ε of float32 or of the dtype, whichever is coarser.
//   effective_rank  exp(H(σ/Σσ)) and stable_rank Σσ²/σ_max², from the float64 σ.
// Why the precision rule: every value of a float32 matrix carries a rounding error of up
// to about ε₃₂ times its size, and |a_ij| <= σ_max; a matrix E of such independent errors
// has ‖E‖₂ ≈ ε₃₂·σ_max·(√m + √n) <= 2·√max(m, n)·ε₃₂·σ_max, and by Weyl's inequality
// every singular value may move by ‖E‖₂. Below that bound a singular value cannot be told
// from rounding. The float32 rule's max(m, n) grows faster than √max(m, n), so it cuts
// higher (by √max(m, n)/2: 4× for a 64×64 buffer, 7× for 196 tokens) and counts fewer.
// Each rule also flags a matrix as ambiguous when a singular value lies within
// kRankAmbiguityFactor of its tolerance either way: moving the tolerance that much would
// change the integer, so the integer says more about the threshold than the matrix.
// The tolerances used are returned with every result so each export can state them.
//
// rank_subjects() names the matrices a trace offers per head: the output, which every
// mechanism has, and what its trace declares (AttentionTrace::rank_matrices):
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

// A singular value within this factor of a rule's tolerance (above or below) makes that
// rule's rank ambiguous. 4 is about how far apart the two rules' tolerances are on these
// matrices (√max(m, n)/2: 4× for 64×64, 7× for 196×64), so a flagged count is one that
// another defensible tolerance would change.
constexpr double kRankAmbiguityFactor = 4.0;

struct RankOptions {
  // The float32 rule's tolerance: absolute when atol > 0; otherwise relative `rtol`·σ_max,
  // and rtol <= 0 means max(m, n)·eps of the matrices' dtype (torch.linalg.matrix_rank's
  // default). The precision rule does not depend on these.
  double atol = 0.0;
  double rtol = 0.0;
  // "max(m,n)*eps(float32)*sigma_max", "rtol=1e-3", "atol=0.01": for exports.
  std::string describe() const;
};

struct RankStats {
  at::Tensor sigma;         // (min(m, n),) float64 singular values, on the CPU, descending
  at::Tensor sigma_native;  // from the SVD in the matrices' dtype where needed (else sigma)
  // Numerical rank, float32 rule as torch.linalg.matrix_rank (sigma_native > tolerance).
  int64_t rank = 0;
  double tolerance = 0.0;
  bool rank_ambiguous = false;
  // Above the values' own rounding noise (sigma > precision_tolerance).
  int64_t precision_rank = 0;
  double precision_tolerance = 0.0;
  bool precision_ambiguous = false;
  double effective_rank = 0.0;  // from sigma
  double stable_rank = 0.0;     // from sigma
};

// One line per definition, for sidecars and docs: the column it fills and its rule.
struct RankDefinition {
  std::string column, label, rule;
};
std::vector<RankDefinition> rank_definitions(const RankOptions& options);
// The ambiguity rule in words ("a singular value within 10x of the tolerance ...").
std::string rank_ambiguity_rule();

// matrices: (n, m, k) (or (m, k)); one RankStats per matrix. Singular values are computed
// on the CPU (matrices on a GPU are copied there), in float64 for every definition, and for
// the float32 rule in the matrices' dtype (as torch does) wherever that could change the
// count: a float64 value within kRankAmbiguityFactor of the tolerance, or a tolerance
// below the default. Elsewhere sigma_native is sigma. One SVD when the matrices are
// float64 already. All-zero matrices: every rank 0.
// A bf16/fp16 stack is analysed as its fp32 copy, by the float32 rules (see rank.cpp).
std::vector<RankStats> rank_statistics(const at::Tensor& matrices, const RankOptions& options = {});

// The same statistics of an m×k matrix whose singular values are known already, e.g. from
// its factors (core/analysis/map_rank.h): `sigma` float64 (any order, missing ones zero),
// the matrix computed in `computed_in` (its ε sets both rules); sigma_native = sigma.
RankStats rank_statistics_of_spectrum(const at::Tensor& sigma, int64_t m, int64_t k,
                                      at::ScalarType computed_in, const RankOptions& options = {});

// The float64 values' Gram route (rank.cpp), exposed for its tests. For a float32 m×k
// matrix: its Gram matrix's error unit e/σ_max² (see rank.cpp); whether descending Gram
// eigenvalues are accurate to 1e-6 (else the matrix takes its SVD); and the check made
// before the eigensolver, true only where they certainly are not (so the SVD comes first).
double gram_error_unit(int64_t m, int64_t k);
bool gram_values_accurate(const double* lambda_descending, int64_t r, double error_unit);
bool gram_surely_inaccurate(const at::Tensor& gram, double error_unit);

struct RankSubject {
  std::string name;     // "kv", "kv_plain", "output", "output_gated"
  at::Tensor matrices;  // (heads, m, k)
};
std::vector<RankSubject> rank_subjects(const attention::AttentionTrace& trace, int64_t b);

}  // namespace attnlab::analysis
