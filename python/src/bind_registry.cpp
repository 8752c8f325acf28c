// The registries as Python lists of dicts: analyses (with the options each declares, as
// the CLI's help lists them), attention mechanisms, model presets. Read-only snapshots.
#include <pybind11/stl.h>

#include "app/session/analysis_options.h"
#include "app/session/analysis_registry.h"
#include "core/attention/registry.h"
#include "models/presets.h"
#include "python/src/common.h"

namespace attnlab::python {
namespace {

const char* option_kind_name(session::AnalysisOption::Kind k) {
  using K = session::AnalysisOption::Kind;
  switch (k) {
    case K::Real:
      return "real";
    case K::Integer:
      return "integer";
    case K::Flag:
      return "flag";
    case K::Text:
      return "text";
    case K::Choice:
      return "choice";
    case K::Cell:
      return "cell";
    case K::Percentages:
      return "percentages";
  }
  return "?";
}

py::dict option_dict(const session::AnalysisOption& o) {
  py::dict d;
  d["name"] = o.name;
  d["keyword"] = [&] {  // the Python keyword of Model.analyze: dashes become underscores
    std::string k = o.name;
    for (char& c : k) c = c == '-' ? '_' : c;
    return k;
  }();
  d["kind"] = option_kind_name(o.kind);
  d["default"] = to_python(o.default_value);
  d["default_text"] = o.default_shown();
  d["help"] = o.help;
  if (!o.choices.empty()) d["choices"] = o.choices;
  return d;
}

py::list analyses_list() {
  py::list out;
  for (const session::AnalysisInfo& a : session::analyses()) {
    py::dict d;
    d["name"] = a.name;
    d["summary"] = a.summary;
    d["tables"] = a.tables;
    d["arrays"] = a.arrays;
    d["series"] = a.series;
    py::list options;
    for (const auto& o : a.options) options.append(option_dict(o));
    d["options"] = options;
    out.append(d);
  }
  return out;
}

py::list mechanisms_list() {
  py::list out;
  for (const attention::MechanismInfo& mech : attention::mechanisms()) {
    py::dict d;
    d["name"] = mech.name;
    d["summary"] = mech.summary;
    d["linear_in_tokens"] = mech.linear_in_tokens;
    d["needs_grid"] = mech.needs_grid;
    out.append(d);
  }
  return out;
}

py::list presets_list() {
  py::list out;
  for (const models::Preset& p : models::presets()) {
    py::dict d;
    d["name"] = p.name;
    d["description"] = p.description;
    d["weights"] = p.weights;
    d["preprocessing"] = p.preprocessing.describe();
    d["config"] = to_python(p.config);
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_registry(py::module_& m) {
  m.def("analyses", &analyses_list,
        "Every registered analysis: name, summary, the tables and arrays it writes, and the "
        "options it declares (their Model.analyze keywords, kinds, defaults and help).");
  m.def("mechanisms", &mechanisms_list, "Every registered attention mechanism.");
  m.def("presets", &presets_list,
        "Every model preset: name, description, where its weights come from, its "
        "preprocessing and config.");
}

}  // namespace attnlab::python
