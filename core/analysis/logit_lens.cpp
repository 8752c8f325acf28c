// Logit-lens statistics (see logit_lens.h): one float64 log_softmax of the (L, K) logits,
// then per row a pass over the K classes.
#include "core/analysis/logit_lens.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {

LensStatistics lens_statistics(const at::Tensor& logits, int64_t label) {
  if (!logits.defined() || logits.dim() != 2 || logits.size(0) < 1 || logits.size(1) < 1)
    throw std::invalid_argument("logit lens: expected (layers, classes) logits, both >= 1");
  const int64_t layers = logits.size(0), classes = logits.size(1);
  if (label < -1 || label >= classes)
    throw std::invalid_argument("logit lens: label " + std::to_string(label) + " is outside [0, " +
                                std::to_string(classes) + ") (-1 for none)");
  const at::Tensor z = logits.to(at::kCPU, at::kDouble).contiguous();
  if (!at::isfinite(z).all().item<bool>())
    throw std::invalid_argument("logit lens: the logits hold NaN or Inf values");
  const at::Tensor logp = at::log_softmax(z, 1).contiguous();
  const auto* zs = z.data_ptr<double>();
  const auto* lp = logp.data_ptr<double>();
  const double* final_lp = lp + (layers - 1) * classes;

  LensStatistics out;
  out.label = label;
  out.layers.resize(size_t(layers));
  for (int64_t l = 0; l < layers; ++l) {
    const double* row = zs + l * classes;
    const double* row_lp = lp + l * classes;
    LensLayer& s = out.layers[size_t(l)];
    s.top1 = std::max_element(row, row + classes) - row;  // the first of equal maxima
    s.top1_probability = std::exp(row_lp[s.top1]);
    if (label >= 0) {
      s.label_rank =
          1 + std::count_if(row, row + classes, [&](double v) { return v > row[label]; });
      s.label_probability = std::exp(row_lp[label]);
    } else {
      s.label_probability = std::numeric_limits<double>::quiet_NaN();
    }
    double kl = 0;
    for (int64_t k = 0; k < classes; ++k) kl += std::exp(final_lp[k]) * (final_lp[k] - row_lp[k]);
    s.kl = std::max(kl, 0.0);
  }
  for (auto& s : out.layers) s.agrees = s.top1 == out.layers.back().top1;
  return out;
}

}  // namespace attnlab::analysis
