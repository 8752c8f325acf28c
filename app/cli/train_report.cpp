// Progress, metrics and the end-of-run record of `attnlab train`.
#include "app/cli/train_report.h"

#include <ATen/ATen.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/data/image_dataset.h"
#include "core/io/file_bytes.h"
#include "core/runtime/device.h"
#include "core/runtime/threads.h"
#include "models/checkpoint_loading.h"
#include "models/config_mechanism.h"
#include "models/training/evaluate.h"
#include "models/training/training_checkpoint.h"

namespace attnlab::cli {
namespace fs = std::filesystem;
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

}  // namespace

TrainProgress::TrainProgress(int64_t total_steps, int64_t start_step)
    : total_(total_steps), start_(start_step), started_(now_s()), tty_(isatty(2) != 0) {}

void TrainProgress::update(const training::StepRecord& r) {
  window_.push_back(r);
  if (window_.size() > 50) window_.pop_front();
  const double t = now_s();
  const bool last = r.step >= total_;
  if (!last && t - last_print_ < (tty_ ? 0.25 : 15.0)) return;
  last_print_ = t;
  double loss = 0, acc = 0;
  for (const auto& w : window_) {
    loss += w.loss;
    acc += w.accuracy;
  }
  loss /= static_cast<double>(window_.size());
  acc /= static_cast<double>(window_.size());
  const double done = static_cast<double>(r.step - start_);
  const double rate = done / std::max(1e-9, t - started_);  // steps/s including checkpoints
  const double eta = rate > 0 ? static_cast<double>(total_ - r.step) / rate : 0.0;
  const int width = 24;
  const int filled =
      static_cast<int>(width * static_cast<double>(r.step) / static_cast<double>(total_));
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(static_cast<size_t>(width), '.');
  std::fprintf(
      stderr,
      "%strain [%s] %lld/%lld  epoch %.2f  loss %.4f  acc %.1f%%  lr %.2e  %.0f img/s  ETA %s%s",
      tty_ ? "\r\x1b[K" : "", bar.c_str(), static_cast<long long>(r.step),
      static_cast<long long>(total_), r.epoch, loss, 100.0 * acc, r.lr, r.images_per_second,
      clock_text(eta).c_str(), tty_ ? "" : "\n");
  std::fflush(stderr);
}

void TrainProgress::finish() {
  if (tty_ && last_print_ >= 0) std::fputc('\n', stderr);
}

void write_metrics(const std::string& run_dir, const training::Trainer& trainer) {
  std::ostringstream csv;
  csv << "step,epoch,lr,loss,accuracy,penalty,images_per_second,elapsed_s\n";
  nlohmann::json rows = nlohmann::json::array();
  char line[256];
  for (const auto& r : trainer.history()) {
    std::snprintf(line, sizeof line, "%lld,%.6f,%.9g,%.9g,%.9g,%.9g,%.6g,%.3f\n",
                  static_cast<long long>(r.step), r.epoch, r.lr, r.loss, r.accuracy, r.penalty,
                  r.images_per_second, r.elapsed_s);
    csv << line;
    rows.push_back({{"step", r.step},
                    {"epoch", r.epoch},
                    {"lr", r.lr},
                    {"loss", r.loss},
                    {"accuracy", r.accuracy},
                    {"penalty", r.penalty},
                    {"images_per_second", r.images_per_second},
                    {"elapsed_s", r.elapsed_s}});
  }
  io::write_file_atomic((fs::path(run_dir) / "metrics.csv").string(), csv.str());
  io::write_file_atomic(
      (fs::path(run_dir) / "metrics.json").string(),
      nlohmann::json{{"settings", trainer.settings().to_json()}, {"steps", rows}}.dump(1) + "\n");
}

std::string machine_description(const std::string& device) {
  std::string cpu = "unknown CPU";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return cpu + " (" + std::to_string(std::thread::hardware_concurrency()) + " logical cores), " +
         runtime::describe_runtime() + ", device " + device;
}

void finish_training_run(training::Trainer& trainer, const std::string& run_dir,
                         const std::string& export_path, const std::string& command,
                         const GlobalOptions& /*g*/) {
  const training::TrainSettings& s = trainer.settings();
  int64_t params = 0;
  for (const auto& p : trainer.model().parameters()) params += p.numel();
  double final_loss = 0;
  const auto& h = trainer.history();
  const size_t tail = std::min<size_t>(50, h.size());
  for (size_t i = h.size() - tail; i < h.size(); ++i)
    final_loss += h[i].loss / static_cast<double>(tail);

  nlohmann::json record = {{"mechanism", models::config_mechanism(s.model)},
                           {"arch", s.model.value("arch", "")},
                           {"parameters", params},
                           {"seed", s.seed},
                           {"steps", trainer.step()},
                           {"epochs", static_cast<double>(trainer.step()) /
                                          static_cast<double>(trainer.steps_per_epoch())},
                           {"batch", s.batch},
                           {"train_set", s.train_set},
                           {"final_train_loss_last50", final_loss},
                           {"wall_time_s", trainer.wall_seconds()},
                           {"machine", machine_description(s.device)},
                           {"command", command},
                           {"settings", s.to_json()}};

  // The model evaluated is the one users get: the exported float16 weights, reloaded.
  std::shared_ptr<models::Backbone> evaluated;
  if (!export_path.empty()) {
    if (fs::path(export_path).has_parent_path())
      fs::create_directories(fs::path(export_path).parent_path());
    training::write_weights(export_path, trainer.model(), s.model, at::kHalf,
                            {{"attnlab.step", std::to_string(trainer.step())}});
    evaluated = models::load_model(s.model, export_path).model;
  }
  if (!s.test_set.empty()) {
    const data::ImageDataset test =
        data::load_dataset(s.test_set, static_cast<int>(s.model.value("img_size", 28)));
    models::Backbone& m = evaluated ? *evaluated : trainer.model();
    const auto norm = training::normalisation_for(s.model);
    const training::Accuracy full = training::evaluate(m, test, norm);
    const training::Accuracy first = training::evaluate(m, test, norm, 1000);
    record["accuracy"] = {{"dataset", s.test_set},
                          {"weights", evaluated ? "float16 (as exported)" : "float32"},
                          {"test_percent", full.percent()},
                          {"test_correct", full.correct},
                          {"test_total", full.total},
                          {"first1000_percent", first.percent()},
                          {"first1000_correct", first.correct}};
    std::fprintf(stderr, "train: %s accuracy %.2f%% (%lld/%lld), first 1000: %.2f%%\n",
                 s.test_set.c_str(), full.percent(), static_cast<long long>(full.correct),
                 static_cast<long long>(full.total), first.percent());
  }
  if (!export_path.empty()) {
    training::write_weights(
        export_path, trainer.model(), s.model, at::kHalf,
        {{"attnlab.step", std::to_string(trainer.step())}, {"attnlab.training", record.dump()}});
    std::fprintf(stderr, "train: wrote %s\n", export_path.c_str());
  }
  io::write_file_atomic((fs::path(run_dir) / "summary.json").string(), record.dump(2) + "\n");
}

}  // namespace attnlab::cli
