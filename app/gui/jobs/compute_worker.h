// Room jobs/ (app/gui/jobs): what runs off the main thread and how its results come back:
// the compute worker (LibTorch: loads, forwards, analyses, explanations), the load worker
// (decoding images, reading checkpoints), the render worker (cairo figures into RGBA
// buffers), the jobs they run and the model a job loads. Results return to the main thread
// through one queue per worker, drained at the start of a frame.
//
// ComputeWorker: the threads that run LibTorch work, Tracy-style. Two lanes, a thread
// each: Models (loads and forward passes, one at a time: the lane owns the models and
// the torch device) and Traces (answers from traces already recorded: query maps and
// rollouts, which only read immutable results, so a click is answered even while a long
// forward pass runs). Jobs go in their lane's queue; a job reports progress through
// atomics that the UI reads every frame, stops early when cancelled, and hands its
// results back as typed values (worker_results.h) that the main thread takes at the start
// of a frame and applies, one function per kind (post / take_posted). The main thread
// never waits on it; results land as immutable snapshots (shared_ptr<const ...>).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/jobs/worker_results.h"

namespace attnlab::gui {

// What a running job sees: its cancel flag, its progress, and the way back.
class JobContext {
 public:
  bool cancelled() const { return cancel_->load(); }
  void progress(int64_t done, int64_t total);
  // Hands `result` to the main thread, which applies it at the start of a later frame;
  // nothing once the job is cancelled.
  void post(WorkerResult result);

 private:
  friend class ComputeWorker;
  class ComputeWorker* worker_ = nullptr;
  const std::atomic<bool>* cancel_ = nullptr;
  std::atomic<int64_t>*done_ = nullptr, *total_ = nullptr;
};

struct WorkerProgress {
  bool busy = false;
  std::string label;  // the running job
  int64_t done = 0, total = 0;
  size_t queued = 0;  // jobs waiting behind it
};

enum class Lane { Models, Traces };

class ComputeWorker {
 public:
  using Job = std::function<void(JobContext&)>;
  ComputeWorker();
  ~ComputeWorker();  // cancels everything and joins
  ComputeWorker(const ComputeWorker&) = delete;
  ComputeWorker& operator=(const ComputeWorker&) = delete;

  void submit(std::string label, Job job, Lane lane = Lane::Models);
  // Cancels the running jobs and drops the queued ones (their results never arrive).
  void cancel_all();
  // The results jobs posted since the last call, oldest first (main thread).
  std::vector<WorkerResult> take_posted();
  // The Models lane's job when it has one (the long ones), else the Traces lane's.
  WorkerProgress progress() const;
  bool idle() const;  // nothing queued, running or posted in either lane

 private:
  friend class JobContext;
  struct LaneState {
    std::deque<std::pair<std::string, Job>> queue;
    std::string running_label;
    bool running = false;
    std::atomic<bool> cancel{false};
    std::atomic<int64_t> done{0}, total{0};
    std::thread thread;
  };
  void thread_main(LaneState& lane);
  void post(WorkerResult result);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<WorkerResult> posted_;
  bool stopping_ = false;
  const bool log_timings_ = std::getenv("ATTNLAB_TIMINGS") != nullptr;  // each job's time
  std::array<LaneState, 2> lanes_;  // Models, Traces; threads start in the constructor
};

}  // namespace attnlab::gui
