// pca.h: centre, covariance (or Gram) in double, eigensolve, sign rule, project.
#include "core/projection/pca.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <string>

namespace attnlab::projection {

namespace {
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Makes the largest-|loading| entry of each row positive (pca.h's sign rule).
void flip_signs(RowMatrix& components) {
  for (Eigen::Index c = 0; c < components.rows(); ++c) {
    Eigen::Index best = 0;
    for (Eigen::Index j = 1; j < components.cols(); ++j)
      if (std::abs(components(c, j)) > std::abs(components(c, best))) best = j;
    if (components(c, best) < 0) components.row(c) *= -1.0;
  }
}
}  // namespace

template <typename T>
PcaResult pca(const BasicMatrixView<T>& x, int64_t k, const Progress& progress) {
  validate_matrix(x, "PCA");
  const int64_t n = x.rows, d = x.cols;
  if (k < 1 || k > std::min(n, d))
    throw std::invalid_argument("PCA: k = " + std::to_string(k) +
                                " components is out of range: it must be in [1, min(N, D)] = [1, " +
                                std::to_string(std::min(n, d)) + "]");
  report_progress(progress, 0, 3, "PCA");
  RowMatrix xc(n, d);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) xc(i, j) = static_cast<double>(x.row(i)[j]);
  const Eigen::RowVectorXd mean = xc.colwise().mean();
  xc.rowwise() -= mean;
  const double dof = static_cast<double>(n - 1);

  // Covariance (D×D) or Gram (N×N), whichever is smaller: both have the same non-zero
  // eigenvalues, and a Gram eigenvector u gives the component Xcᵀu / |Xcᵀu|.
  const bool dual = d > n;
  Eigen::MatrixXd scatter = Eigen::MatrixXd::Zero(dual ? n : d, dual ? n : d);
  if (dual)
    scatter.selfadjointView<Eigen::Lower>().rankUpdate(xc, 1.0 / dof);
  else
    scatter.selfadjointView<Eigen::Lower>().rankUpdate(xc.transpose(), 1.0 / dof);
  scatter.triangularView<Eigen::StrictlyUpper>() = scatter.transpose();
  report_progress(progress, 1, 3, "PCA");

  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(scatter);
  if (solver.info() != Eigen::Success) throw std::runtime_error("PCA: the eigensolver did not converge");
  report_progress(progress, 2, 3, "PCA");
  const Eigen::Index m = scatter.rows();
  RowMatrix components(k, d);
  PcaResult r;
  r.n = n;
  r.d = d;
  r.k = k;
  r.total_variance = scatter.trace();
  for (int64_t c = 0; c < k; ++c) {
    const Eigen::Index e = m - 1 - c;  // eigenvalues come in increasing order
    r.explained_variance.push_back(std::max(0.0, solver.eigenvalues()(e)));
    if (dual) {
      Eigen::RowVectorXd v = (xc.transpose() * solver.eigenvectors().col(e)).transpose();
      const double norm = v.norm();
      // Beyond the rank the direction is arbitrary: leave a zero row rather than noise.
      components.row(c) = norm > 1e-12 * std::sqrt(std::max(r.total_variance, 1e-300) * dof)
                              ? Eigen::RowVectorXd(v / norm)
                              : Eigen::RowVectorXd::Zero(d);
    } else {
      components.row(c) = solver.eigenvectors().col(e).transpose();
    }
  }
  flip_signs(components);
  for (int64_t c = 0; c < k; ++c)
    r.explained_variance_ratio.push_back(r.total_variance > 0 ? r.explained_variance[c] / r.total_variance
                                                              : 0.0);
  const RowMatrix coords = xc * components.transpose();
  r.coords.assign(coords.data(), coords.data() + n * k);
  r.components.assign(components.data(), components.data() + k * d);
  r.mean.assign(mean.data(), mean.data() + d);
  report_progress(progress, 3, 3, "PCA");
  return r;
}

template PcaResult pca(const BasicMatrixView<float>&, int64_t, const Progress&);
template PcaResult pca(const BasicMatrixView<double>&, int64_t, const Progress&);

}  // namespace attnlab::projection
