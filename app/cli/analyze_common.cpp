// Options, image loop, progress and run description of the analysis commands.
#include "app/cli/analyze_common.h"

#include <ATen/ATen.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "app/cli/output_failure.h"
#include "app/cli/report_cka.h"
#include "app/cli/version.h"
#include "app/session/checkpoint_series.h"
#include "app/session/edited_input.h"
#include "core/attention/fused_attention.h"
#include "core/io/image_io.h"
#include "core/io/tensor_file.h"
#include "core/runtime/threads.h"
#include "models/model_config.h"

namespace attnlab::cli {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t parse_index(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0)
    throw UsageError(option + ": '" + text + "' is not a non-negative integer");
  return v;
}

}  // namespace

std::vector<int64_t> parse_layers(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_index(item, "--layers"));
      continue;
    }
    const int64_t a = parse_index(item.substr(0, dash), "--layers");
    const int64_t b = parse_index(item.substr(dash + 1), "--layers");
    if (b < a) throw UsageError("--layers: empty range '" + item + "'");
    for (int64_t i = a; i <= b; ++i) out.push_back(i);
  }
  return out;
}

namespace {

// "y,x" (a cell of `grid`) into y and x; UsageError naming `option` otherwise.
void parse_cell(const std::string& text, const std::string& option, const std::string& grid,
                int64_t& y, int64_t& x) {
  const auto comma = text.find(',');
  if (comma == std::string::npos)
    throw UsageError(option + " wants y,x (" + grid + " row, column)");
  y = parse_index(text.substr(0, comma), option);
  x = parse_index(text.substr(comma + 1), option);
}

}  // namespace

session::AnalysisSettings take_analysis_settings(Args& args, const std::string& default_analyses) {
  session::AnalysisSettings st;
  const std::string analyses = args.take_option("--analyses");
  try {
    st.analyses = session::parse_analyses(analyses.empty() ? default_analyses : analyses);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--analyses: ") + e.what());
  }
  st.images_per_forward = args.take_positive_int("--batch", 1);
  const std::string query = args.take_option("--query");
  if (!query.empty()) parse_cell(query, "--query", "grid", st.query_y, st.query_x);
  const std::string token = args.take_option("--query-token");
  if (!token.empty()) {
    if (!query.empty()) throw UsageError("give --query y,x or --query-token N, not both");
    st.query_token = parse_index(token, "--query-token");
  }
  const std::string layers = args.take_option("--layers");
  if (!layers.empty()) st.layers = parse_layers(layers);
  // What-if edits of every image of the run, in the order given; --edit may be repeated
  // (its operations follow the previous one's). Whether a square lies on the token grid is
  // known only once the model is: an image it does not fit fails with the edit named.
  const auto& rest = args.remaining();
  while (std::find(rest.begin(), rest.end(), "--edit") != rest.end()) {
    const std::string text = args.take_option("--edit");
    try {
      for (image::EditOp& op : image::parse_edits(text)) st.edits.push_back(std::move(op));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--edit: ") + e.what());
    }
  }
  // A paste's source that is not there would fail every image the same way: said now.
  for (const image::EditOp& op : st.edits)
    if (op.kind == image::EditOp::Kind::Paste && !std::filesystem::is_regular_file(op.source))
      throw UsageError("--edit: the paste source " + op.source + " is no file");
  // Every analysis's own options, as the analyses declare them (analysis_options.h).
  for (const session::AnalysisOption* o : session::analysis_options()) {
    try {
      if (o->kind == session::AnalysisOption::Kind::Flag) {
        if (args.take_flag("--" + o->name)) st.options.set(o->name, true);
        continue;
      }
      const std::string text = args.take_option("--" + o->name);
      if (!text.empty()) st.options.set(o->name, session::parse_option_value(*o, text));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  return st;
}

AnalyzeRequest take_analyze_request(Args& args, bool series, const std::string& default_analyses) {
  AnalyzeRequest r;
  if (series) {
    r.checkpoints = args.take_list("--checkpoints");
    if (r.checkpoints.empty())
      throw UsageError("analyze-series needs --checkpoints FILE... (in training order)");
    if (!args.take_option("--model").empty())
      throw UsageError("analyze-series takes --checkpoints, not --model");
    // The model options apply to every checkpoint; the first one stands for all here.
    std::vector<std::string> model_args{"--checkpoint", r.checkpoints.front()};
    for (const char* o : {"--preset", "--config", "--key"}) {
      const std::string v = args.take_option(o);
      if (!v.empty()) model_args.insert(model_args.end(), {o, v});
    }
    Args first(model_args);
    r.model = take_model_choice(first);
    r.model.hash_checkpoint = true;  // each checkpoint's, as with_checkpoint takes it
    // Named after the series folder when it is one ("castling_series/step_000000..."),
    // else after the first checkpoint.
    const std::filesystem::path first_file(r.checkpoints.front());
    const std::string folder = first_file.parent_path().filename().string();
    const std::string suffix = "_series";
    r.model.tag = folder.size() > suffix.size() &&
                          folder.compare(folder.size() - suffix.size(), suffix.size(), suffix) == 0
                      ? folder
                      : first_file.stem().string() + suffix;
  } else {
    r.model_request = take_model_request(args, /*hash_checkpoint=*/true);
    r.model = choose_request(r.model_request);
  }
  std::vector<std::string> images = args.take_list("--images");
  r.out = args.take_option("--out");
  r.settings = take_analysis_settings(args, !default_analyses.empty() ? default_analyses
                                            : series                  ? "mask,rank,locality"
                                                                      : "all");
  const auto rest = args.positionals();
  images.insert(images.end(), rest.begin(), rest.end());
  if (images.empty()) throw UsageError("name the images: --images FILES|DIR");
  if (r.out.empty()) throw UsageError("name the output folder: --out DIR");
  r.images = expand_images(images);
  return r;
}

Progress::Progress(std::string label, int64_t total, std::string unit)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      start_(now_seconds()),
      tty_(isatty(2) != 0) {}

void Progress::update(int64_t done, const std::string& item) {
  const double t = now_seconds();
  if (!tty_ && done < total_ && t - last_print_ < 1.0) return;
  last_print_ = t;
  const double rate = done > 0 ? double(done) / std::max(1e-9, t - start_) : 0.0;
  const double eta = rate > 0 ? double(total_ - done) / rate : 0.0;
  std::fprintf(stderr, "%s%s: [%lld/%lld] %s  %.2f %s/s  ETA %.0f s%s", tty_ ? "\r\x1b[K" : "",
               label_.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
               item.c_str(), rate, unit_.c_str(), eta, tty_ ? "" : "\n");
  std::fflush(stderr);
}

void Progress::break_line() {
  if (tty_ && last_print_ >= 0) std::fputc('\n', stderr);
}

void Progress::finish() {
  if (tty_) std::fputc('\n', stderr);
}

bool StagedProgress::update(int64_t done, int64_t total) {
  if (total != total_) {
    if (progress_) progress_->finish();
    progress_.emplace(label_, total, "step");
    total_ = total;
  }
  progress_->update(done, "");
  return true;
}

void StagedProgress::finish() {
  if (progress_) progress_->finish();
  progress_.reset();
}

std::vector<std::string> analyse_images(session::AnalysisSession& session, models::Backbone& model,
                                        const runtime::ComputeTarget& target,
                                        const image::Preprocessing& preprocessing,
                                        const std::vector<ImageInput>& images, Progress& progress,
                                        const InputSink& on_input, StageSeconds* stages) {
  std::vector<std::string> failed;
  const models::ForwardOptions options = session.settings().forward_options();
  at::NoGradGuard no_grad;
  StageSeconds unused;
  StageSeconds& times = stages ? *stages : unused;
  auto mark = std::chrono::steady_clock::now();
  const auto lap = [&mark](double& into) {
    const auto now = std::chrono::steady_clock::now();
    into += std::chrono::duration<double>(now - mark).count();
    mark = now;
  };
  const auto fail = [&](const ImageInput& im, const std::string& why) {
    progress.break_line();
    std::fprintf(stderr, "attnlab: error: %s: %s (skipped)\n", im.path.c_str(), why.c_str());
    failed.push_back(im.path);
  };
  const size_t per_forward = size_t(std::max<int64_t>(1, session.settings().images_per_forward));
  size_t done = 0;
  for (size_t first = 0; first < images.size(); first += per_forward) {
    // Read and preprocess a batch; an unreadable image is skipped, the others go on. Images
    // of another size than the batch's first (a model without a fixed crop) go alone.
    mark = std::chrono::steady_clock::now();
    std::vector<const ImageInput*> batch;
    std::vector<at::Tensor> inputs;
    for (size_t i = first; i < std::min(images.size(), first + per_forward); ++i) {
      try {
        // With what-if edits, the picture as edited: every analysis reads it, and the
        // report's figures are drawn over it (InputSink). Without, image::preprocess's.
        inputs.push_back(session::edited_input(io::load_rgb_image(images[i].path), preprocessing,
                                               model, session.settings().edits));
        batch.push_back(&images[i]);
      } catch (const std::exception& e) {
        fail(images[i], e.what());
        progress.update(static_cast<int64_t>(++done), images[i].tag);
      }
    }
    lap(times.images);
    std::vector<std::vector<size_t>> groups;  // indices into batch, one forward each
    for (size_t i = 0; i < batch.size(); ++i) {
      auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<size_t>& g) {
        return inputs[g.front()].sizes().equals(inputs[i].sizes());
      });
      if (same == groups.end())
        groups.push_back({i});
      else
        same->push_back(i);
    }
    for (const auto& group : groups) {
      std::vector<at::Tensor> xs;
      for (const size_t i : group) xs.push_back(inputs[i]);
      try {
        mark = std::chrono::steady_clock::now();
        const at::Tensor x = (xs.size() == 1 ? xs.front() : at::cat(xs)).to(target.device);
        const models::ForwardResult result = model.run(x, options);
        lap(times.forward);
        for (size_t j = 0; j < group.size(); ++j) {
          const ImageInput& im = *batch[group[j]];
          try {
            mark = std::chrono::steady_clock::now();
            const at::Tensor one = xs[j];
            session.add(im.tag, result, int64_t(j), {im.path, &one, &preprocessing});
            if (session.explains()) session.explain(im.tag, model, x.narrow(0, int64_t(j), 1));
            if (on_input) on_input(im, xs[j]);
            lap(times.analyses);
            ++times.count;
          } catch (const std::exception& e) {
            if (is_output_failure(e)) throw;  // every later image would fail the same way
            fail(im, e.what());
          }
          progress.update(static_cast<int64_t>(++done), im.tag);
        }
      } catch (const std::exception& e) {  // the forward itself: every image of the group
        if (is_output_failure(e)) throw;
        for (const size_t i : group) {
          fail(*batch[i], e.what());
          progress.update(static_cast<int64_t>(++done), batch[i]->tag);
        }
      }
    }
  }
  progress.finish();
  session.finish();  // the analyses fitted on every image together
  return failed;
}

nlohmann::json StageSeconds::to_json() const {
  return {{"model", model},
          {"images", images},
          {"forward", forward},
          {"analyses", analyses},
          {"images_analysed", count}};
}

std::string StageSeconds::summary() const {
  char buf[256];
  const double n = double(std::max<int64_t>(1, count));
  std::snprintf(buf, sizeof buf,
                "model %.2f s, images %.2f s, forward %.2f s (%.3f s/image), analyses %.2f s "
                "(%.3f s/image)",
                model, images, forward, forward / n, analyses, analyses / n);
  return buf;
}

nlohmann::json run_description(const GlobalOptions& g, const runtime::ComputeTarget& target,
                               const session::AnalysisSettings& settings) {
  return {{"attnlab_version", ATTNLAB_VERSION},
          {"attnlab_revision", git_revision()},
          {"libtorch_version", std::to_string(TORCH_VERSION_MAJOR) + "." +
                                   std::to_string(TORCH_VERSION_MINOR) + "." +
                                   std::to_string(TORCH_VERSION_PATCH)},
          {"device", target.device.str()},
          {"fused_attention", attention::fused_attention_enabled()},
          {"threads", runtime::current_threads()},
          {"requested_threads", g.threads},
          {"dtype", runtime::dtype_name(target.dtype)},
          {"images_per_forward", settings.images_per_forward},
          {"settings", settings.to_json()}};
}

}  // namespace attnlab::cli

namespace attnlab::cli {

SeriesResult analyse_series(const ModelChoice& base, const std::vector<std::string>& checkpoints,
                            const std::vector<ImageInput>& images,
                            const session::AnalysisSettings& settings,
                            const runtime::ComputeTarget& target, analysis::ShardRange part) {
  if (part.end < 0) part = {0, int64_t(checkpoints.size())};
  SeriesResult out;
  session::SeriesTables series;  // every checkpoint's rows, table by table
  std::map<size_t, int64_t> steps;
  for (size_t i = size_t(part.begin); i < size_t(part.end); ++i) {
    const std::string& path = checkpoints[i];
    std::fprintf(stderr, "series: checkpoint %zu/%zu %s\n", i + 1, checkpoints.size(),
                 path.c_str());
    ReadyModel model = load_ready_model(with_checkpoint(base, path), target);
    session::AnalysisSession session(settings, nullptr);  // series keep statistics only
    Progress progress("  images", static_cast<int64_t>(images.size()));
    const auto failed =
        analyse_images(session, *model.model, target, base.preprocessing, images, progress);
    out.any_failed = out.any_failed || !failed.empty();
    if (session.images() == 0) throw std::runtime_error("no image could be analysed with " + path);
    const nlohmann::json step = session::checkpoint_step(path);
    steps[i] = step.is_number() ? step.get<int64_t>() : int64_t(i);
    series.add(int64_t(i), std::filesystem::path(path).filename().string(), steps[i],
               session.tables());
    nlohmann::json c = model.description()["checkpoint"];
    c["index"] = i;
    c["step"] = step;
    c["images_analysed"] = session.images();
    out.checkpoints.push_back(c);
    for (const auto& w : session.warnings())
      if (std::find(out.warnings.begin(), out.warnings.end(), w) == out.warnings.end())
        out.warnings.push_back(w);
  }
  if (settings.analyses.count("cka") && checkpoints.size() > 1) {
    // CKA of every layer with the same layer of the final checkpoint: one pass with every
    // checkpoint loaded, their layers in one joint HSIC matrix (report_cka.h).
    // A shard's checkpoints, and the final one last (in its part or not).
    std::vector<ModelChoice> choices;
    for (int64_t i = part.begin; i < part.end; ++i)
      if (size_t(i) + 1 < checkpoints.size())
        choices.push_back(with_checkpoint(base, checkpoints[size_t(i)]));
    choices.push_back(with_checkpoint(base, checkpoints.back()));
    const JointHsic joint =
        joint_hsic(choices, images, target, "series: cka to the final checkpoint", settings.edits);
    const auto tables = session::cka_final_tables(joint.sum, joint.images);
    for (int64_t i = part.begin; i < part.end; ++i) {
      // The final checkpoint's table is the last; the others' follow the part's order.
      const size_t t =
          size_t(i) + 1 == checkpoints.size() ? tables.size() - 1 : size_t(i - part.begin);
      series.add(i, std::filesystem::path(checkpoints[size_t(i)]).filename().string(),
                 steps.at(size_t(i)), {tables[t]});
    }
  }
  out.tables = series.tables();
  return out;
}

}  // namespace attnlab::cli
