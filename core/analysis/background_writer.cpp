// BackgroundWriter: see background_writer.h.
#include "core/analysis/background_writer.h"

#include <vector>

namespace attnlab::analysis {
namespace {
constexpr size_t kBatch = 64;  // arrays; bounds the open files and the work a failure drops
}  // namespace

BackgroundWriter::BackgroundWriter(OutputFolder& folder, size_t max_queued)
    : folder_(folder), max_queued_(max_queued < 1 ? 1 : max_queued), thread_([this] { run(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundWriter::write_array(Array array) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return queue_.size() < max_queued_ || error_; });
  if (error_) return;  // finish() reports it
  queue_.push_back(std::move(array));
  changed_.notify_all();
}

void BackgroundWriter::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return (queue_.empty() && !busy_) || error_; });
  if (error_) {
    queue_.clear();
    std::rethrow_exception(error_);
  }
}

void BackgroundWriter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty() || error_) {
      if (stopping_) return;
      queue_.clear();
      continue;
    }
    // Everything queued so far (up to kBatch) as one batch: their files reach the disk
    // together (OutputFolder::write_arrays), an image's dozens of maps in one wait.
    std::vector<Array> batch;
    while (!queue_.empty() && batch.size() < kBatch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    busy_ = true;
    lock.unlock();
    std::exception_ptr failure;
    try {
      folder_.write_arrays(batch);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (failure && !error_) error_ = failure;
    changed_.notify_all();
  }
}

}  // namespace attnlab::analysis
