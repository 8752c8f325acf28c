// Neumaier's variant of Kahan summation: the rounding error of each addition is kept in a
// second tensor, whichever operand is larger.
#include "core/analysis/compensated_sum.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace attnlab::analysis {

void CompensatedSum::add(const at::Tensor& v) {
  if (!sum_.defined()) {
    sum_ = v.to(at::kCPU, at::kDouble).clone();
    comp_ = at::zeros_like(sum_);
    return;
  }
  if (!sum_.sizes().equals(v.sizes()))
    throw std::invalid_argument("CompensatedSum: a term of another shape");
  const at::Tensor t = sum_ + v;
  // The part of the smaller operand that the addition rounded away, exactly.
  comp_ += at::where(sum_.abs() >= v.abs(), (sum_ - t) + v, (v - t) + sum_);
  sum_ = t;
}

void CompensatedSum::absorb(const CompensatedSum& other) {
  if (!other.defined()) return;
  const bool fresh = !defined();
  add(other.sum_);
  if (fresh)
    comp_ = other.comp_.clone();
  else
    comp_ += other.comp_;
}

at::Tensor CompensatedSum::value() const {
  return sum_ + comp_;
}

CompensatedSum CompensatedSum::restore(const at::Tensor& sum, const at::Tensor& compensation) {
  if (sum.scalar_type() != at::kDouble || !sum.sizes().equals(compensation.sizes()))
    throw std::invalid_argument(
        "CompensatedSum: a saved sum must be float64 with its compensation");
  CompensatedSum s;
  s.sum_ = sum.clone();
  s.comp_ = compensation.to(at::kDouble).clone();
  return s;
}

}  // namespace attnlab::analysis
