// A model as the binding holds it (attnlab.Model): how it was chosen, the backbone with its
// config, where it runs. Shared by the files that bind its methods.
#pragma once

#include "app/session/model_source.h"
#include "core/runtime/precision.h"

namespace attnlab::python {

struct Model {
  session::ModelChoice choice;
  session::ReadyModel ready;
  runtime::ComputeTarget target;
};

}  // namespace attnlab::python
