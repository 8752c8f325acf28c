// A paper figure and its caption: one sentence saying what is shown and with which
// settings (colormap, normalisation, upsampling, query, layer), for the report's index and
// for the paper's \caption.
#pragma once

#include <string>

#include "viz/figure.h"

namespace attnlab::viz {

struct CaptionedFigure {
  Figure figure;
  std::string caption;
};

}  // namespace attnlab::viz
