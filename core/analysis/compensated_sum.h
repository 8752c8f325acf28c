// A float64 tensor sum whose value does not depend on the order of its terms (to the last
// bit, but for sums within a few units of 1e-30 of a rounding boundary): Neumaier's
// compensated summation, element-wise. The session's image-averaged arrays (spectra, CKA's
// HSIC sums, ERF, singular values) use it so that a run split into shards and merged
// (`attnlab merge`) gives the single run's means, not means that differ in the last bits
// because the images were added in other groups.
#pragma once

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <string>

namespace attnlab::analysis {

class CompensatedSum {
 public:
  // `v` of the same shape every time (the caller checks and says whose); float32 and
  // float64 terms are added at float64 precision.
  void add(const at::Tensor& v);
  // Adds another sum (a shard's) with its compensation.
  void absorb(const CompensatedSum& other);
  bool defined() const { return sum_.defined(); }
  at::Tensor value() const;  // sum + compensation
  const at::Tensor& sum() const { return sum_; }
  const at::Tensor& compensation() const { return comp_; }
  // A saved sum (a shard's state) back; both float64, the same shape.
  static CompensatedSum restore(const at::Tensor& sum, const at::Tensor& compensation);

 private:
  template <typename T>
  void add_terms(const T* terms);  // sum_'s numel() of them, contiguous
  at::Tensor sum_, comp_;
};

// A sum saved for another process (a shard's state, `attnlab merge`): <dir>/<stem>.npy and
// <stem>_compensation.npy, float64, named in the returned {"sum", "compensation"}; and read
// back from that JSON, refusing a file name outside `dir` or an array that is not float64
// (std::runtime_error naming the file).
nlohmann::json save_compensated_sum(const CompensatedSum& s, const std::string& dir,
                                    const std::string& stem);
CompensatedSum load_compensated_sum(const nlohmann::json& files, const std::string& dir);

}  // namespace attnlab::analysis
