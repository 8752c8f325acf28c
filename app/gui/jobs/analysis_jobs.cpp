// GUI compute jobs; see analysis_jobs.h. Built on the same pieces as the CLI (the session
// library: model choice and loading, the analysis session and registry, the query
// resolution), so the GUI shows exactly what `attnlab analyze` and `attnlab report` write.
#include "app/gui/jobs/analysis_jobs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "app/gui/jobs/loaded_model.h"
#include "app/session/analyses/step_helpers.h"
#include "app/session/analysis_session.h"
#include "app/session/edited_input.h"
#include "app/session/input_picture.h"
#include "app/session/query.h"
#include "core/analysis/patch_similarity.h"
#include "core/analysis/rollout.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "core/io/text.h"
#include "core/runtime/device.h"
#include "models/config_mechanism.h"
#include "models/image_text.h"

namespace attnlab::gui {

std::string MapQuery::tag() const {
  if (!prefix.empty()) return prefix;
  if (row < 0) return "centre";
  return analysis::grid_query_tag(row, col);
}

namespace {

// Runs the model once, untraced, on a blank picture made by its own preprocessing: the
// input size is one it can take, and (with the user's names file) the names match its
// class count. Returns the number of classes.
int64_t check_model_runs(LoadedModel& m) {
  const image::Preprocessing& p = m.choice.preprocessing;
  io::RgbImage blank;
  blank.width = blank.height = std::max({p.crop, p.crop_width, p.resize_short, 32});
  blank.rgb.assign(size_t(blank.width) * size_t(blank.height) * 3, 128);
  at::NoGradGuard no_grad;
  const at::Tensor logits = m.ready.model->run(image::preprocess(blank, p).to(m.device)).logits;
  if (m.ready.model->output_kind() == models::OutputKind::embedding) return 0;  // no classes
  const int64_t classes = logits.size(-1);
  m.class_names = session::model_class_names(m.choice, m.ready.config, classes);
  return classes;
}

}  // namespace

std::shared_ptr<LoadedModel> load_model(const std::string& model_arg, ModelInfo* info,
                                        const ModelOptions& options) {
  auto m = std::make_shared<LoadedModel>();
  session::ModelRequest request = session::model_entry_request(model_arg, options.preset);
  request.img_size = options.img_size;
  request.class_names_path = options.class_names_path;
  request.prompts = options.prompts;
  request.merge = options.merge;
  m->choice = session::choose_model(request);
  // A device not here, or a precision this LibTorch cannot run there: the reason.
  const runtime::ComputeTarget target = runtime::select_target(options.device, options.dtype);
  m->device = target.device;
  m->ready = session::load_chosen_model(m->choice, target);
  const bool check = !options.img_size.empty() || !options.class_names_path.empty() ||
                     options.merge >= 0 || !options.prompts.empty();
  const int64_t classes = check ? check_model_runs(*m) : 0;
  if (info) {
    const image::Preprocessing& p = m->choice.preprocessing;
    info->name = m->choice.tag;
    info->command_arg = model_arg;
    const auto& c = m->ready.config;
    const std::string mech = c.contains("attention") && c["attention"].is_string()
                                 ? c["attention"].get<std::string>()
                                 : "";
    info->mechanism = models::config_mechanism(c);
    const std::string arch = m->ready.model->arch();
    info->mergeable = arch == "vit" || arch == "tome_vit";
    info->reads_text = models::image_text_model(*m->ready.model) != nullptr;
    info->describe = m->ready.model->arch() + (mech.empty() ? "" : " with " + mech + " attention") +
                     "; " + p.describe();
    for (const auto& w : m->ready.warnings) info->describe += "; WARNING: " + w;
    if (m->ready.describe.contains("precision_note"))  // --dtype / the precision picker
      info->describe += "; " + m->ready.describe["precision_note"].get<std::string>();
    info->recognition = m->choice.recognition;
    for (const auto& n : m->ready.notes)  // a zero-shot head from the class names
      info->recognition += (info->recognition.empty() ? "" : "; ") + n;
    info->preprocessing = p.describe();
    info->input_size.clear();
    if (p.crop > 0) info->input_size = {p.crop, p.crop_width > 0 ? p.crop_width : p.crop};
    info->options = options;
    info->classes = classes;
  }
  return m;
}

std::shared_ptr<const ImageAnalysis> analyse_image(
    LoadedModel& model, const std::string& image_path, const session::OptionValues& options,
    const std::vector<image::EditOp>& edits, const std::function<bool()>& cancelled,
    const std::function<void(int64_t done, int64_t total)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  auto out = std::make_shared<ImageAnalysis>();
  const at::Tensor x = session::edited_input(io::load_rgb_image(image_path),
                                             model.choice.preprocessing, *model.ready.model, edits);
  out->picture = session::input_picture(x, model.choice.preprocessing);
  out->edits_key = image::edits_text(edits);
  session::AnalysisSettings settings;
  settings.options = options;
  out->options_key = image_options_key(options);
  for (const auto& a : session::analyses())
    if (a.in_image_analysis) settings.analyses.insert(a.name);
  const models::ForwardOptions fo = settings.forward_options();  // traces included
  at::NoGradGuard no_grad;
  const at::Tensor on_device = x.to(model.device);  // x stays on the host for the picture
  auto forward = std::make_shared<models::ForwardResult>(model.ready.model->run(on_device, fo));
  if (forward->traces.empty()) throw std::runtime_error("the model has no attention layer to show");
  for (const auto& a : session::analyses())  // those that run only on small enough models
    if (a.in_image_analysis_if && a.in_image_analysis_if(*forward))
      settings.analyses.insert(a.name);
  session::AnalysisSession session(
      settings, [&](const analysis::Array& a) { out->arrays.push_back(a); }, {cancelled, progress});
  session.add(kImageTag, *forward, 0, {image_path, &x, &model.choice.preprocessing});
  // The image analyses that need the model (erf: a backward pass to the pixels).
  if (session.explains()) session.explain(kImageTag, *model.ready.model, on_device);
  session.finish();
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
    l.window_shift = int(t.window_shift);
    l.window_w = int(t.window_w);
    out->layers.push_back(l);
  }
  const at::Tensor logits = forward->logits[0];
  if (forward->output_kind == models::OutputKind::embedding) {
    out->embedding = logits.size(0);  // no classes to name or rank
  } else {
    if (model.class_names.empty())  // the user's names file, else the config's or bundled ones
      model.class_names =
          session::model_class_names(model.choice, model.ready.config, logits.size(0));
    out->top5 = session::top_predictions(logits, model.class_names);
    // The prompts' texts for the Prompts tab; a thousand class names are not copied.
    if (model.class_names.size() <= 64) out->class_names = model.class_names;
    for (Prediction& p : out->top5)
      if (p.name.empty()) p.name = "class " + std::to_string(p.cls);
  }
  out->forward = forward;
  out->input = std::make_shared<at::Tensor>(on_device);  // explanations run where the model is
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<float> anchor_distribution(const ImageAnalysis& a, int layer, int token, int head) {
  const std::string name =
      analysis::format_result_key({"anchors", kImageTag, layer, "", "", "soft"});
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
  if (!a.forward) throw std::runtime_error("no traces recorded for this image");
  return *a.forward;
}

// The session's settings for a clicked query (the analyses' own query resolution).
session::AnalysisSettings query_settings(const models::ForwardResult& forward,
                                         const MapQuery& query) {
  session::AnalysisSettings s;
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
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::shared_ptr<const QueryMaps> query_maps(const ImageAnalysis& a, const MapQuery& query,
                                            const std::string& facet) {
  const auto t0 = std::chrono::steady_clock::now();
  const models::ForwardResult& forward = traces_of(a);
  const session::AnalysisSettings settings = query_settings(forward, query);
  const session::Query q = session::resolve_query(settings, forward.traces.front().trace->layout);
  auto out = std::make_shared<QueryMaps>();
  out->query = query;
  out->heads.resize(forward.traces.size());
  out->fused.resize(forward.traces.size());
  out->facet = facet;
  out->similarity.resize(forward.traces.size());
  out->similarity_notes.resize(forward.traces.size());
  const analysis::SimilarityFacet f = analysis::parse_similarity_facet(facet);
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < forward.traces.size(); ++i) {
    const attention::AttentionTrace& trace = *forward.traces[i].trace;
    if (trace.layout.tokens() > settings.map_max_tokens) continue;  // as the maps analysis
    const int64_t token = q.token_in(trace.layout);
    if (token < 0) continue;  // a layer without this prefix token
    const session::LayerQueryMaps maps = session::layer_query_maps(trace, 0, token);
    out->heads[i] = session::to_array(maps.map.grid, "heads", {"head", "y", "x"});
    out->fused[i] = session::to_array(maps.fused, "fused", {"fusion", "y", "x"});
    // The same query's similarity to every token (as the similarity analysis computes it).
    try {
      const auto& lay = trace.layout;
      const at::Tensor features =
          f == analysis::SimilarityFacet::Tokens
              ? session::block_output_tokens(forward, forward.traces[i].path, lay, 0)
              : analysis::trace_facet(trace, 0, f);
      const at::Tensor row = analysis::cosine_similarity_row(features, token);
      out->similarity[i] = session::to_array(
          row.slice(0, lay.num_prefix()).reshape({lay.height, lay.width}), "cosine", {"y", "x"});
    } catch (const std::exception& e) {  // no such facet per token, no recorded output
      out->similarity_notes[i] = e.what();
    }
  }
  out->seconds = seconds_since(t0);
  return out;
}

namespace {
// The values of the options the analyses `read` declare or name, as JSON text.
std::string option_values_of(const session::OptionValues& options,
                             const std::function<bool(const session::AnalysisInfo&)>& read) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto* o : session::analysis_options())
    for (const auto& name : session::analyses_reading(o->name))
      if (const session::AnalysisInfo* a = session::find_analysis(name); a && read(*a))
        j[o->name] = options.get(o->name);
  return j.dump();
}
}  // namespace

std::string rollout_tag(const session::OptionValues& options) {
  return option_values_of(options,
                          [](const session::AnalysisInfo& a) { return a.name == "rollout"; });
}

std::string image_options_key(const session::OptionValues& options) {
  return option_values_of(options, [](const session::AnalysisInfo& a) {
    return a.in_image_analysis || bool(a.in_image_analysis_if);
  });
}

std::shared_ptr<const QueryRollout> query_rollout(const ImageAnalysis& a, const MapQuery& query,
                                                  const session::OptionValues& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const models::ForwardResult& forward = traces_of(a);
  session::AnalysisSettings settings = query_settings(forward, query);
  settings.options = options;
  auto out = std::make_shared<QueryRollout>();
  out->query = query;
  std::vector<const attention::AttentionTrace*> chain;
  for (const auto& t : forward.traces) chain.push_back(t.trace.get());
  at::NoGradGuard no_grad;
  try {
    const session::QueryRollout r = session::rollout_of_query(chain, 0, settings);
    out->map = session::to_array(r.grid, "rollout", {"y", "x"});
    if (!r.query.prefix.empty()) {
      out->answered.prefix = r.query.prefix;
    } else {
      const auto& first = chain.front()->layout;
      out->answered.row = int(r.query.grid.y);
      out->answered.col = int(r.query.grid.x);
      out->answered.grid_rows = int(first.height);
      out->answered.grid_cols = int(first.width);
    }
  } catch (const attention::TraceQueryError& e) {  // what the rollout analysis warns about
    out->note = std::string("rollout: ") + e.what();
  }
  if (out->map.data.empty() && out->note.empty()) out->note = "no rollout for this query";
  out->seconds = seconds_since(t0);
  return out;
}

}  // namespace attnlab::gui
