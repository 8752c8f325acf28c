// The cross-world test's tolerances, derived (every factor below is a property of float32,
// float64 or of the statistics of rounding; none is a measured fudge).
//
// Setting. One analysis output y (a table cell or an array element) is computed four times:
// in the reference world R (LibTorch 1.13, committed) and this world C, each at float32
// (`attnlab analyze`) and float64 (attnlab_analyze_fp64). All four start from the same
// values: the weights are float32 numbers in a file (exact in float64), and the picture is
// resized by attnlab's own fixed-point code; the float64 runs normalise it in float64, the
// float32 runs in float32 (one rounding of theirs among all the others).
//
// Rounding model (Higham, "Accuracy and Stability of Numerical Algorithms", §2.2, first
// order): y_{W,p} − y* = Σ_k c_k·θ_{W,p,k}, |θ| ≤ u_p, where y* is the exact result, the sum
// runs over the roundings of the computation and c_k is y's sensitivity to the k-th. Both
// precisions and both worlds run the same operations (the same attnlab code), so the c_k
// are shared; the rounding fractions θ/u_p are unrelated numbers in [−1, 1], which Higham
// and Mary (SIAM J. Sci. Comput. 41(5), 2019) model as independent and of mean zero. Then
// the float32 error E_W = |y_{W,32} − y_{W,64}| (measured: the float64 result is exact to
// float32's eye) and the float64 error |y_{W,64} − y*| are draws of one distribution scaled
// by u32 and u64. Its width varies from output to output (conditioning), so the test
// measures it per group (a table column, an array: values of one quantity at one scale):
// M = max over the group's values of E.
//
// (a) float64, world against world: |y_{C,64} − y_{R,64}| ≤ 2·F64·(u64/u32)·M, with M taken
//     over both worlds (2m draws for a group of m values) and floored at u32·scale (one
//     float32 rounding of the group's largest |y|; an exactly computed group then gets F64
//     float64 roundings of its scale). The 2 is the two worlds' float64 errors. F64 = 2^10:
//     the chance that one float64 error exceeds F·max of 2m draws of its own distribution is
//     E[erfc(F·M/√2)] ≈ 0.64/F² for m = 1 under the Gaussian limit of the sum (density of M
//     near 0: 2·(2/π)·t), 6e-7 for F = 2^10, and ~(1/F)^(2m) smaller for larger groups.
//     Arrays leave the analyses as float32 (session::to_array) in the float64 runs too:
//     each side's value is its float64 result rounded once more, so u32·(|a| + |b|) is
//     added per element (|fl(x) − x| ≤ u32·|x|).
// (b) float32, world against world: |y_{C,32} − y_{R,32}| ≤ max(F32·M_R, k·floor) + (a)'s
//     bound, where M_R is the reference world's own group maximum alone: the current world's
//     error E_C is what is tested (|y_{C,32} − y_{R,32}| ≤ E_C + E_R + |y_{C,64} − y_{R,64}|
//     and E_R ≤ M_R by definition; with this world's M in the bound it could not fail).
//     The worlds' error distributions differ in width by at most k = 20, the largest ratio
//     of two kernels' error bounds for one operation (PyTorch 2.x's softmax exponential,
//     Vectorized<float>::exp_u20, is "ULP=20" where 1.13's SLEEF exp is 1 ulp; both BLAS
//     libraries sum in blocks). Two terms:
//     - floor = λ·√n·u32·scale, the a-priori float32 budget of a well-conditioned output
//       (κ = 1) after n roundings on the longest path (tests/support/bf16_bounds.h: 16 per
//       block plus the input and the weights; λ = 5, Hoeffding: 1 − 7.5e-6); with every
//       rounding up to k·u32, k·floor. It keeps a group whose measured errors happen to be
//       small in the reference from failing a normal error here.
//     - F32·M_R for the ill-conditioned groups (κ > k, measured above the floor): F32 = 2^10
//       bounds the ratio of a draw to the maximum of m draws of a k times narrower
//       distribution, exceeded with probability ≈ 0.64·k/F = 1.2 % for m = 1 (the Cauchy
//       tail), ~(k/F)² = 4e-4 for m = 2, less beyond.
//     What it catches: a float32 path of this world that rounds far more than float32
//     should, e.g. a forward at bf16, whose budget (bf16_bounds.h) is the floor's with 2^-8
//     for 2^-24: 2^16 / k = 3277 times k·floor.
// (c) Where the float64 route cannot remove float32 (a model that computes constants in
//     float32 with LibTorch's kernels: RAVLT's RoPE angles, linspace → pow → reciprocal, which
//     differ by a few float32 ulps between builds and enter the float64 forward as they are),
//     the float64 comparison takes (b)'s bound: the float64 results then differ by float32
//     perturbations of those constants.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnlab::testing::cross_world {

constexpr double kU32 = 5.9604644775390625e-08;   // 2^-24, float32's unit roundoff
constexpr double kU64 = 1.1102230246251565e-16;   // 2^-53, float64's
constexpr double kFloat64Factor = 1024.0;          // F64 above
constexpr double kFloat32Factor = 1024.0;          // F32 above
constexpr double kLambda = 5.0;                    // Hoeffding's λ (as bf16_bounds.h)
constexpr double kKernelRatio = 20.0;              // k above

// (a)'s bound for one element: `m_both` the group's measured float32 error over both worlds,
// `scale` the group's largest |float64 value|, `a` and `b` the two float64 values compared,
// `rounded` whether they were rounded to float32 on output (arrays).
double float64_bound(double m_both, double scale, double a, double b, bool rounded);

// (b)'s bound for one element: `m_ref` the reference world's measured group error, `scale`,
// the roundings `n` on the model's longest path, and (a)'s bound for the same element.
double float32_bound(double m_ref, double scale, int n, double float64_part);

// The a-priori float32 budget of a κ = 1 output: λ·√n·u32·scale.
double apriori_float32(double scale, int n);

}  // namespace attnlab::testing::cross_world
