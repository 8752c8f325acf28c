// Arrays of an analysis run written to their OutputFolder on a thread of their own: while
// one image's maps reach the disk (written, flushed together and renamed into place), the
// next image's forward pass runs. Files keep the order they were submitted in, and the
// folder's file list is complete once finish() returns.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "core/analysis/output_folder.h"
#include "core/analysis/table.h"

namespace attnlab::analysis {

class BackgroundWriter {
 public:
  // At most `max_queued` arrays wait in memory; write_array blocks beyond that.
  explicit BackgroundWriter(OutputFolder& folder, size_t max_queued = 512);
  ~BackgroundWriter();  // waits for the queue (errors then go unreported: call finish())
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  void write_array(Array array);
  // Waits until every submitted array is written; rethrows the first write error (the
  // arrays after it are not written). The folder may be used directly afterwards.
  void finish();

 private:
  void run();

  OutputFolder& folder_;
  const size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Array> queue_;
  bool stopping_ = false, busy_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace attnlab::analysis
