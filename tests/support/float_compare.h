// Comparing two float computations of one quantity that are not the same computation.
//
// Two float32 results that differ only in the order their sums are taken (a traced and an
// untraced forward, one row computed alone and the same row inside a matrix, another BLAS
// kernel or thread count, one module instance and another holding the same weights) agree
// to a few units in the last place of the values' scale, not bit for bit: which kernel
// OpenBLAS picks (OPENBLAS_CORETYPE), how it and ATen split the work over threads and how
// the data is aligned all change the rounding. Such tests compare with
// reordering_tolerance(); exact equality is kept only where the two sides are the same
// computation by construction (or exact in floating point, such as sums of small
// integers), and the test says so. scripts/test_portability.sh runs the suite under
// several kernels and thread counts to keep it that way.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <sstream>

namespace attnlab::testing {

// max |a − b| in float64, on the CPU. Different shapes fail the test and give 1e30.
inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  if (!a.sizes().equals(b.sizes())) return 1e30;
  return (a.detach().to(at::kDouble).cpu() - b.detach().to(at::kDouble).cpu())
      .abs()
      .max()
      .item<double>();
}

// The default bound, in units of FLT_EPSILON times the reference's largest magnitude.
// Measured: traced against untraced Castling differed by 2 ulps of its scale on an AMD
// EPYC machine (OPENBLAS_CORETYPE=Haswell). Reordering a sum moves it by a few ulps of
// its terms' magnitude in practice (the worst case grows with the length, the typical
// one with its square root). 64 ulps leaves room for that and is still four orders of
// magnitude below the smallest real change these tests look for (1e-3 of the scale: a
// dropped branch, a wrong weight).
constexpr double kReorderingUlps = 64.0;

// The largest difference two orders of summing `reference` may show.
inline double reordering_tolerance(const at::Tensor& reference, double ulps = kReorderingUlps) {
  const double scale =
      reference.numel() == 0 ? 0.0 : reference.detach().abs().max().to(at::kDouble).item<double>();
  return ulps * static_cast<double>(FLT_EPSILON) * std::max(scale, 1e-30);
}

// EXPECT_TRUE(agree_up_to_reordering(got, want)): same shape, and every element within
// reordering_tolerance(want); the message gives the largest difference and the bound.
inline ::testing::AssertionResult agree_up_to_reordering(const at::Tensor& got,
                                                         const at::Tensor& want,
                                                         double ulps = kReorderingUlps) {
  if (!got.sizes().equals(want.sizes())) {
    std::ostringstream m;
    m << "shapes differ: " << got.sizes() << " vs " << want.sizes();
    return ::testing::AssertionFailure() << m.str();
  }
  const double tol = reordering_tolerance(want, ulps);
  const double diff =
      got.numel() == 0 ? 0.0
                       : (got.detach().to(at::kDouble).cpu() - want.detach().to(at::kDouble).cpu())
                             .abs()
                             .max()
                             .item<double>();
  if (diff <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |difference| " << diff << " exceeds the " << ulps
                                       << "-ulp reordering bound " << tol;
}

}  // namespace attnlab::testing
