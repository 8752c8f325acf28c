// attnlab.Figure's C++ side: a figure as the CLI draws it, with the name the CLI gives its
// file. Bound in bind_figures.cpp; returned by Results.figure and Embeddings.figure.
#pragma once

#include <string>

#include "viz/figures/captioned_figure.h"

namespace attnlab::python {

struct Figure {
  std::string kind, stem;
  viz::CaptionedFigure figure;
};

}  // namespace attnlab::python
