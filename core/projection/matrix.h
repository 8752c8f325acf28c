// The projection library's common vocabulary: a non-owning row-major matrix view, the
// progress/cancel callback every long function takes, the cancellation exception, and the
// input checks shared by PCA, t-SNE, UMAP and the quality measures. Plain C++17 (no
// LibTorch, no OpenCV) so that anything in attnlab — CLI, GUI, Python — can project
// embeddings without the model stack.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::projection {

// N×D, row-major, borrowed: the caller keeps the storage alive for the call.
template <typename T>
struct BasicMatrixView {
  const T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;

  BasicMatrixView() = default;
  BasicMatrixView(const T* values, int64_t n, int64_t d) : data(values), rows(n), cols(d) {}
  // Throws std::invalid_argument when values.size() != n * d.
  BasicMatrixView(const std::vector<T>& values, int64_t n, int64_t d);

  const T* row(int64_t i) const { return data + i * cols; }
};
using MatrixView = BasicMatrixView<float>;   // inputs: embeddings as the models give them
using CoordsView = BasicMatrixView<double>;  // outputs: projected coordinates

// Called with (work done, total work) from the calling thread; returning false cancels:
// the function then throws ProjectionCancelled. An empty function is never called.
using Progress = std::function<bool(int64_t done, int64_t total)>;

class ProjectionCancelled : public std::runtime_error {
 public:
  explicit ProjectionCancelled(const std::string& what) : std::runtime_error(what) {}
};

// Reports progress; throws ProjectionCancelled("<stage> cancelled") when told to stop.
void report_progress(const Progress& progress, int64_t done, int64_t total, const char* stage);

// std::invalid_argument naming the problem (prefixed by `what`, e.g. "t-SNE") for: a null
// or mis-sized view, fewer than 4 rows, no columns, a NaN or infinite value (with its row
// and column).
template <typename T>
void validate_matrix(const BasicMatrixView<T>& x, const char* what);

// k nearest neighbours need 1 <= k < N (a point is not its own neighbour).
void validate_neighbour_count(int64_t k, int64_t n, const char* what);

// 0 means std::thread::hardware_concurrency() (at least 1).
int resolve_threads(int threads);

}  // namespace attnlab::projection
