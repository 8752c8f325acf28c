// Input checks and progress reporting shared by every projection (matrix.h).
#include "core/projection/matrix.h"

#include <cmath>
#include <thread>

namespace attnlab::projection {

template <typename T>
BasicMatrixView<T>::BasicMatrixView(const std::vector<T>& values, int64_t n, int64_t d)
    : data(values.data()), rows(n), cols(d) {
  if (n < 0 || d < 0 || static_cast<int64_t>(values.size()) != n * d)
    throw std::invalid_argument("matrix of " + std::to_string(values.size()) +
                                " values cannot be viewed as " + std::to_string(n) + "×" +
                                std::to_string(d));
}

void report_progress(const Progress& progress, int64_t done, int64_t total, const char* stage) {
  if (progress && !progress(done, total)) throw ProjectionCancelled(std::string(stage) + " cancelled");
}

template <typename T>
void validate_matrix(const BasicMatrixView<T>& x, const char* what) {
  const std::string prefix = std::string(what) + ": ";
  if (x.rows < 4)
    throw std::invalid_argument(prefix + "N = " + std::to_string(x.rows) +
                                " points; at least 4 are needed");
  if (x.cols < 1) throw std::invalid_argument(prefix + "the points have no dimensions (D = 0)");
  if (x.data == nullptr) throw std::invalid_argument(prefix + "no data (null matrix)");
  for (int64_t i = 0; i < x.rows; ++i) {
    const T* r = x.row(i);
    for (int64_t j = 0; j < x.cols; ++j) {
      if (!std::isfinite(r[j]))
        throw std::invalid_argument(prefix + "value at row " + std::to_string(i) + ", column " +
                                    std::to_string(j) + " is " +
                                    (std::isnan(r[j]) ? "NaN" : "infinite"));
    }
  }
}

void validate_neighbour_count(int64_t k, int64_t n, const char* what) {
  if (k < 1 || k >= n)
    throw std::invalid_argument(std::string(what) + ": k = " + std::to_string(k) +
                                " neighbours is out of range: it must be at least 1 and less than "
                                "N = " + std::to_string(n));
}

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

template struct BasicMatrixView<float>;
template struct BasicMatrixView<double>;
template void validate_matrix(const BasicMatrixView<float>&, const char*);
template void validate_matrix(const BasicMatrixView<double>&, const char*);

}  // namespace attnlab::projection
