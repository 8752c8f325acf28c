// Feature PCA to RGB (the figure of DINOv2: Oquab et al., "DINOv2: Learning Robust Visual
// Features without Supervision", 2023, arXiv 2304.07193, its Fig. 1 and the PCA of patch
// features in its qualitative results): the patch tokens of one or more images are reduced
// to three principal components shown as red, green and blue, after a first PCA whose
// thresholded first component separates the object from the background. Fitting on
// several images together gives one colour to one feature across the images. The paper
// does not say how signs are chosen; the two sign rules below are this module's.
//
//   (a) foreground. One component fitted on ALL tokens of all images (centred by their
//       pooled mean; the eigenvector of the largest eigenvalue of the population
//       covariance, float64 at::linalg_eigh). Every token is projected and min–max scaled
//       over all tokens to [0, 1] (all 0 when every projection is equal). Orientation: the
//       eigenvector first gets the deterministic sign below; then it is flipped when the
//       mean scaled value of the border tokens (first and last row and column of each
//       image) is above the mean of the interior tokens, so that the object, not the
//       background (which touches the border), is high. No flip on equal means or when no
//       image has an interior token (H or W <= 2 everywhere). foreground = scaled > threshold;
//       with options.foreground = false every token is foreground.
//   (b) colours. Three components fitted on the foreground tokens of all images (their
//       pooled mean, population covariance, the three largest eigenvalues in decreasing
//       order). A component whose eigenvalue is not above 1e-10·λ_max is all zero, and so
//       are the ones beyond C: rounding in the covariance and eigh leaves eigenvalues of
//       ~N·C·2⁻⁵³·λ_max where there is no direction, and a real one that weak (a standard
//       deviation 1e-5 of the first's) would only be noise stretched to full colour by the
//       min–max scaling. Deterministic sign: the loading of largest |value|
//       is positive, the lowest index among loadings within a relative 1e-9 of the largest
//       (so rounding in eigh cannot pick another sign on another CPU). Each component is
//       min–max scaled to [0, 1] with the min and max over the fitted foreground tokens
//       (values of other tokens or images clamped to [0, 1]; a component with max == min
//       gives 0). Background tokens are black (0, 0, 0).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace attnlab::analysis {

struct FeaturePcaOptions {
  bool foreground = true;  // false: every token is foreground (no step (a) mask)
  double threshold = 0.5;  // foreground = scaled first component > threshold, in [0, 1]
};

// What a fit learns; apply_feature_pca colours other grids with it.
struct FeaturePcaBasis {
  FeaturePcaOptions options;
  // (a): the pooled mean of all tokens (C), the oriented unit direction (C), the min and max
  // of the oriented projections over the fitted tokens, and whether the border rule
  // flipped the direction away from its deterministic sign.
  at::Tensor fg_mean, fg_direction;
  double fg_min = 0.0, fg_max = 0.0;
  bool fg_flipped = false;
  // (b): the foreground tokens' mean (C), components (3, C) (rows unit or all zero),
  // explained (3) = eigenvalue / total variance of the foreground tokens (0 for a zero
  // component or when that variance is 0), and the per-component min and max (3) over the
  // fitted foreground tokens.
  at::Tensor mean, components, explained, component_min, component_max;
};

// One image. All float64 on the CPU.
struct FeaturePcaImage {
  at::Tensor rgb;         // (H, W, 3) in [0, 1]; background (0, 0, 0)
  at::Tensor foreground;  // (H, W) bool
  at::Tensor first;       // (H, W) the scaled, oriented first component of (a), in [0, 1]
};

struct FeaturePcaFit {
  FeaturePcaBasis basis;
  std::vector<FeaturePcaImage> images;  // apply_feature_pca(basis, grids[i])
};

// Fits steps (a) and (b) on `grids` (each (H_i, W_i, C), any float dtype or device, one C)
// and colours each of them. Throws std::invalid_argument for an empty list, a grid that is
// not 3-D or has no token, a C that differs between grids (or is 0), non-finite tokens, a
// threshold outside [0, 1], or no foreground token left (the message suggests a lower
// threshold).
FeaturePcaFit fit_feature_pca(const std::vector<at::Tensor>& grids,
                              const FeaturePcaOptions& options = {});

// Colours one grid (H, W, C) with a fitted basis: the first component scaled with the
// fitted min and max (clamped to [0, 1]), the mask with the basis's threshold (no
// foreground token is fine here: the image is black), the colours as in (b). Throws
// std::invalid_argument for a grid that is not (H, W, C) with the basis's C, or non-finite
// tokens.
FeaturePcaImage apply_feature_pca(const FeaturePcaBasis& basis, const at::Tensor& grid);

}  // namespace attnlab::analysis
