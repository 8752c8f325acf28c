// Faithfulness of a relevance map (issue 27): does the model's output depend on the cells
// the map ranks highest? The protocols, on the cells of a grid over the image:
//   * deletion (RISE, Petsiuk et al. 2018): the cells in decreasing relevance are replaced
//     by a baseline, a step of cells at a time; the target class's probability after each
//     step is the curve, its area the score (low is faithful);
//   * insertion: from the baseline image, the cells in decreasing relevance put back (high
//     is faithful);
//   * positive / negative perturbation (Chefer et al. 2021): cells removed in decreasing /
//     increasing relevance, top-1 accuracy (or agreement with the unperturbed prediction)
//     after each step (positive low, negative high is faithful);
//   * model randomisation (Adebayo et al. 2018): the Spearman rank correlation between a
//     map of the trained model and of the model with its top blocks re-initialised; a map
//     that stays the same does not depend on what the model learnt and is flagged.
// This file is the arithmetic on maps and curves (orders, step schedule, masks, areas,
// rank correlation, the baseline maps); models/faithfulness_run runs the model.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::analysis {

// The cells of a (h, w) map in order of relevance, most relevant first (`most_first`) or
// least relevant first; equal values in an order drawn from `seed` (a map resampled from a
// coarser grid has blocks of equal cells: raster order would favour the top-left).
// Throws std::invalid_argument for a map that is not 2-D or has a non-finite value.
std::vector<int64_t> relevance_order(const at::Tensor& map, bool most_first, uint64_t seed = 0);

// The number of cells changed after each step of `step` (a fraction in (0, 1]) of `cells`:
// 0, round(step·cells), round(2·step·cells), ..., cells (the last step may be shorter).
std::vector<int64_t> step_counts(int64_t cells, double step);

// Kept-cell masks (S, h, w) float32: mask s is 1 where the cell keeps the image and 0
// where it shows the baseline. Deletion: the first counts[s] cells of `order` show the
// baseline; insertion (`insert`): only they show the image.
at::Tensor step_masks(const std::vector<int64_t>& order, const std::vector<int64_t>& counts,
                      int64_t height, int64_t width, bool insert);

// Area under a curve sampled at the fractions counts[s] / cells (trapezoid rule over
// [0, 1]). Throws std::invalid_argument when the sizes differ or there are fewer than 2.
double curve_area(const std::vector<double>& values, const std::vector<int64_t>& counts,
                  int64_t cells);

// Spearman's rank correlation of two maps of the same size (ties get their mean rank). A
// constant map orders nothing: against a map that orders its cells it gives 0, against
// another constant map 1 (neither changed: a map that is constant whatever the weights
// is flagged by the randomisation check).
double spearman(const at::Tensor& a, const at::Tensor& b);

// Resamples a (h, w) map onto a (H, W) grid over the same image: each fine cell takes the
// area-weighted mean of the coarse cells it overlaps (a map already (H, W) is returned as
// is). float32.
at::Tensor resample_map(const at::Tensor& map, int64_t height, int64_t width);

// The baseline maps every table carries: a centre prior (minus the distance of each cell's
// centre to the image centre, in cells) and a random map (uniform, from `seed`).
at::Tensor centre_prior_map(int64_t height, int64_t width);
at::Tensor random_map(int64_t height, int64_t width, uint64_t seed);

// The randomisation check's verdict: a map whose rank correlation with the trained
// model's stays at or above this after every block is re-initialised is flagged.
constexpr double kRandomisationFlag = 0.5;

}  // namespace attnlab::analysis
