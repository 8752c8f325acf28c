// The compute worker; see compute_worker.h.
#include "app/gui/jobs/compute_worker.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "app/gui/jobs/thread_priority.h"

namespace attnlab::gui {

void JobContext::progress(int64_t done, int64_t total) {
  total_->store(total);
  done_->store(done);
}

void JobContext::post(WorkerResult result) {
  if (!cancelled()) worker_->post(std::move(result));
}

ComputeWorker::ComputeWorker() {
  for (LaneState& lane : lanes_) lane.thread = std::thread([this, &lane] { thread_main(lane); });
}

ComputeWorker::~ComputeWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    for (LaneState& lane : lanes_) {
      lane.queue.clear();
      lane.cancel.store(true);
    }
  }
  wake_.notify_all();
  for (LaneState& lane : lanes_) lane.thread.join();
}

void ComputeWorker::submit(std::string label, Job job, Lane lane) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lanes_[size_t(lane)].queue.emplace_back(std::move(label), std::move(job));
  }
  wake_.notify_all();
}

void ComputeWorker::cancel_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (LaneState& lane : lanes_) {
    lane.queue.clear();
    if (lane.running) lane.cancel.store(true);
  }
}

void ComputeWorker::post(WorkerResult result) {
  std::lock_guard<std::mutex> lock(mutex_);
  posted_.push_back(std::move(result));
}

std::vector<WorkerResult> ComputeWorker::take_posted() {
  std::vector<WorkerResult> ready;
  std::lock_guard<std::mutex> lock(mutex_);
  ready.swap(posted_);
  return ready;
}

WorkerProgress ComputeWorker::progress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const LaneState& models = lanes_[size_t(Lane::Models)];
  const LaneState& lane =
      models.running || !models.queue.empty() ? models : lanes_[size_t(Lane::Traces)];
  WorkerProgress p;
  p.busy = lane.running;
  p.label = lane.running_label;
  p.done = lane.done.load();
  p.total = lane.total.load();
  for (const LaneState& l : lanes_) p.queued += l.queue.size();
  return p;
}

bool ComputeWorker::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const LaneState& l : lanes_)
    if (l.running || !l.queue.empty()) return false;
  return posted_.empty();
}

void ComputeWorker::thread_main(LaneState& lane) {
  lower_this_thread_priority();  // a job slows itself, not the frame loop
  for (;;) {
    std::pair<std::string, Job> item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !lane.queue.empty(); });
      if (stopping_) return;
      item = std::move(lane.queue.front());
      lane.queue.pop_front();
      lane.running = true;
      lane.running_label = item.first;
      lane.cancel.store(false);
      lane.done.store(0);
      lane.total.store(0);
    }
    JobContext ctx;
    ctx.worker_ = this;
    ctx.cancel_ = &lane.cancel;
    ctx.done_ = &lane.done;
    ctx.total_ = &lane.total;
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
      post(JobNotice{what});
    }
    std::lock_guard<std::mutex> lock(mutex_);
    lane.running = false;
    lane.running_label.clear();
  }
}

}  // namespace attnlab::gui
