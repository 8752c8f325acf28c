// The analyses, one line each: each name refers to `AnalysisInfo <name>_analysis()` in
// app/session/analyses/<name>.cpp (its compute step) and `void <name>_figures(AnalysisInfo&)`
// in <name>_figures.cpp (its report figures, series figure and GUI tab). The order is the
// order of --help, the report's index and the GUI's tabs. analysis_registry.cpp builds the
// registry from it, analysis_figures.cpp attaches the figures.
#pragma once

// clang-format off
#define ATTNLAB_ANALYSES(X) \
  X(maps)                   \
  X(rollout)                \
  X(gradcam)                \
  X(gradrollout)            \
  X(spectra)                \
  X(rank)                   \
  X(anchors)                \
  X(mask)                   \
  X(channel_maps)           \
  X(locality)               \
  X(entropy)                \
  X(map_rank)               \
  X(outliers)               \
  X(segmentation)           \
  X(similarity)             \
  X(cka)                    \
  X(lens)                   \
  X(erf)                    \
  X(heads)                  \
  X(faithfulness)           \
  X(feature_pca)            \
  X(merges)                 \
  X(agents)                 \
  X(routing)                \
  X(sampling)               \
  X(prompts)
// clang-format on
