// HiLo frequency figures, as in the LITv2 paper (Fig. 1 / Figs. 5, 8, 9): the centred
// log-amplitude spectra of the Hi-Fi and Lo-Fi branch outputs of one layer for a few
// channels (one row per branch, one shared colour scale), and the radial profiles of all
// layers (mean over channels, Hi-Fi vs Lo-Fi) with the high-frequency energy ratio per layer.
// Models without HiLo have one "output" branch (the attention output's spectrum): one row,
// one line per profile panel.
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/figure_common.h"

namespace attnlab::viz {

enum class ChannelPick {
  HighestEnergy,  // the channels with the largest Σ exp(2·log amplitude), per branch
  EvenlySpaced,   // channels 0, C/n, 2C/n, ...
};

struct HiloSpectraOptions {
  int64_t layer = 0;
  int channels = 8;
  ChannelPick pick = ChannelPick::HighestEnergy;
  Colormap cmap = Colormap::Viridis;
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// Grid of spectra: needs "spectra__L<ll>__hifi__log_amplitude" and "...__lofi__..."
// (channel, fy, fx), already fftshift-centred (zero frequency at (H/2, W/2)) — or
// "spectra__L<ll>__output__log_amplitude" for other models. Throws std::invalid_argument
// when the layer has none of them.
CaptionedFigure hilo_spectra_grid(const std::vector<analysis::Array>& arrays,
                                  const HiloSpectraOptions& options = {});

struct HiloProfilesOptions {
  double width_in = kPageWidthIn;
  double height_in = 1.7;
  double font_pt = 7;
};

// One panel per layer with the radial profiles "spectra__L<ll>__<branch>__radial"
// (channel, ring; ring k at radius k/max(H,W) cycles per token), mean over channels, and —
// when `tables` holds "spectra_layers" (columns layer, branch, high_frequency_ratio_mean,
// high_frequency_ratio_std) — a last panel with the high-frequency ratio per layer.
// Throws std::invalid_argument when there is no radial array, or spectra_layers lacks a column.
CaptionedFigure hilo_spectra_profiles(const std::vector<analysis::Array>& arrays,
                                      const std::vector<analysis::Table>& tables,
                                      const HiloProfilesOptions& options = {});

// "hifi" -> "Hi-Fi", "lofi" -> "Lo-Fi", others as they are.
std::string branch_label(const std::string& branch);

}  // namespace attnlab::viz
