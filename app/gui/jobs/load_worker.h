// LoadWorker: a couple of background threads that run JobRequests and park the results
// in a queue that the main thread drains at the start of each frame. The main thread
// never blocks on a load, and GL uploads of the results stay on the main thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "app/gui/jobs/load_jobs.h"

namespace attnlab::gui {

class LoadWorker {
 public:
  using Runner = std::function<JobResult(const JobRequest&)>;

  // Two threads by default, so a slow checkpoint does not hold up an image.
  explicit LoadWorker(Runner runner, int threads = 2);
  // Drops jobs not yet started and waits for the running ones (a file read cannot be
  // interrupted halfway).
  ~LoadWorker();
  LoadWorker(const LoadWorker&) = delete;
  LoadWorker& operator=(const LoadWorker&) = delete;

  // Queues a job and returns its id (never 0, so 0 can mean "nothing pending").
  uint64_t submit(JobKind kind, const std::string& path);
  // Finished results, oldest first; the queue is empty afterwards.
  std::vector<JobResult> take_results();
  // True when nothing is queued, running, or finished but not yet taken.
  bool idle() const;

 private:
  void thread_main();

  Runner runner_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<JobRequest> queue_;
  std::vector<JobResult> finished_;
  int running_ = 0;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::vector<std::thread> threads_;  // last: started once everything above exists
};

}  // namespace attnlab::gui
