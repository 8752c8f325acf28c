// Results.figures() and Results.figure(name, image=..., view keywords) → attnlab.Figure: the
// figures the CLI draws from the same results, built by the same code (the report's figure
// jobs of one model, or the figures of faithfulness, complexity and bench-attention), so a
// notebook's figure is the CLI's file byte for byte. A Figure writes SVG, PDF or PNG and shows
// itself inline in a notebook (_repr_svg_, _repr_png_).
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "app/session/analysis_registry.h"
#include "app/session/figure_view_options.h"
#include "core/io/text.h"
#include "core/runtime/threads.h"
#include "python/src/figure.h"
#include "python/src/results.h"
#include "viz/render.h"

namespace attnlab::python {
namespace {

constexpr double kDefaultDpi = 200;  // the CLI's --dpi default (report, faithfulness)

// A view keyword's value as the command line would spell it: text as is, an index or a
// number in its shortest exact form, a pair of model indices as "A,B".
std::string view_value_text(const std::string& key, const py::handle& value) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::bool_>(value))
    throw std::invalid_argument(key + ": not a truth value (see help(attnlab.Results.figure))");
  if (py::isinstance<py::int_>(value)) return std::to_string(value.cast<int64_t>());
  if (py::isinstance<py::float_>(value)) return text::shortest_decimal(value.cast<double>());
  if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
    std::vector<std::string> items;
    for (const auto& item : value) items.push_back(view_value_text(key, item));
    return text::join(items, ",");
  }
  throw std::invalid_argument(key + ": a string or a number, not " +
                              std::string(py::str(py::type::of(value))));
}

// The view keywords through the one figure-view parser the CLI's --layer, --head, ...
// use (session/figure_view_options.h), so the same values are refused with the same words.
session::FigureOptions view_of(const Results& r, const py::kwargs& view) {
  session::FigureViewParser parser;
  for (const auto& [key, value] : view) {
    const std::string k = py::str(key);
    parser.set(k, view_value_text(k, value), k);
  }
  session::FigureOptions o = parser.finish();
  o.rollout_switches = r.rollout_switches;
  return o;
}

// Calls `use` with the figure jobs of `r` under `options`; the jobs refer to data that
// lives only during the call (the report's jobs read a session::ModelResults).
template <typename Use>
auto with_jobs(const Results& r, const session::FigureOptions& options, Use use) {
  if (!r.report_figures) return use(r.own_figures);
  std::vector<session::ModelResults> models(1);
  session::ModelResults& m = models[0];
  m.name = r.model_tag;
  m.preprocessing = r.preprocessing;
  m.images = r.images;
  m.tables = r.tables;
  for (const auto& a : r.arrays) m.arrays.push_back(*a);
  m.layers = r.metadata.value("layers", nlohmann::json::array());
  m.class_names = r.class_names;
  return use(session::report_figure_jobs(models, std::nullopt, options));
}

py::list figures(const Results& r, const py::kwargs& view) {
  const session::FigureOptions options = view_of(r, view);
  py::list out;
  with_jobs(r, options, [&](const std::vector<session::FigureJob>& jobs) {
    for (const auto& j : jobs) {
      py::dict d;
      d["kind"] = j.kind;
      d["stem"] = j.stem;
      out.append(d);
    }
    return 0;
  });
  return out;
}

Figure figure(const Results& r, const std::string& name, const std::optional<std::string>& image,
              const py::kwargs& view) {
  const session::FigureOptions options = view_of(r, view);
  return with_jobs(r, options, [&](const std::vector<session::FigureJob>& jobs) {
    std::vector<const session::FigureJob*> found;
    std::vector<std::string> known;
    for (const auto& j : jobs) {
      known.push_back(j.stem);
      if (j.kind != name && j.stem != name) continue;
      const std::string& s = j.stem;
      const bool of_image =
          !image || s.find("__" + *image + "__") != std::string::npos ||
          (s.size() >= image->size() + 2 &&
           s.compare(s.size() - image->size() - 2, std::string::npos, "__" + *image) == 0);
      if (of_image) found.push_back(&j);
    }
    if (found.empty())
      throw std::invalid_argument("figure: no figure '" + name + "'" +
                                  (image ? " of image '" + *image + "'" : std::string()) +
                                  " in these results (they draw: " +
                                  (known.empty() ? "none" : text::join(known, ", ")) + ")");
    if (found.size() > 1) {
      std::vector<std::string> stems;
      for (const auto* j : found) stems.push_back(j->stem);
      throw std::invalid_argument("figure: '" + name + "' is " + std::to_string(found.size()) +
                                  " figures (" + text::join(stems, ", ") +
                                  "): name one, or give image=");
    }
    Figure f{found[0]->kind, found[0]->stem, {}};
    py::gil_scoped_release release;
    f.figure = found[0]->build();
    return f;
  });
}

// Every figure of the results (of `kinds`, when given) written into `folder` as
// <stem>.<format>, drawn side by side on LibTorch's threads as `attnlab report` draws them.
// One figure that cannot be drawn is reported in the answer; the others are written.
py::dict save_figures(const Results& r, const std::string& folder, const py::object& kinds,
                      const std::vector<std::string>& formats, double dpi, const py::kwargs& view) {
  const session::FigureOptions options = view_of(r, view);
  std::vector<viz::FigureFormat> fmts;
  for (const auto& name : formats) {
    const auto f = viz::figure_format_from_name(name);
    if (!f) throw std::invalid_argument("formats: svg, pdf or png, not '" + name + "'");
    fmts.push_back(*f);
  }
  std::vector<std::string> wanted;
  if (py::isinstance<py::str>(kinds)) wanted = {kinds.cast<std::string>()};
  else if (!kinds.is_none()) wanted = kinds.cast<std::vector<std::string>>();
  std::vector<std::string> written, errors;
  with_jobs(r, options, [&](const std::vector<session::FigureJob>& jobs) {
    std::vector<const session::FigureJob*> todo;
    for (const auto& j : jobs)
      if (wanted.empty() || std::find(wanted.begin(), wanted.end(), j.kind) != wanted.end())
        todo.push_back(&j);
    py::gil_scoped_release release;
    std::filesystem::create_directories(folder);
    std::vector<std::vector<std::string>> files(todo.size());
    std::vector<std::string> failed(todo.size());
    std::atomic<size_t> next{0};
    const auto work = [&] {
      for (size_t i = next++; i < todo.size(); i = next++) {
        try {
          const viz::CaptionedFigure cf = todo[i]->build();
          for (const auto f : fmts) {
            const std::string path = (std::filesystem::path(folder) /
                                      (todo[i]->stem + "." + viz::figure_format_name(f)))
                                         .string();
            viz::write_figure(cf.figure, path, f, dpi);
            files[i].push_back(path);
          }
        } catch (const std::exception& e) {
          failed[i] = todo[i]->stem + ": " + e.what();
        }
      }
    };
    const size_t workers =
        std::min(todo.size(), size_t(std::max(1, runtime::current_threads())));
    std::vector<std::thread> pool;
    for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (size_t i = 0; i < todo.size(); ++i) {
      written.insert(written.end(), files[i].begin(), files[i].end());
      if (!failed[i].empty()) errors.push_back(failed[i]);
    }
    return 0;
  });
  py::dict out;
  out["files"] = written;
  out["errors"] = errors;
  return out;
}

std::string save_figure(const Figure& f, const std::string& path, double dpi) {
  const std::string ext = std::filesystem::path(path).extension().string();
  const auto format = viz::figure_format_from_name(ext.empty() ? ext : ext.substr(1));
  if (!format)
    throw std::invalid_argument("path: the extension says the format: .svg, .pdf or .png, not '" +
                                ext + "'");
  py::gil_scoped_release release;
  viz::write_figure(f.figure.figure, path, *format, dpi);
  return path;
}

}  // namespace

void bind_figures(py::module_& m, py::class_<Results, std::shared_ptr<Results>>& results) {
  py::class_<Figure>(m, "Figure",
                     "A figure as the CLI draws it: svg(), pdf(), png(dpi), save(path); shown "
                     "inline in a notebook.")
      .def_readonly("kind", &Figure::kind)
      .def_readonly("stem", &Figure::stem, "The CLI's file name for it, without extension.")
      .def_property_readonly("caption", [](const Figure& f) { return f.figure.caption; })
      .def("svg", [](const Figure& f) { return viz::render_svg(f.figure.figure); })
      .def("pdf", [](const Figure& f) { return py::bytes(viz::render_pdf(f.figure.figure)); })
      .def(
          "png",
          [](const Figure& f, double dpi) {
            return py::bytes(viz::render_png(f.figure.figure, dpi));
          },
          py::arg("dpi") = kDefaultDpi)
      .def("save", &save_figure, py::arg("path"), py::arg("dpi") = kDefaultDpi,
           "Writes the figure (format from the extension: .svg, .pdf, .png) atomically.")
      .def("_repr_svg_", [](const Figure& f) { return viz::render_svg(f.figure.figure); })
      .def("_repr_png_",
           [](const Figure& f) { return py::bytes(viz::render_png(f.figure.figure, kDefaultDpi)); })
      .def("__repr__", [](const Figure& f) { return "<attnlab.Figure " + f.stem + ">"; });
  results
      .def("figures", &figures,
           "The figures these results draw under the view keywords: [{kind, stem}, ...].")
      .def("save_figures", &save_figures, py::arg("folder"), py::arg("kinds") = py::none(),
           py::arg("formats") = std::vector<std::string>{"svg", "pdf", "png"},
           py::arg("dpi") = kDefaultDpi,
           "Writes every figure (of the kinds given) into folder as <stem>.<format>, drawn "
           "side by side as `attnlab report` draws them; view keywords as figure(). Returns "
           "{files, errors}.")
      .def("figure", &figure, py::arg("name"), py::arg("image") = py::none(),
           "The figure of a kind or stem (image= picks one image's), as the CLI draws it; view "
           "keywords: layer, head, fusion, map, colormap, alpha, norm, upsample, compare_scale.");
}

}  // namespace attnlab::python
