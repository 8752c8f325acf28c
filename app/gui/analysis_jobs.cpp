// GUI compute jobs; see analysis_jobs.h. Built on the same pieces as the CLI: model choice
// and loading (app/cli), the analysis session (models/), so the GUI shows exactly what
// `attnlab analyze` and `attnlab report` write.
#include "app/gui/analysis_jobs.h"

#include <ATen/ATen.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "app/cli/model_choice.h"
#include "app/cli/report_run.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "models/analysis_session.h"

namespace attnlab::gui {

struct LoadedModel {
  cli::ModelChoice choice;
  cli::ReadyModel ready;
  std::vector<std::string> class_names;
};

namespace {

std::vector<std::string> class_names_of(const nlohmann::json& config, int64_t classes) {
  std::vector<std::string> names;
  if (config.contains("class_names") && config["class_names"].is_array()) {
    for (const auto& n : config["class_names"]) names.push_back(n.is_string() ? n.get<std::string>() : "");
    return names;
  }
  if (classes == 1000) {
    std::ifstream in(std::string(ATTNLAB_ASSETS_DIR) + "/imagenet1k_classes.txt");
    for (std::string line; std::getline(in, line);) names.push_back(line);
  }
  return names;
}

constexpr const char* kTag = "img";

std::string layer_tag(int i) {
  const std::string s = std::to_string(i);
  return "L" + std::string(s.size() < 2 ? 2 - s.size() : 0, '0') + s;
}

}  // namespace

std::string MapQuery::tag() const {
  if (!prefix.empty()) return prefix;
  if (row < 0) return "centre";
  return "q" + std::to_string(row) + "-" + std::to_string(col);
}

std::shared_ptr<LoadedModel> load_model(const std::string& model_arg, ModelInfo* info,
                                        const std::string& preset) {
  auto m = std::make_shared<LoadedModel>();
  std::vector<std::string> words{"--model", model_arg};
  if (!preset.empty()) words.insert(words.end(), {"--preset", preset});
  cli::Args args(words);
  m->choice = cli::take_model_choice(args);
  m->ready = cli::load_chosen_model(m->choice, c10::Device(c10::kCPU));
  if (info) {
    info->name = m->choice.tag;
    info->command_arg = model_arg;
    const auto& c = m->ready.config;
    std::string mech = c.contains("attention") && c["attention"].is_string() ? c["attention"].get<std::string>() : "";
    info->describe = m->ready.model->arch() + (mech.empty() ? "" : " with " + mech + " attention") + "; " +
                     m->choice.preprocessing.describe();
  }
  return m;
}

std::shared_ptr<const ImageAnalysis> analyse_image(LoadedModel& model, const std::string& image_path) {
  const auto t0 = std::chrono::steady_clock::now();
  auto out = std::make_shared<ImageAnalysis>();
  const at::Tensor x = image::preprocess(io::load_rgb_image(image_path), model.choice.preprocessing);
  out->picture = cli::input_picture(x, model.choice.preprocessing);
  models::AnalysisSettings settings;
  settings.analyses = models::parse_analyses("rank,spectra,anchors,mask,locality");
  models::ForwardOptions fo = settings.forward_options();
  fo.trace_attention = true;
  at::NoGradGuard no_grad;
  auto forward = std::make_shared<models::ForwardResult>(model.ready.model->run(x, fo));
  if (forward->traces.empty()) throw std::runtime_error("the model has no attention layer to show");
  models::AnalysisSession session(settings, [&](const analysis::Array& a) { out->arrays.push_back(a); });
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
    out->layers.push_back(l);
  }
  const at::Tensor probs = forward->logits.softmax(-1)[0].to(at::kFloat);
  if (model.class_names.empty()) model.class_names = class_names_of(model.ready.config, probs.size(0));
  const auto top = probs.topk(std::min<int64_t>(5, probs.size(0)));
  for (int64_t i = 0; i < std::get<1>(top).size(0); ++i) {
    Prediction p;
    p.cls = int(std::get<1>(top)[i].item<int64_t>());
    p.probability = std::get<0>(top)[i].item<double>();
    p.name = size_t(p.cls) < model.class_names.size() ? model.class_names[size_t(p.cls)] : "class " + std::to_string(p.cls);
    out->top5.push_back(p);
  }
  out->forward = forward;
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::shared_ptr<const QueryMaps> query_maps(const ImageAnalysis& a, const MapQuery& query) {
  const auto* forward = static_cast<const models::ForwardResult*>(a.forward.get());
  if (!forward) throw std::runtime_error("no traces recorded for this image");
  models::AnalysisSettings s;
  s.analyses = {"maps", "rollout"};
  if (!query.prefix.empty()) {
    const auto& first = forward->traces.front().trace->layout;
    int64_t token = -1;
    for (int64_t i = 0; i < first.num_prefix(); ++i)
      if (first.prefix[size_t(i)] == query.prefix) token = i;
    if (token < 0) throw std::runtime_error("this model has no " + query.prefix + " token");
    s.query_token = token;
  } else if (query.row >= 0) {
    s.query_y = query.row;
    s.query_x = query.col;
  }
  std::vector<analysis::Array> arrays;
  models::AnalysisSession session(s, [&](const analysis::Array& arr) { arrays.push_back(arr); });
  session.add(kTag, *forward);
  auto out = std::make_shared<QueryMaps>();
  out->query = query;
  const auto& first = forward->traces.front().trace->layout;
  const std::string qtag = !query.prefix.empty() ? query.prefix
                           : query.row >= 0    ? "q" + std::to_string(query.row) + "-" + std::to_string(query.col)
                                               : "q" + std::to_string(first.height / 2) + "-" + std::to_string(first.width / 2);
  out->heads.resize(forward->traces.size());
  out->fused.resize(forward->traces.size());
  for (auto& arr : arrays) {
    for (size_t i = 0; i < forward->traces.size(); ++i) {
      const std::string stem = std::string("maps__") + kTag + "__" + layer_tag(int(i)) + "__" + qtag;
      if (arr.name == stem + "__heads") out->heads[i] = arr;
      if (arr.name == stem + "__fused") out->fused[i] = arr;
    }
    if (arr.name.rfind(std::string("rollout__") + kTag + "__", 0) == 0) out->rollout = arr;
  }
  if (out->rollout.data.empty())
    out->rollout_note = session.warnings().empty() ? "no rollout for this query" : session.warnings().front();
  return out;
}

}  // namespace attnlab::gui
