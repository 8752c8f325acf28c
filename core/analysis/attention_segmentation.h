// Attention masks as segmentations (DINO: Caron et al., "Emerging Properties in
// Self-Supervised Vision Transformers", 2021, arXiv 2104.14294, the masks of its Fig. 3 and
// its visualize_attention.py): a head's attention of the class token on the patches is
// turned into a mask by keeping the patches that hold a share tau of its mass (DINO keeps
// 60%), compared with a ground-truth mask by the Jaccard index, and shown at image
// resolution by nearest-neighbour upsampling.
//
// DINO's rule, per row: sort ascending, divide by the row sum, cumulative sum, keep the
// entries whose cumulative value is > 1 − tau. In exact arithmetic an entry is then kept
// exactly when the mass of the entries above it is < tau (1 − S_i < tau, S_i the cumulative
// sum up to it): the kept set is the smallest set of largest entries holding a share
// >= tau of the row's mass (larger only where a tie group straddles tau, below). This is
// how it is computed here (mass_threshold_mask), with
// two deterministic choices where DINO's float32 sort leaves it to rounding and order:
//   ties      equal entries are kept or dropped together: an entry is kept iff the mass of
//             the entries strictly greater than it is < tau · (row sum). A map that is 1 on
//             a mask and 0 elsewhere therefore gives back that mask for every tau.
//   rounding  "mass above < tau · sum" is decided with a slack of (N + 1)·2⁻⁵³·sum, the
//             bound on the rounding of the N-term sums: a set of largest entries whose mass
//             equals tau·sum up to rounding counts as holding tau, so hand examples in
//             decimals behave as exact arithmetic ([0.1, 0.2, 0.3, 0.4] with tau = 0.4 keeps
//             only 0.4, whose mass is exactly 0.4). The largest entries (nothing above
//             them) are kept for every tau > 0, however small.
//   tau = 1   keeps exactly the positive entries (what the rule gives in exact arithmetic;
//             stated directly so that rounding cannot drop a tiny positive entry).
//   zeros     a zero entry is never kept (for tau <= 1 the mass above it is the whole sum),
//             and a row of zeros keeps nothing (no division by its zero sum, no NaN).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace attnlab::analysis {

// maps (..., N): non-negative weights per row of the last dimension (rows need not sum to
// 1; flatten an (h, w) map to one row of h·w first), any float dtype or device. Returns a
// bool tensor of the same shape on the CPU, true where the rule above keeps the entry.
// Throws std::invalid_argument for a 0-D tensor or N = 0, negative or non-finite entries,
// or tau outside (0, 1].
at::Tensor mass_threshold_mask(const at::Tensor& maps, double tau);

// |a ∩ b| / |a ∪ b| of two bool tensors of one shape. Two empty masks give 1.0: both say
// there is no object, so they agree completely (and 0/0 would be NaN). Throws
// std::invalid_argument for tensors that are not bool or differ in shape.
double jaccard(const at::Tensor& a, const at::Tensor& b);

// A token mask (h, w) bool at pixel resolution (out_h, out_w), nearest neighbour: output
// cell (y, x) takes token (⌊y·h/out_h⌋, ⌊x·w/out_w⌋), in integer arithmetic (no float
// scale to round). Bool on the CPU. Throws std::invalid_argument for a mask that is not
// 2-D bool with h, w >= 1, or out_h, out_w < 1.
at::Tensor upsample_token_mask(const at::Tensor& mask, int64_t out_h, int64_t out_w);

}  // namespace attnlab::analysis
