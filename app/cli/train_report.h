// What `attnlab train` prints and writes around the training loop: the progress bar
// (running loss/accuracy over the last 50 steps, images/s, ETA), the metrics files
// (<run>/metrics.csv and metrics.json, one row per step), and at the end the evaluation
// and the exported weights with their training record (the zoo's source of truth).
#pragma once

#include <deque>
#include <string>

#include "app/cli/cli_common.h"
#include "models/training/trainer.h"

namespace attnlab::cli {

class TrainProgress {
 public:
  TrainProgress(int64_t total_steps, int64_t start_step);
  void update(const training::StepRecord& r);
  void finish();

 private:
  int64_t total_, start_;
  std::deque<training::StepRecord> window_;
  double started_, last_print_ = -1.0;
  bool tty_;
};

void write_metrics(const std::string& run_dir, const training::Trainer& trainer);

// "Intel(R) Xeon(R) ... (2 cores), LibTorch 1.13.1, 2 threads" — for records.
std::string machine_description(const std::string& device);

// Evaluates on the settings' test set (the full set and its first 1000 images) with the
// weights as exported (float16, then widened, exactly what `attnlab eval` will load),
// writes --export FILE with the "attnlab.training" record and <run>/summary.json.
void finish_training_run(training::Trainer& trainer, const std::string& run_dir,
                         const std::string& export_path, const std::string& command,
                         const GlobalOptions& g);

}  // namespace attnlab::cli
