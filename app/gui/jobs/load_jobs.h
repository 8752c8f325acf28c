// The work the GUI hands to worker threads: decode an image, read and summarise a
// checkpoint, describe the torch runtime. Runs off the main thread, so it touches no GL
// and no ImGui; every failure comes back as error text in the result (errors are data:
// a corrupt file must never take the GUI down).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/image_io.h"

namespace attnlab::gui {

enum class JobKind { Image, Checkpoint, Runtime };

struct JobRequest {
  uint64_t id = 0;  // assigned by LoadWorker::submit; matches the result to its panel
  JobKind kind = JobKind::Image;
  std::string path;  // unused for Runtime
};

struct JobResult {
  uint64_t id = 0;
  JobKind kind = JobKind::Image;
  std::string path;
  std::string error;                  // non-empty: the job failed; the full message to show
  io::RgbImage image;                 // Image: the decoded pixels
  std::vector<std::string> lines;     // Checkpoint: summary lines; Runtime: one line
  std::vector<std::string> warnings;  // Checkpoint: the summary's warnings
  double seconds = 0.0;               // wall time the job took, shown next to the result
};

// Runs one job to completion on the calling thread; never throws.
JobResult run_job(const JobRequest& request);

}  // namespace attnlab::gui
