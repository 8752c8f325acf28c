// See render_worker.h.
#include "app/gui/jobs/render_worker.h"

#include <exception>
#include <utility>

namespace attnlab::gui {

RenderWorker::RenderWorker() : thread_([this] { thread_main(); }) {}

RenderWorker::~RenderWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    pending_.clear();
    order_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void RenderWorker::submit(const std::string& slot, const std::string& key, Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.count(slot) == 0) order_.push_back(slot);
    pending_[slot] = Request{key, std::move(job)};
  }
  wake_.notify_one();
}

std::vector<RenderWorker::Finished> RenderWorker::take_finished() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(finished_, {});
}

bool RenderWorker::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !drawing_ && pending_.empty() && finished_.empty();
}

void RenderWorker::thread_main() {
  for (;;) {
    Finished out;
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !order_.empty(); });
      if (stopping_) return;
      out.slot = std::move(order_.front());
      order_.pop_front();
      auto it = pending_.find(out.slot);
      out.key = std::move(it->second.key);
      job = std::move(it->second.job);
      pending_.erase(it);
      drawing_ = true;
    }
    try {
      Drawing d = job();
      out.image = std::move(d.image);
      out.geometry = std::move(d.geometry);
    } catch (const std::exception& e) {
      out.error = e.what();
      out.image = {};
    }
    std::lock_guard<std::mutex> lock(mutex_);
    drawing_ = false;
    finished_.push_back(std::move(out));
  }
}

}  // namespace attnlab::gui
