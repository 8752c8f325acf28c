// project_embeddings: dispatches to core/projection and records what was done. Small sets
// get a perplexity / neighbour count they can hold (t-SNE needs perplexity < N − 1 and
// about 3·perplexity neighbours; UMAP n_neighbors < N), and the info says so.
#include "app/session/embedding_projection.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "core/projection/pca.h"
#include "core/projection/tsne.h"
#include "core/projection/umap.h"

namespace attnlab::session {

std::string parse_projection_method(const std::string& text) {
  if (text == "pca" || text == "PCA") return "pca";
  if (text == "tsne" || text == "t-sne" || text == "t-SNE") return "tsne";
  if (text == "umap" || text == "UMAP") return "umap";
  throw std::invalid_argument("projection method: pca, tsne or umap, not '" + text + "'");
}

std::string projection_method_title(const std::string& method) {
  if (method == "pca") return "PCA";
  if (method == "tsne") return "t-SNE";
  if (method == "umap") return "UMAP";
  return method;
}

EmbeddingProjection project_embeddings(const float* x, int64_t n, int64_t d,
                                       const ProjectionRequest& request,
                                       const std::function<bool(int64_t, int64_t)>& progress) {
  if (request.dims != 2 && request.dims != 3)
    throw std::invalid_argument("projection: 2 or 3 dimensions, not " +
                                std::to_string(request.dims));
  const std::string method = parse_projection_method(request.method);
  const auto t0 = std::chrono::steady_clock::now();
  const projection::MatrixView view(x, n, d);
  EmbeddingProjection p;
  p.method = method;
  p.n = n;
  p.dims = request.dims;
  p.info = {{"method", method}, {"dims", request.dims}, {"images", n}, {"features", d}};
  const std::string title = projection_method_title(method);
  if (method == "pca") {
    const projection::PcaResult r = projection::pca(view, request.dims, progress);
    p.coords = r.coords;
    p.info["explained_variance"] = r.explained_variance;
    p.info["explained_variance_ratio"] = r.explained_variance_ratio;
    p.info["total_variance"] = r.total_variance;
    for (int i = 0; i < request.dims; ++i) {
      char name[64];
      std::snprintf(name, sizeof name, "PC %d (%.1f %%)", i + 1,
                    100.0 * r.explained_variance_ratio[size_t(i)]);
      p.axis_names.push_back(name);
    }
  } else if (method == "tsne") {
    projection::TsneOptions o;
    o.dims = request.dims;
    // sklearn's bound: perplexity < N − 1; 3·perplexity neighbours fit below N.
    const double most = std::max(1.0, double(n - 1) / 3.0);
    o.perplexity = std::min(request.perplexity, most);
    if (o.perplexity != request.perplexity)
      p.info["note"] = "perplexity lowered to " + std::to_string(o.perplexity) + " for " +
                       std::to_string(n) + " images";
    if (request.iterations > 0) o.iterations = request.iterations;
    o.seed = request.seed;
    o.threads = request.threads;
    const projection::TsneResult r = projection::tsne(view, o, progress);
    p.coords = r.coords;
    p.info["perplexity"] = o.perplexity;
    p.info["iterations"] = o.iterations;
    p.info["kl_divergence"] = r.kl_divergence;
    p.info["seed"] = o.seed;
  } else {
    projection::UmapOptions o;
    o.dims = request.dims;
    o.n_neighbors = int(std::min<int64_t>(request.neighbors, n - 1));
    if (o.n_neighbors != request.neighbors)
      p.info["note"] = "n_neighbors lowered to " + std::to_string(o.n_neighbors) + " for " +
                       std::to_string(n) + " images";
    o.min_dist = request.min_dist;
    if (request.iterations > 0) o.n_epochs = request.iterations;
    o.seed = request.seed;
    o.threads = request.threads;
    const projection::UmapResult r = projection::umap(view, o, progress);
    p.coords = r.coords;
    p.info["n_neighbors"] = o.n_neighbors;
    p.info["min_dist"] = o.min_dist;
    p.info["a"] = r.a;
    p.info["b"] = r.b;
    p.info["seed"] = o.seed;
  }
  if (p.axis_names.empty())
    for (int i = 0; i < request.dims; ++i)
      p.axis_names.push_back(title + " " + std::to_string(i + 1));
  p.info["axes"] = p.axis_names;
  p.info["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

}  // namespace attnlab::session
