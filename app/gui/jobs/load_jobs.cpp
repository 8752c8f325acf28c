// The worker-side half of loading: the calls into core/io and models, with every
// exception turned into a message that names the file (see load_jobs.h).
#include "app/gui/jobs/load_jobs.h"

#include <chrono>
#include <exception>

#include "core/io/io_error.h"
#include "core/io/tensor_file.h"
#include "core/runtime/device.h"
#include "models/checkpoint_summary.h"

namespace attnlab::gui {
namespace {

void do_job(const JobRequest& request, JobResult& result) {
  switch (request.kind) {
    case JobKind::Image:
      result.image = io::load_rgb_image(request.path);
      break;
    case JobKind::Checkpoint: {
      // The TensorFile (all the weights) dies here, on the worker: only the few summary
      // lines travel back to the main thread.
      const io::TensorFile file = io::read_tensor_file(request.path);
      models::CheckpointSummary summary = models::summarize_checkpoint(file);
      result.lines = std::move(summary.lines);
      result.warnings = std::move(summary.warnings);
      if (result.lines.empty()) result.lines.push_back("(the summary has no lines)");
      break;
    }
    case JobKind::Runtime:
      // On a worker because the first CUDA query can take a second or more.
      result.lines.push_back(runtime::describe_runtime());
      break;
  }
}

}  // namespace

JobResult run_job(const JobRequest& request) {
  JobResult result;
  result.id = request.id;
  result.kind = request.kind;
  result.path = request.path;
  const auto start = std::chrono::steady_clock::now();
  try {
    do_job(request, result);
  } catch (const io::IoError& e) {
    result.error = e.what();  // IoError's message already names the file and the place
  } catch (const std::exception& e) {
    result.error = request.path + ": " + e.what();
  } catch (...) {
    result.error = request.path + ": unknown error (a non-standard exception was thrown)";
  }
  if (!result.error.empty()) {
    result.image = {};
    result.lines.clear();
    result.warnings.clear();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace attnlab::gui
