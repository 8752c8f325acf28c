// GUI compute jobs; see analysis_jobs.h. Built on the same pieces as the CLI: model choice
// and loading (app/cli), the analysis session (models/), so the GUI shows exactly what
// `attnlab analyze` and `attnlab report` write.
#include "app/gui/analysis_jobs.h"

#include <ATen/ATen.h>

#include <chrono>
#include <filesystem>
#include <set>

#include "app/cli/model_choice.h"
#include "app/cli/report_run.h"
#include "app/gui/loaded_model.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "models/analysis_session.h"

namespace attnlab::gui {

namespace {

constexpr const char* kTag = "img";

}  // namespace

std::string MapQuery::tag() const {
  if (!prefix.empty()) return prefix;
  if (row < 0) return "centre";
  return models::grid_query_tag(row, col);
}

std::shared_ptr<LoadedModel> load_model(const std::string& model_arg, ModelInfo* info,
                                        const std::string& preset) {
  auto m = std::make_shared<LoadedModel>();
  m->choice = cli::model_entry_choice(model_arg, preset);
  m->ready = cli::load_chosen_model(m->choice, c10::Device(c10::kCPU));
  if (info) {
    info->name = m->choice.tag;
    info->command_arg = model_arg;
    const auto& c = m->ready.config;
    std::string mech = c.contains("attention") && c["attention"].is_string()
                           ? c["attention"].get<std::string>()
                           : "";
    info->describe = m->ready.model->arch() + (mech.empty() ? "" : " with " + mech + " attention") +
                     "; " + m->choice.preprocessing.describe();
  }
  return m;
}

std::shared_ptr<const ImageAnalysis> analyse_image(LoadedModel& model,
                                                   const std::string& image_path) {
  const auto t0 = std::chrono::steady_clock::now();
  auto out = std::make_shared<ImageAnalysis>();
  const at::Tensor x =
      image::preprocess(io::load_rgb_image(image_path), model.choice.preprocessing);
  out->picture = cli::input_picture(x, model.choice.preprocessing);
  models::AnalysisSettings settings;
  settings.analyses = models::parse_analyses("rank,spectra,anchors,mask,locality");
  const models::ForwardOptions fo = settings.forward_options();  // traces included
  at::NoGradGuard no_grad;
  auto forward = std::make_shared<models::ForwardResult>(model.ready.model->run(x, fo));
  if (forward->traces.empty()) throw std::runtime_error("the model has no attention layer to show");
  models::AnalysisSession session(settings,
                                  [&](const analysis::Array& a) { out->arrays.push_back(a); });
  session.add(kTag, *forward);
  out->tables = session.tables();
  for (const auto& a : session.arrays()) out->arrays.push_back(a);
  for (size_t i = 0; i < forward->traces.size(); ++i) {
    const auto& t = *forward->traces[i].trace;
    LayerInfo l;
    l.index = int(i);
    l.path = forward->traces[i].path;
    l.mechanism = t.mechanism;
    l.rows = int(t.layout.height);
    l.cols = int(t.layout.width);
    l.stage = t.layout.stage;
    l.prefix = t.layout.prefix;
    l.heads = int(t.heads);
    l.window = int(t.window);
    out->layers.push_back(l);
  }
  const at::Tensor logits = forward->logits[0];
  if (model.class_names.empty())
    model.class_names = cli::class_names(model.ready.config, logits.size(0));
  out->top5 = cli::top_predictions(logits, model.class_names);
  for (Prediction& p : out->top5)
    if (p.name.empty()) p.name = "class " + std::to_string(p.cls);
  out->forward = forward;
  out->input = std::make_shared<at::Tensor>(x);
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<float> anchor_distribution(const ImageAnalysis& a, int layer, int token, int head) {
  const std::string name = models::anchor_array_stem(kTag, layer) + "__soft";
  for (const analysis::Array& arr : a.arrays) {
    if (arr.name != name || arr.shape.size() != 3) continue;
    const int64_t heads = arr.shape[0], tokens = arr.shape[1], anchors = arr.shape[2];
    if (token < 0 || token >= tokens || head >= heads) return {};
    std::vector<float> out(size_t(anchors), 0.0f);
    const int64_t first = head < 0 ? 0 : head, last = head < 0 ? heads : head + 1;
    for (int64_t h = first; h < last; ++h)
      for (int64_t m = 0; m < anchors; ++m)
        out[size_t(m)] +=
            arr.data[size_t((h * tokens + token) * anchors + m)] / float(last - first);
    return out;
  }
  return {};
}

namespace {

const models::ForwardResult& traces_of(const ImageAnalysis& a) {
  const auto* forward = static_cast<const models::ForwardResult*>(a.forward.get());
  if (!forward) throw std::runtime_error("no traces recorded for this image");
  return *forward;
}

// Runs `analyses` of the session for `query` over the recorded traces; the arrays it
// writes go to `arrays`, and the query's tag (as in the array names) is returned.
std::string run_query_session(const models::ForwardResult& forward, const MapQuery& query,
                              const std::vector<std::string>& analyses,
                              std::vector<analysis::Array>* arrays,
                              std::vector<std::string>* warnings) {
  models::AnalysisSettings s;
  s.analyses = std::set<std::string>(analyses.begin(), analyses.end());
  const auto& first = forward.traces.front().trace->layout;
  if (!query.prefix.empty()) {
    int64_t token = -1;
    for (int64_t i = 0; i < first.num_prefix(); ++i)
      if (first.prefix[size_t(i)] == query.prefix) token = i;
    if (token < 0) throw std::runtime_error("this model has no " + query.prefix + " token");
    s.query_token = token;
  } else if (query.row >= 0) {
    s.query_y = query.row;
    s.query_x = query.col;
  }
  models::AnalysisSession session(s, [&](const analysis::Array& arr) { arrays->push_back(arr); });
  session.add(kTag, forward);
  *warnings = session.warnings();
  return !query.prefix.empty() ? query.prefix
         : query.row >= 0      ? models::grid_query_tag(query.row, query.col)
                               : models::grid_query_tag(first.height / 2, first.width / 2);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::shared_ptr<const QueryMaps> query_maps(const ImageAnalysis& a, const MapQuery& query) {
  const auto t0 = std::chrono::steady_clock::now();
  const models::ForwardResult& forward = traces_of(a);
  std::vector<analysis::Array> arrays;
  std::vector<std::string> warnings;
  const std::string qtag = run_query_session(forward, query, {"maps"}, &arrays, &warnings);
  auto out = std::make_shared<QueryMaps>();
  out->query = query;
  out->heads.resize(forward.traces.size());
  out->fused.resize(forward.traces.size());
  for (auto& arr : arrays) {
    for (size_t i = 0; i < forward.traces.size(); ++i) {
      const std::string stem = models::map_array_stem(kTag, int64_t(i), qtag);
      if (arr.name == stem + "__heads")
        out->heads[i] = std::move(arr);
      else if (arr.name == stem + "__fused")
        out->fused[i] = std::move(arr);
    }
  }
  out->seconds = seconds_since(t0);
  return out;
}

std::shared_ptr<const QueryRollout> query_rollout(const ImageAnalysis& a, const MapQuery& query) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<analysis::Array> arrays;
  std::vector<std::string> warnings;
  run_query_session(traces_of(a), query, {"rollout"}, &arrays, &warnings);
  auto out = std::make_shared<QueryRollout>();
  out->query = query;
  for (auto& arr : arrays)
    if (arr.name.rfind(std::string("rollout__") + kTag + "__", 0) == 0) out->map = std::move(arr);
  if (out->map.data.empty())
    out->note = warnings.empty() ? "no rollout for this query" : warnings.front();
  out->seconds = seconds_since(t0);
  return out;
}

}  // namespace attnlab::gui
