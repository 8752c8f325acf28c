// AnalysisSession: settings, layer selection, accumulation and the plumbing every analysis
// shares. The analyses themselves are registered in analysis_registry.cpp.
#include "app/session/analysis_session.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include "core/io/text.h"
#include "models/image_text.h"

namespace attnlab::session {

models::ForwardOptions AnalysisSettings::forward_options() const {
  models::ForwardOptions o;
  o.trace_attention = true;
  // Some analyses read each attention module's output ("out.<path>"): spectra of layers
  // without branch outputs.
  for (const auto& name : analyses)
    if (const AnalysisInfo* a = find_analysis(name)) o.record_outputs |= a->needs_outputs;
  o.record_attention_outputs = false;  // the traces answer every map; "out.*" is what is read
  return o;
}

nlohmann::json AnalysisSettings::to_json() const {
  nlohmann::json j;
  j["analyses"] = std::vector<std::string>(analyses.begin(), analyses.end());
  j["query"] = query_token >= 0 ? nlohmann::json({{"token", query_token}})
               : query_y < 0    ? nlohmann::json("centre of the first layer's grid")
                                : nlohmann::json({{"y", query_y}, {"x", query_x}});
  j["layers"] = layers.empty() ? nlohmann::json("all") : nlohmann::json(layers);
  j["options"] = options.to_json();
  if (!edits.empty()) j["edits"] = image::edits_text(edits);
  for (const auto& info : session::analyses())
    if (info.describe && analyses.count(info.name)) j[info.name] = info.describe(*this);
  return j;
}

analysis::Array to_array(const at::Tensor& t, std::string name, std::vector<std::string> axes,
                         std::string caption) {
  const at::Tensor c = t.detach().to(at::kCPU, at::kFloat).contiguous();
  if (static_cast<int64_t>(axes.size()) != c.dim())
    throw std::invalid_argument("to_array: " + std::to_string(axes.size()) + " axis names for a " +
                                std::to_string(c.dim()) + "-d tensor (" + name + ")");
  analysis::Array a;
  a.name = std::move(name);
  a.caption = std::move(caption);
  a.shape = c.sizes().vec();
  a.axes = std::move(axes);
  a.data.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return a;
}

AnalysisSession::AnalysisSession(AnalysisSettings settings, ArraySink sink, AnalysisControl control)
    : settings_(std::move(settings)), sink_(std::move(sink)), control_(std::move(control)) {
  if (!sink_) sink_ = [](const analysis::Array&) {};
}

std::vector<SessionLayer> AnalysisSession::select_layers(
    const models::ForwardResult& result) const {
  const int64_t n = static_cast<int64_t>(result.traces.size());
  if (n == 0) throw std::runtime_error("the model produced no attention trace: nothing to analyse");
  std::vector<SessionLayer> out;
  if (settings_.layers.empty()) {
    for (int64_t i = 0; i < n; ++i)
      out.push_back({i, result.traces[size_t(i)].path, result.traces[size_t(i)].trace.get()});
    return out;
  }
  for (int64_t i : settings_.layers) {
    if (i < 0 || i >= n)
      throw std::runtime_error("layer " + std::to_string(i) + " does not exist: the model has " +
                               std::to_string(n) + " attention layers (0.." +
                               std::to_string(n - 1) + ")");
    out.push_back({i, result.traces[size_t(i)].path, result.traces[size_t(i)].trace.get()});
  }
  return out;
}

namespace {

// The layers whose traces offer every capability in `needs`.
std::vector<SessionLayer> offering(const std::vector<SessionLayer>& layers,
                                   const std::vector<std::string>& needs) {
  std::vector<SessionLayer> out;
  for (const auto& l : layers)
    if (std::all_of(needs.begin(), needs.end(),
                    [&](const std::string& c) { return l.trace->offers(c); }))
      out.push_back(l);
  return out;
}

}  // namespace

void AnalysisSession::finish() {
  if (finished_) return;
  finished_ = true;
  for (const AnalysisInfo& a : analyses())
    // A shard's (for_shard) fits on the whole run's images at merge, not on its own.
    if (a.finish && settings_.analyses.count(a.name) && !(for_shard_ && a.save_shard))
      guarded(a.name, [&] { a.finish(*this); });
}

void AnalysisSession::add(const std::string& image_tag, const models::ForwardResult& result,
                          int64_t b, const ImageSource& source) {
  if (!result.logits.defined() || b < 0 || b >= result.logits.size(0))
    throw std::invalid_argument(
        "AnalysisSession::add: image " + std::to_string(b) + " of a forward result of " +
        std::to_string(result.logits.defined() ? result.logits.size(0) : 0) + " image(s)");
  const std::vector<SessionLayer> layers = select_layers(result);
  if (layers_json_.is_null()) {
    layers_json_ = nlohmann::json::array();
    for (const auto& l : layers)
      layers_json_.push_back({{"index", l.index},
                              {"path", l.path},
                              {"mechanism", l.trace->mechanism},
                              {"heads", l.trace->heads},
                              {"head_dim", l.trace->head_dim},
                              {"layout", l.trace->layout.describe()},
                              {"tokens", l.trace->layout.tokens()},
                              {"window", l.trace->window},
                              {"window_w", l.trace->window_w},
                              {"window_shift", l.trace->window_shift}});
  }
  at::NoGradGuard no_grad;
  for (const AnalysisInfo& a : analyses()) {
    if (!a.add || !settings_.analyses.count(a.name)) continue;
    const std::vector<SessionLayer> usable = offering(layers, a.needs);
    if (usable.empty()) {
      skip(a.name + ": skipped, no analysed layer offers " + text::join(a.needs));
      continue;
    }
    ImageStep step{settings_, image_tag, usable, result, b, *this, source};
    guarded(a.name, [&] { a.add(step); });
  }
  ++images_;
}

void AnalysisSession::guarded(const std::string& analysis, const std::function<void()>& body) {
  // Between the analyses; inside a long one, its step's callbacks throw AnalysisCancelled
  // themselves (never caught here: a cancellation is not a problem of this model).
  throw_if_cancelled();
  try {
    body();
  } catch (const attention::TraceQueryError& e) {
    warn(analysis + ": " + e.what());
  } catch (const attention::AttentionError& e) {  // the explicit form's token limit
    warn(analysis + ": " + e.what());
  } catch (const models::ModelError& e) {  // an explanation's class or target the model lacks
    warn(analysis + ": " + e.what());
  }
}

void AnalysisSession::skip(const std::string& message) {
  if (std::find(skipped_.begin(), skipped_.end(), message) == skipped_.end())
    skipped_.push_back(message);
}

void AnalysisSession::warn(const std::string& message) {
  if (std::find(warnings_.begin(), warnings_.end(), message) == warnings_.end())
    warnings_.push_back(message);
}

void AnalysisSession::accumulate(const analysis::Table& per_image) {
  if (per_image.rows.empty()) return;
  auto it = tables_.find(per_image.name);
  if (it == tables_.end()) {
    table_order_.push_back(per_image.name);
    it = tables_.emplace(per_image.name, analysis::TableAccumulator{}).first;
  }
  it->second.add(per_image);
}

void AnalysisSession::add_sum(const std::string& name, const std::string& caption,
                              const std::vector<std::string>& axes, const at::Tensor& value) {
  const at::Tensor v = value.detach().to(at::kCPU, at::kDouble);
  auto it = sums_.find(name);
  if (it == sums_.end()) {
    sum_order_.push_back(name);
    sums_[name] = Sum{caption, axes, {}, 1};
    sums_[name].total.add(v);
    return;
  }
  if (!it->second.total.sum().sizes().equals(v.sizes()))
    throw attention::TraceQueryError(name + " changed shape between images (" +
                                     std::to_string(v.numel()) + " values)");
  it->second.total.add(v);
  ++it->second.count;
}

analysis::SpectrumAccumulator& AnalysisSession::spectrum_sum(const analysis::ResultKey& key) {
  const std::string name = analysis::format_result_key(key);
  if (!spectra_.count(name)) spectra_order_.push_back(key);
  return spectra_[name];
}

std::vector<analysis::Table> AnalysisSession::tables() const {
  std::vector<analysis::Table> out;
  for (const auto& name : table_order_) out.push_back(tables_.at(name).result());
  std::vector<analysis::Array> means;  // only when some analysis derives tables from them
  for (const auto& name : settings_.analyses) {
    const AnalysisInfo* a = find_analysis(name);
    if (!a || !a->derived_tables) continue;
    if (means.empty()) means = arrays();
    for (auto& t : a->derived_tables(means)) out.push_back(std::move(t));
  }
  return out;
}

std::vector<analysis::Array> AnalysisSession::arrays() const {
  std::vector<analysis::Array> out;
  for (analysis::ResultKey key : spectra_order_) {
    const analysis::Spectrum s = spectra_.at(analysis::format_result_key(key)).result();
    const std::string n = std::to_string(s.images);
    key.part = "log_amplitude";
    const std::string log_amplitude = analysis::format_result_key(key);
    key.part = "radial";
    const std::string radial = analysis::format_result_key(key);
    out.push_back(to_array(s.mean_log_amplitude, log_amplitude, {"channel", "fy", "fx"},
                           "mean over " + n +
                               " images of log|fftshift(fft2)| per channel (shift over the "
                               "spatial axes only; zero frequency at (H/2, W/2))"));
    out.push_back(to_array(s.radial, radial, {"channel", "ring"},
                           "radial profile of the mean log amplitude; ring k holds radius "
                           "k/max(H,W) cycles per token"));
  }
  for (const auto& name : sum_order_) {
    const Sum& s = sums_.at(name);
    out.push_back(to_array(s.total.value() / static_cast<double>(s.count), name, s.axes,
                           s.caption + " (mean over " + std::to_string(s.count) + " images)"));
  }
  return out;
}

}  // namespace attnlab::session

namespace attnlab::session {

bool AnalysisSession::explains() const {
  for (const AnalysisInfo& a : analyses())
    if (a.explain && settings_.analyses.count(a.name)) return true;
  return false;
}

void AnalysisSession::explain(const std::string& image_tag, models::Backbone& model,
                              const at::Tensor& image) {
  analysis::Table t;
  t.name = "explanations";
  t.caption = "the class each explanation is for and its logit, per image";
  t.columns = {"image", "analysis", "explained", "class", "logit"};
  t.key_columns = 4;
  for (const AnalysisInfo& a : analyses()) {
    if (!a.explain || !settings_.analyses.count(a.name)) continue;
    if (a.needs_prompts) {
      const models::ImageTextModel* text = models::image_text_model(model);
      if (!text) {
        skip(a.name + ": skipped, " + model.arch() + " reads no text (a whole CLIP does)");
        continue;
      }
      if (!text->class_head().defined()) {
        skip(a.name + ": skipped, " + model.arch() +
             " was given no prompts (--text, --text-file or --class-names)");
        continue;
      }
    }
    if (a.needs_classes && model.output_kind() == models::OutputKind::embedding) {
      skip(a.name + ": skipped, " + models::embedding_output_note(a.name, 0, model.arch()));
      continue;
    }
    ExplainStep step{settings_, image_tag, model, image, *this, t};
    guarded(a.name, [&] { a.explain(step); });
  }
  if (!t.rows.empty()) accumulate(t);  // only erf ran: no class was explained
}

}  // namespace attnlab::session
