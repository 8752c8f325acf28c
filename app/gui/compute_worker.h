// ComputeWorker: the one thread that runs models (it owns the torch device), Tracy-style:
// jobs go in a queue; a job reports progress through atomics that the UI reads every
// frame, stops early when cancelled, and hands its results back as closures that the
// main thread runs at the start of a frame (post / run_posted). The main thread never
// waits on it; results land as immutable snapshots (shared_ptr<const ...>).
#pragma once

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

namespace attnlab::gui {

struct GuiState;

// What a running job sees: its cancel flag, its progress, and the way back.
class JobContext {
 public:
  bool cancelled() const { return cancel_->load(); }
  void progress(int64_t done, int64_t total);
  // Runs `apply` on the main thread at the start of a later frame.
  void post(std::function<void(GuiState&)> apply);

 private:
  friend class ComputeWorker;
  class ComputeWorker* worker_ = nullptr;
  const std::atomic<bool>* cancel_ = nullptr;
};

struct WorkerProgress {
  bool busy = false;
  std::string label;  // the running job
  int64_t done = 0, total = 0;
  size_t queued = 0;  // jobs waiting behind it
};

class ComputeWorker {
 public:
  using Job = std::function<void(JobContext&)>;
  ComputeWorker();
  ~ComputeWorker();  // cancels everything and joins
  ComputeWorker(const ComputeWorker&) = delete;
  ComputeWorker& operator=(const ComputeWorker&) = delete;

  void submit(std::string label, Job job);
  // Cancels the running job and drops the queued ones (their results never arrive).
  void cancel_all();
  // Runs the closures jobs posted, oldest first (main thread).
  void run_posted(GuiState& state);
  WorkerProgress progress() const;
  bool idle() const;  // nothing queued, running or posted

 private:
  friend class JobContext;
  void thread_main();
  void post(std::function<void(GuiState&)> apply);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<std::string, Job>> queue_;
  std::vector<std::function<void(GuiState&)>> posted_;
  std::string running_label_;
  bool running_ = false, stopping_ = false;
  std::atomic<bool> cancel_{false};
  std::atomic<int64_t> done_{0}, total_{0};
  const bool log_timings_ = std::getenv("ATTNLAB_TIMINGS") != nullptr;  // each job's time
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace attnlab::gui
