// The cross-world tolerances (derivation in tolerance.h).
#include "tests/cross_world/tolerance.h"

#include <algorithm>

namespace attnlab::testing::cross_world {

double float64_bound(double m_both, double scale, double a, double b, bool rounded) {
  const double measured = std::max(m_both, kU32 * scale);  // at least one float32 rounding
  const double own = 2.0 * kFloat64Factor * (kU64 / kU32) * measured;
  return rounded ? own + kU32 * (std::abs(a) + std::abs(b)) : own;
}

double apriori_float32(double scale, int n) {
  return kLambda * std::sqrt(double(n)) * kU32 * scale;
}

double float32_bound(double m_ref, double scale, int n, double float64_part) {
  return std::max(kFloat32Factor * m_ref, kKernelRatio * apriori_float32(scale, n)) + float64_part;
}

}  // namespace attnlab::testing::cross_world
