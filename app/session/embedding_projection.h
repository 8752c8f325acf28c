// A dataset's embeddings projected to 2-D or 3-D (issue 70 goal 2) — the one place the
// method names and their options are read, for `attnlab project`, attnlab.Embeddings.
// projection and the GUI's projector: PCA (exact, with explained variance), Barnes–Hut
// t-SNE (with its final KL divergence) and UMAP (core/projection, checked against
// scikit-learn and umap-learn by tests/projection/reference_check.py). Deterministic for
// a seed.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnlab::session {

struct ProjectionRequest {
  std::string method = "pca";  // pca, tsne, umap
  int dims = 2;                // 2 or 3
  double perplexity = 30;      // t-SNE; lowered to (N − 1) / 3 for small sets, said in info
  int neighbors = 15;          // UMAP's n_neighbors; lowered to N − 1 likewise
  double min_dist = 0.1;       // UMAP
  int iterations = 0;          // t-SNE's iterations / UMAP's epochs; 0: the method's default
  uint64_t seed = 0;
  int threads = 0;  // 0: every core (the result does not depend on it)
};

// "pca", "tsne" (or "t-sne"), "umap"; std::invalid_argument naming the word otherwise.
std::string parse_projection_method(const std::string& text);
// "PCA", "t-SNE", "UMAP": for titles.
std::string projection_method_title(const std::string& method);

struct EmbeddingProjection {
  std::string method;
  int64_t n = 0;
  int dims = 2;
  std::vector<double> coords;           // N×dims
  std::vector<std::string> axis_names;  // "PC 1 (23.4 %)", "t-SNE 1", ...
  nlohmann::json info;  // method, options as used, explained variance / KL / a and b, seconds
};

// `x` N×D float32 row-major. Progress as core/projection (false stops: the library's
// ProjectionCancelled). Throws std::invalid_argument for input the method cannot take
// (fewer than 4 rows, NaN, ...), naming it.
EmbeddingProjection project_embeddings(const float* x, int64_t n, int64_t d,
                                       const ProjectionRequest& request,
                                       const std::function<bool(int64_t, int64_t)>& progress = {});

}  // namespace attnlab::session
