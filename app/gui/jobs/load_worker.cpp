// Thread pool + result queue for the GUI's loads; see load_worker.h.
#include "app/gui/jobs/load_worker.h"

#include <exception>
#include <utility>

#include "app/gui/jobs/thread_priority.h"

namespace attnlab::gui {

LoadWorker::LoadWorker(Runner runner, int threads) : runner_(std::move(runner)) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { thread_main(); });
}

LoadWorker::~LoadWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

uint64_t LoadWorker::submit(JobKind kind, const std::string& path) {
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    id = next_id_++;
    queue_.push_back(JobRequest{id, kind, path});
  }
  wake_.notify_one();
  return id;
}

std::vector<JobResult> LoadWorker::take_results() {
  std::vector<JobResult> out;
  std::lock_guard<std::mutex> lock(mutex_);
  out.swap(finished_);
  return out;
}

bool LoadWorker::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty() && running_ == 0 && finished_.empty();
}

void LoadWorker::thread_main() {
  lower_this_thread_priority();  // a job slows itself, not the frame loop
  for (;;) {
    JobRequest job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    JobResult result;
    try {
      result = runner_(job);
    } catch (const std::exception& e) {  // runners should not throw; this is the backstop
      result.error = job.path + ": " + e.what();
    } catch (...) {
      result.error = job.path + ": unknown error";
    }
    result.id = job.id;
    result.kind = job.kind;
    result.path = job.path;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_.push_back(std::move(result));
      --running_;
    }
  }
}

}  // namespace attnlab::gui
