// The compute worker; see compute_worker.h.
#include "app/gui/compute_worker.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "app/gui/gui_state.h"
#include "app/gui/thread_priority.h"

namespace attnlab::gui {

void JobContext::progress(int64_t done, int64_t total) {
  worker_->total_.store(total);
  worker_->done_.store(done);
}

void JobContext::post(std::function<void(GuiState&)> apply) {
  if (!cancelled()) worker_->post(std::move(apply));
}

ComputeWorker::ComputeWorker() : thread_([this] { thread_main(); }) {}

ComputeWorker::~ComputeWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
    cancel_.store(true);
  }
  wake_.notify_all();
  thread_.join();
}

void ComputeWorker::submit(std::string label, Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(std::move(label), std::move(job));
  }
  wake_.notify_one();
}

void ComputeWorker::cancel_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
  if (running_) cancel_.store(true);
}

void ComputeWorker::post(std::function<void(GuiState&)> apply) {
  std::lock_guard<std::mutex> lock(mutex_);
  posted_.push_back(std::move(apply));
}

void ComputeWorker::run_posted(GuiState& state) {
  std::vector<std::function<void(GuiState&)>> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ready.swap(posted_);
  }
  for (auto& apply : ready) apply(state);
}

WorkerProgress ComputeWorker::progress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  WorkerProgress p;
  p.busy = running_;
  p.label = running_label_;
  p.done = done_.load();
  p.total = total_.load();
  p.queued = queue_.size();
  return p;
}

bool ComputeWorker::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !running_ && queue_.empty() && posted_.empty();
}

void ComputeWorker::thread_main() {
  lower_this_thread_priority();  // a job slows itself, not the frame loop
  for (;;) {
    std::pair<std::string, Job> item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      running_label_ = item.first;
      cancel_.store(false);
      done_.store(0);
      total_.store(0);
    }
    JobContext ctx;
    ctx.worker_ = this;
    ctx.cancel_ = &cancel_;
    const auto start = std::chrono::steady_clock::now();
    try {
      item.second(ctx);
      if (log_timings_)
        std::fprintf(
            stderr, "attnlab: job %s: %.0f ms\n", item.first.c_str(),
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    } catch (const std::exception& e) {  // jobs turn their errors into data; a backstop
      const std::string what = item.first + ": " + e.what();
      post([what](GuiState& s) {
        s.status.notice = what;
        s.status.notice_is_error = true;
      });
    }
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    running_label_.clear();
  }
}

}  // namespace attnlab::gui
