// Compensated summation (Neumaier's variant of Kahan's): the exact rounding error of each
// addition is kept in a second tensor.
#include "core/analysis/compensated_sum.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>

#include "core/io/npy.h"
#include "core/io/torch_bridge.h"

namespace attnlab::analysis {

void CompensatedSum::add(const at::Tensor& v) {
  if (!sum_.defined()) {
    sum_ = v.to(at::kCPU, at::kDouble).clone().contiguous();
    comp_ = at::zeros_like(sum_);
    return;
  }
  if (!sum_.sizes().equals(v.sizes()))
    throw std::invalid_argument("CompensatedSum: a term of another shape");
  // In place, one pass (the session adds a layer's whole spectrum per image: a chain of
  // tensor ops made ten passes and as many allocations); a copy of this sum keeps its own.
  if (sum_.use_count() > 1 || !sum_.is_contiguous())
    sum_ = sum_.clone(at::MemoryFormat::Contiguous);
  if (comp_.use_count() > 1 || !comp_.is_contiguous())
    comp_ = comp_.clone(at::MemoryFormat::Contiguous);
  // A float32 term is widened value by value in the loop (exact), not copied first.
  const bool single = v.device().is_cpu() && v.scalar_type() == at::kFloat;
  const at::Tensor term = single ? v.contiguous() : v.to(at::kCPU, at::kDouble).contiguous();
  if (single)
    add_terms(term.data_ptr<float>());
  else
    add_terms(term.data_ptr<double>());
}

template <typename T>
void CompensatedSum::add_terms(const T* x) {
  double* sum = sum_.data_ptr<double>();
  double* comp = comp_.data_ptr<double>();
  for (int64_t i = 0, n = sum_.numel(); i < n; ++i) {
    const double s = sum[i], v = static_cast<double>(x[i]), t = s + v;
    // The part of the addends that the addition rounded away, exactly (Knuth's TwoSum: the
    // same error Neumaier's comparison of magnitudes finds, without a branch per element).
    const double v_part = t - s;
    comp[i] += (s - (t - v_part)) + (v - v_part);
    sum[i] = t;
  }
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

namespace {

at::Tensor load_float64(const std::string& dir, const nlohmann::json& file) {
  const std::string name = file.get<std::string>();
  if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos)
    throw std::runtime_error("a saved sum names the file '" + name + "' outside " + dir);
  const at::Tensor t = io::to_torch(io::read_npy(dir + "/" + name));
  if (t.scalar_type() != at::kDouble)
    throw std::runtime_error(dir + "/" + name + ": a saved sum is float64, this is not");
  return t;
}

}  // namespace

nlohmann::json save_compensated_sum(const CompensatedSum& s, const std::string& dir,
                                    const std::string& stem) {
  const std::string sum = stem + ".npy", comp = stem + "_compensation.npy";
  io::write_npy(dir + "/" + sum, io::from_torch(s.sum().contiguous()));
  io::write_npy(dir + "/" + comp, io::from_torch(s.compensation().contiguous()));
  return {{"sum", sum}, {"compensation", comp}};
}

CompensatedSum load_compensated_sum(const nlohmann::json& files, const std::string& dir) {
  return CompensatedSum::restore(load_float64(dir, files.at("sum")),
                                 load_float64(dir, files.at("compensation")));
}

}  // namespace attnlab::analysis
