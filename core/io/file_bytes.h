// Whole-file reads and atomic writes. Writers go through write_file_atomic so that a
// failed or interrupted export never leaves a partial file under the final name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/io/byte_reader.h"

namespace attnlab::io {

// Reads the whole file. Throws IoError(NotFound / ReadFailed / LimitExceeded).
std::vector<uint8_t> read_file_bytes(const std::string& path, uint64_t max_bytes = uint64_t(64)
                                                                                   << 30);

// Writes via a temporary file in the same directory, fsync, then rename. `fill` streams
// the content into the callback it is given; if it throws, the temporary is removed and
// the destination is untouched.
using ByteSink = std::function<void(const void* data, size_t n)>;
void write_file_atomic(const std::string& path, const std::function<void(const ByteSink&)>& fill);
// The same for content already in memory.
void write_file_atomic(const std::string& path, const void* data, size_t size);
inline void write_file_atomic(const std::string& path, const std::string& text) {
  write_file_atomic(path, text.data(), text.size());
}

// Batches this thread's atomic writes: while a BatchedWrites lives on a thread (made and
// destroyed there), each write_file_atomic there writes its temporary and starts its
// write-back, and leaves the rest to commit(): one wait for all of the files to reach the
// disk (they flush together, in half the time of one flush each for 25 small files on
// this project's VM: docs/BENCHMARKS.md), then each is renamed into place, in order.
// Until then no file is under its name. commit() throws the first failure, with the files
// before it in place and the failing one and those after it removed; committed() counts
// the files put in place by every commit() so far. A batch destroyed uncommitted removes
// the temporaries written since its last commit().
class BatchedWrites {
 public:
  BatchedWrites();
  ~BatchedWrites();
  BatchedWrites(const BatchedWrites&) = delete;
  BatchedWrites& operator=(const BatchedWrites&) = delete;

  void commit();
  size_t committed() const { return committed_; }

 private:
  friend void write_file_atomic(const std::string&, const std::function<void(const ByteSink&)>&);
  struct Pending {
    std::string path, temporary;
    int fd;
  };
  static void drop(const std::vector<Pending>& files, size_t from);
  std::vector<Pending> pending_;  // written, not yet synced nor renamed
  BatchedWrites* outer_;          // the thread's enclosing batch, restored by the destructor
  size_t committed_ = 0;
};

// Makes an interrupted write leave nothing either: on SIGINT, SIGTERM or SIGHUP the
// temporaries being written are removed (by a cleanup thread that the handler wakes), no
// write renames its file into place any more, and the signal then takes its default
// action, so the process still ends as interrupted (exit status 128 + signal). Files
// already renamed are complete. Installed once by main(); safe to call again, and again
// in a forked child, which gets its own cleanup thread.
void remove_temporaries_on_signal();

}  // namespace attnlab::io
