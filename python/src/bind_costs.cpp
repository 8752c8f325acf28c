// attnlab.complexity(...) and attnlab.bench_attention(...): `attnlab complexity` (parameters
// and MACs of a model at input sizes, or of mechanisms on token grids) and `attnlab
// bench-attention` (measured latency and peak memory of one layer per mechanism against a
// baseline measured in the same run) from Python, as Results with the commands' tables and
// figures, through the same session functions.
#include <pybind11/stl.h>

#include "app/session/attention_bench.h"
#include "app/session/complexity.h"
#include "app/session/cost_figures.h"
#include "core/attention/registry.h"
#include "core/io/text.h"
#include "core/runtime/device_peaks.h"
#include "core/runtime/precision.h"
#include "python/src/control.h"
#include "python/src/results.h"

namespace attnlab::python {
namespace {

// A str or a list of str, as a list.
std::vector<std::string> names_of(const py::object& o) {
  const std::string list = comma_list(o, "");
  return list.empty() ? std::vector<std::string>{} : text::split(list);
}

// One size or grid: an int N, "HxW" / "N", or (H, W); `tokens` reads N as --tokens does.
std::pair<int64_t, int64_t> size_of(const py::handle& o, const char* what, bool tokens) {
  if (py::isinstance<py::str>(o)) {
    if (tokens) return session::parse_token_grid(o.cast<std::string>());
    throw std::invalid_argument(std::string(what) + ": an int or (height, width)");
  }
  if (py::isinstance<py::int_>(o)) {
    const int64_t n = o.cast<int64_t>();
    if (n < 1) throw std::invalid_argument(std::string(what) + ": positive sizes");
    return tokens ? session::parse_token_grid(std::to_string(n)) : std::make_pair(n, n);
  }
  try {
    const auto hw = o.cast<std::vector<int64_t>>();
    if (hw.size() == 2 && hw[0] > 0 && hw[1] > 0) return {hw[0], hw[1]};
  } catch (const py::cast_error&) {
  }
  throw std::invalid_argument(std::string(what) + ": an int or (height, width), both positive");
}

// None, one size, or a list of sizes.
std::vector<std::pair<int64_t, int64_t>> sizes_of(const py::object& o, const char* what,
                                                  bool tokens) {
  if (o.is_none()) return {};
  if (py::isinstance<py::int_>(o) || py::isinstance<py::str>(o) || py::isinstance<py::tuple>(o))
    return {size_of(o, what, tokens)};
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& item : o.cast<py::sequence>()) out.push_back(size_of(item, what, tokens));
  return out;
}

std::shared_ptr<Results> complexity(const py::object& model, const py::object& mechanism,
                                    const py::object& img_size, const py::object& tokens,
                                    int64_t dim, int64_t heads, int64_t prefix,
                                    const py::dict& options) {
  const std::vector<std::string> mechanisms = names_of(mechanism);
  if (model.is_none() == mechanisms.empty())
    throw std::invalid_argument("complexity: give model= or mechanism=, one of them");
  if (!model.is_none() && !tokens.is_none())
    throw std::invalid_argument("tokens: for mechanism=; a model takes img_size=");
  if (model.is_none() && !img_size.is_none())
    throw std::invalid_argument("img_size: for model=; a mechanism takes tokens=");
  if (dim < 1 || heads < 1 || prefix < 0)
    throw std::invalid_argument("dim and heads: positive; prefix: at least 0");
  std::vector<std::string> given;  // as --option NAME=VALUE / MECH.NAME=VALUE
  for (const auto& [k, v] : options)
    given.push_back(std::string(py::str(k)) + "=" + std::string(py::str(v)));
  const std::string model_name = model.is_none() ? "" : model.cast<std::string>();
  const auto sizes = sizes_of(img_size, "img_size", false);
  auto grids = sizes_of(tokens, "tokens", true);
  auto out = std::make_shared<Results>();
  {
    py::gil_scoped_release release;
    std::vector<session::ComplexityRun> runs;
    if (!model.is_none()) {
      session::ModelRequest request;
      request.model = model_name;
      if (sizes.empty()) runs.push_back(session::count_model(request, 0, 0));
      for (const auto& [h, w] : sizes) runs.push_back(session::count_model(request, h, w));
    } else {
      if (grids.empty()) grids.push_back({14, 14});
      for (const auto& name : mechanisms) {
        const auto opts = session::mechanism_options(name, given);
        for (const auto& [h, w] : grids)
          runs.push_back(session::count_mechanism(name, dim, heads, opts, h, w, prefix));
      }
    }
    const bool of_model = !model.is_none();
    out->model_tag = of_model ? runs.front().subject : "mechanisms";
    out->tables = {session::complexity_layers_table(runs), session::complexity_totals_table(runs)};
    out->metadata = {{"command", "complexity"},
                     {"convention",
                      "one multiply-add = one MAC (fvcore); norms one MAC "
                      "per element; element-wise ops, softmax, pooling: 0"}};
    if (session::complexity_has_sizes(runs))
      out->own_figures.push_back(
          {"complexity", out->model_tag + "__complexity_macs",
           [runs, of_model] { return session::complexity_macs_figure(runs, of_model); }});
  }
  return out;
}

std::shared_ptr<Results> bench_attention(const py::object& mechanisms,
                                         const std::vector<int64_t>& sides, int64_t dim,
                                         int64_t heads, int repeats, const std::string& device,
                                         const std::string& dtype, const std::string& baseline,
                                         bool peaks, const py::object& progress) {
  session::AttentionBenchSettings s;
  const std::vector<std::string> names = names_of(mechanisms);
  s.mechanisms = names.empty() || (names.size() == 1 && names[0] == "all")
                     ? attention::mechanism_names()
                     : names;
  session::bench_rows(s);  // an unknown mechanism: named
  if (!sides.empty()) s.sides = sides;
  for (const int64_t side : s.sides)
    if (side < 1) throw std::invalid_argument("sides: positive grid sides");
  if (dim < 1 || heads < 1 || repeats < 1)
    throw std::invalid_argument("dim, heads and repeats: positive");
  s.dim = dim;
  s.heads = heads;
  s.repeats = repeats;
  s.baseline = baseline;
  const runtime::ComputeTarget target = runtime::select_target(device, dtype);
  s.device = target.device;
  s.dtype = target.dtype;
  PythonControl control;
  control.progress = progress;
  return run_controlled(control, [&] {
    py::gil_scoped_release release;
    auto out = std::make_shared<Results>();
    std::optional<runtime::DevicePeaks> measured;
    if (peaks) measured = runtime::measure_device_peaks(s.device, s.dtype);
    const auto points = session::bench_attention(
        s, [&](int64_t done, int64_t total, const std::string&) { control.report(done, total); },
        [&] { return control.cancelled(); });
    if (control.cancelled()) throw session::AnalysisCancelled();
    const analysis::Table table =
        session::attention_bench_table(points, s, measured ? &*measured : nullptr);
    out->model_tag = session::attention_bench_tag(s);
    out->tables = {table};
    out->metadata = session::attention_bench_sidecar(s, measured ? &*measured : nullptr, points);
    const char* stems[] = {"latency", "memory"};
    const auto figures = session::attention_bench_figures(table, s);
    for (size_t i = 0; i < figures.size(); ++i)
      out->own_figures.push_back({std::string("bench_") + stems[i],
                                  out->model_tag + "__bench_" + stems[i],
                                  [f = figures[i]] { return f; }});
    return out;
  });
}

}  // namespace

void bind_costs(py::module_& m) {
  m.def("complexity", &complexity, py::kw_only(), py::arg("model") = py::none(),
        py::arg("mechanism") = py::none(), py::arg("img_size") = py::none(),
        py::arg("tokens") = py::none(), py::arg("dim") = 768, py::arg("heads") = 12,
        py::arg("prefix") = 0, py::arg("options") = py::dict(),
        "`attnlab complexity`: parameters and MACs per attention layer and op group of a model "
        "(model=, at img_size= sizes) or of mechanisms (mechanism=, on tokens= grids, with "
        "dim, heads, prefix and options={'name': value} or {'mech.name': value}). Returns "
        "Results (complexity_layers, complexity_totals; the MACs figure over several sizes).");
  m.def("bench_attention", &bench_attention, py::kw_only(), py::arg("mechanisms") = py::none(),
        py::arg("sides") = std::vector<int64_t>{}, py::arg("dim") = 384, py::arg("heads") = 6,
        py::arg("repeats") = 5, py::arg("device") = "cpu", py::arg("dtype") = "fp32",
        py::arg("baseline") = session::AttentionBenchSettings{}.baseline, py::arg("peaks") = true,
        py::arg("progress") = py::none(),
        "`attnlab bench-attention`: latency and peak memory of one layer per mechanism "
        "(default all) on side×side grids (default 14, 28, 56), with the ratios to the "
        "baseline measured in the same run and, with peaks=True, the achieved rates against "
        "the device's GEMM and copy peaks. Returns Results (attention_bench; figures).");
}

}  // namespace attnlab::python
