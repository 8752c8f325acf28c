// Model.trace(image) → Traces: one forward with every attention layer's trace kept, and
// Traces.query_map(...) answering a query's map from them as the GUI answers a click: one
// attention row per head (implicit for the linear mechanisms, never an N×N matrix), so a
// query costs milliseconds, not a forward pass.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <ATen/ATen.h>

#include <cstring>
#include <memory>

#include "app/session/analysis_session.h"
#include "app/session/query.h"
#include "python/src/images.h"
#include "python/src/model.h"
#include "python/src/tensor.h"

namespace attnlab::python {
namespace {

struct Traces {
  std::shared_ptr<const Model> model;  // keeps the backbone its traces came from alive
  std::string tag;
  models::ForwardResult forward;
};

std::shared_ptr<Traces> trace(const std::shared_ptr<Model>& m, const py::object& image) {
  const std::vector<ImageItem> items = image_items(image, m->choice.preprocessing);
  if (items.size() != 1)
    throw std::invalid_argument("image: one image, not " + std::to_string(items.size()));
  auto out = std::make_shared<Traces>();
  out->model = m;
  out->tag = items[0].tag;
  session::AnalysisSettings settings;
  settings.analyses = {"maps"};  // the traces, nothing more
  py::gil_scoped_release release;
  at::NoGradGuard no_grad;
  const at::Tensor x = item_input(items[0], m->choice.preprocessing, *m->ready.model, {});
  out->forward = m->ready.model->run(x.to(m->target.device), settings.forward_options());
  if (out->forward.traces.empty())
    throw std::invalid_argument("image: the model recorded no attention layer to query");
  return out;
}

py::list layers(const Traces& t) {
  py::list out;
  for (size_t i = 0; i < t.forward.traces.size(); ++i) {
    const auto& tr = *t.forward.traces[i].trace;
    py::dict d;
    d["index"] = i;
    d["path"] = t.forward.traces[i].path;
    d["mechanism"] = tr.mechanism;
    d["grid"] = py::make_tuple(tr.layout.height, tr.layout.width);
    d["prefix"] = tr.layout.prefix;
    d["heads"] = tr.heads;
    out.append(d);
  }
  return out;
}

py::array to_numpy(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU, at::kFloat).contiguous();
  std::vector<py::ssize_t> shape(c.sizes().begin(), c.sizes().end());
  py::array_t<float> out(shape);
  std::memcpy(out.mutable_data(), c.data_ptr<float>(), size_t(c.numel()) * sizeof(float));
  return out;
}

// (H, W) of one head or a head fusion, or (heads, H, W) with head="all".
py::array query_map(const Traces& t, int layer, const py::object& query, const py::object& head,
                    const std::string& fusion) {
  const int layers = int(t.forward.traces.size());
  const int index = layer < 0 ? layers + layer : layer;
  if (index < 0 || index >= layers)
    throw std::invalid_argument("layer: " + std::to_string(layer) + " is not one of the " +
                                std::to_string(layers) +
                                " traced layers (negative counts from the end)");
  session::AnalysisSettings settings;
  if (py::isinstance<py::str>(query)) {
    const std::string name = query.cast<std::string>();
    const auto& prefix = t.forward.traces.front().trace->layout.prefix;
    const auto it = std::find(prefix.begin(), prefix.end(), name);
    if (it == prefix.end())
      throw std::invalid_argument("query: the model has no " + name + " token");
    settings.query_token = int64_t(it - prefix.begin());
  } else if (py::isinstance<py::int_>(query)) {
    settings.query_token = query.cast<int64_t>();
  } else if (!query.is_none()) {
    std::vector<int64_t> yx;
    try {
      yx = query.cast<std::vector<int64_t>>();
    } catch (const py::cast_error&) {
    }
    if (yx.size() != 2)
      throw std::invalid_argument("query: (y, x), a token index or a prefix name");
    settings.query_y = yx[0];
    settings.query_x = yx[1];
  }
  const analysis::HeadFusion f = [&] {
    try {
      return analysis::parse_head_fusion(fusion);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("fusion: ") + e.what());
    }
  }();
  const bool all = py::isinstance<py::str>(head) && head.cast<std::string>() == "all";
  const int64_t h = head.is_none() || all ? -1 : head.cast<int64_t>();
  at::Tensor map;
  {
    py::gil_scoped_release release;
    at::NoGradGuard no_grad;
    const auto& trace = *t.forward.traces[size_t(index)].trace;
    session::Query q;
    try {
      q = session::resolve_query(settings, t.forward.traces.front().trace->layout);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("query: ") + e.what());
    }
    const int64_t token = q.token_in(trace.layout);
    if (token < 0)
      throw std::invalid_argument("query: layer " + std::to_string(index) + " has no " + q.prefix +
                                  " token");
    const session::LayerQueryMaps maps = session::layer_query_maps(trace, 0, token);
    if (all) {
      map = maps.map.grid;
    } else if (h >= 0) {
      if (h >= maps.map.grid.size(0))
        throw std::invalid_argument("head: layer " + std::to_string(index) + " has " +
                                    std::to_string(maps.map.grid.size(0)) + " heads");
      map = maps.map.grid[h];
    } else {
      map = analysis::fuse_heads(maps.map.grid, f);
    }
  }
  return to_numpy(map);
}

py::array logits(const Traces& t) {
  return to_numpy(t.forward.logits[0]);
}

// A layer's recorded tensors, on the model's device, by name: the mechanism's internals
// (documented in each mechanism's file: "rala.w", "hilo.hifi_out", ...) and, when the
// mechanism computed them, the per-head outputs ("head_outputs", (B, heads, N, d)).
py::dict layer_tensors(const Traces& t, int layer) {
  const int layers = int(t.forward.traces.size());
  const int index = layer < 0 ? layers + layer : layer;
  if (index < 0 || index >= layers)
    throw std::invalid_argument("layer: " + std::to_string(layer) + " is not one of the " +
                                std::to_string(layers) + " traced layers");
  const auto& trace = *t.forward.traces[size_t(index)].trace;
  py::dict out;
  for (const auto& [name, tensor] : trace.internals)
    if (tensor.defined()) out[py::str(name)] = tensor_out(tensor);
  if (trace.head_outputs.defined()) out["head_outputs"] = tensor_out(trace.head_outputs);
  return out;
}

}  // namespace

void bind_traces(py::module_& m, py::class_<Model, std::shared_ptr<Model>>& model) {
  model.def("trace", &trace, py::arg("image"),
            "One forward pass of one image with every attention layer's trace kept: the "
            "Traces that query_map answers from.");
  py::class_<Traces, std::shared_ptr<Traces>>(m, "Traces",
                                              "One image's forward pass with its attention traces.")
      .def_property_readonly("layers", &layers,
                             "Each traced layer: path, mechanism, grid, prefix, heads.")
      .def_property_readonly("logits", &logits, "The forward's output (classes or an embedding).")
      .def_property_readonly("tag", [](const Traces& t) { return t.tag; })
      .def_property_readonly(
          "logits_tensor", [](const Traces& t) { return tensor_out(t.forward.logits); },
          "The forward's output on the model's device, no copy: a torch.Tensor when the module "
          "was built against this environment's torch, else an attnlab.Tensor (DLPack).")
      .def("tensors", &layer_tensors, py::arg("layer") = -1,
           "A layer's recorded tensors on the model's device, no copy (torch.Tensor or "
           "attnlab.Tensor, as logits_tensor): the mechanism's internals and its per-head "
           "outputs when it computed them.")
      .def("query_map", &query_map, py::arg("layer") = -1, py::arg("query") = py::none(),
           py::arg("head") = py::none(), py::arg("fusion") = "mean",
           "The attention map of a query in a layer, from the traces: query (y, x) on the first "
           "layer's grid (default its centre), a token index, or a prefix name ('cls'); head an "
           "index, None for the head fusion (mean, max, min) or 'all' for (heads, H, W).");
}

}  // namespace attnlab::python
