#include "core/io/file_bytes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <semaphore.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

namespace attnlab::io {

std::vector<uint8_t> read_file_bytes(const std::string& path, uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw IoError(errno == ENOENT ? IoErrorKind::NotFound : IoErrorKind::ReadFailed, path,
                  std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError(IoErrorKind::ReadFailed, path, "not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw IoError(IoErrorKind::LimitExceeded, path,
                  "file is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                      std::to_string(max_bytes));
  }
  std::vector<uint8_t> buf(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      throw IoError(IoErrorKind::ReadFailed, path,
                    n == 0 ? "file shrank while reading" : std::string("read: ") + std::strerror(e),
                    static_cast<int64_t>(got));
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return buf;
}

namespace {

// Signals are handled in two halves. The handler itself only does what a handler may:
// it marks the process as dying and posts a semaphore. A cleanup thread, woken by the
// semaphore, then takes the writers' lock, removes every listed temporary and ends the
// process with the same signal. Because the cleanup runs on an ordinary thread it can
// wait for a writer that is between creating its temporary and listing it, however long
// a loaded machine keeps that writer off the CPU (a handler cannot wait, as it may have
// interrupted that very writer). A writer that finds the process dying removes its own
// temporary and waits to be ended, so no file is renamed into place after the signal.
struct Temporaries {
  std::mutex lock;
  std::set<std::string> listed;  // temporaries being written, under `lock`
};
Temporaries& temporaries() {
  static auto* t = new Temporaries;  // never destroyed: the cleanup thread outlives main()
  return *t;
}

std::atomic<int> g_dying_signal{0};  // 0, or the signal that is ending the process
sem_t g_signalled;
pid_t g_installed_in = 0;  // the process whose cleanup thread is running (fork starts none)

extern "C" void note_signal(int sig) {
  int none = 0;
  g_dying_signal.compare_exchange_strong(none, sig);
  ::sem_post(&g_signalled);  // async-signal-safe
}

// Called with the writers' lock held once the process is dying: gives the lock back and
// waits for the cleanup thread to end the process.
[[noreturn]] void wait_to_be_ended(std::unique_lock<std::mutex>& held) {
  held.unlock();
  for (;;) ::pause();
}

void remove_temporaries_and_die() {
  while (::sem_wait(&g_signalled) != 0) {
  }
  auto& t = temporaries();
  t.lock.lock();  // held until the end: no writer creates or renames anything more
  for (const auto& path : t.listed) ::unlink(path.c_str());
  const int sig = g_dying_signal.load();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
  std::_Exit(128 + sig);  // not reached: the default action of these signals ends the process
}

// main() returning while the cleanup is pending would end the process as if no signal
// had come: exit waits for the cleanup thread instead.
void wait_at_exit_if_dying() {
  if (g_dying_signal.load() == 0) return;
  for (;;) ::pause();
}

}  // namespace

void remove_temporaries_on_signal() {
  if (g_installed_in == ::getpid()) return;
  g_installed_in = ::getpid();
  ::sem_init(&g_signalled, 0, 0);
  std::thread(remove_temporaries_and_die).detach();
  static const bool at_exit = (std::atexit(wait_at_exit_if_dying), true);
  (void)at_exit;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction a {};
    a.sa_handler = note_signal;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_RESETHAND;  // a second signal during the cleanup ends the process at once
    ::sigaction(sig, &a, nullptr);
  }
}

namespace {

thread_local BatchedWrites* t_batch = nullptr;

// Removes a temporary and its listing; on every path but a rename's success.
void discard(const std::string& temporary) {
  auto& t = temporaries();
  const std::lock_guard<std::mutex> held(t.lock);
  ::unlink(temporary.c_str());
  t.listed.erase(temporary);
}

IoError sync_failed(const std::string& path, int e) {
  return IoError(IoErrorKind::WriteFailed, path, std::string("sync: ") + std::strerror(e));
}

// A synced temporary, closed, renamed into place (unless the process is dying, when the
// cleanup thread removes it). Throws, the temporary removed, when either fails.
void close_and_rename(const std::string& path, const std::string& temporary, int fd) {
  const int closed = ::close(fd);
  const int close_errno = errno;
  auto& t = temporaries();
  std::unique_lock<std::mutex> held(t.lock);
  if (g_dying_signal.load() != 0) wait_to_be_ended(held);
  const int renamed = closed == 0 ? ::rename(temporary.c_str(), path.c_str()) : -1;
  const int e = closed == 0 ? errno : close_errno;
  t.listed.erase(temporary);
  if (renamed != 0) {
    ::unlink(temporary.c_str());
    throw IoError(IoErrorKind::WriteFailed, path, std::string("rename: ") + std::strerror(e));
  }
}

}  // namespace

BatchedWrites::BatchedWrites() : outer_(t_batch) {
  t_batch = this;
}

// Closes and removes the temporaries of files[from ..].
void BatchedWrites::drop(const std::vector<Pending>& files, size_t from) {
  for (size_t i = from; i < files.size(); ++i) {
    ::close(files[i].fd);
    discard(files[i].temporary);
  }
}

BatchedWrites::~BatchedWrites() {
  t_batch = outer_;
  drop(pending_, 0);
}

void BatchedWrites::commit() {
  // Every file's write-back is under way (write_file_atomic started it): the syncs wait
  // for them together, then the renames put each synced one in place, in order.
  std::vector<Pending> files;
  files.swap(pending_);
  size_t synced = 0;
  while (synced < files.size() && ::fsync(files[synced].fd) == 0) ++synced;
  const int sync_errno = errno;
  size_t next = 0;  // the first file neither in place nor dropped
  try {
    for (; next < synced; ++next) {
      close_and_rename(files[next].path, files[next].temporary, files[next].fd);
      ++committed_;
    }
  } catch (...) {
    drop(files, next + 1);  // close_and_rename removed files[next] itself
    throw;
  }
  drop(files, synced);
  if (synced < files.size()) throw sync_failed(files[synced].path, sync_errno);
}

void write_file_atomic(const std::string& path, const std::function<void(const ByteSink&)>& fill) {
  std::string tmp = path + ".tmp-XXXXXX";
  auto& t = temporaries();
  int fd = -1;
  {
    // Created and listed as one step, so the cleanup thread sees every temporary.
    std::unique_lock<std::mutex> held(t.lock);
    if (g_dying_signal.load() != 0) wait_to_be_ended(held);
    fd = ::mkstemp(tmp.data());
    if (fd < 0) {
      const int e = errno;
      throw IoError(IoErrorKind::WriteFailed, path,
                    std::string("cannot create a temporary file beside it: ") + std::strerror(e));
    }
    t.listed.insert(tmp);
  }
  ByteSink sink = [&](const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        throw IoError(IoErrorKind::WriteFailed, path,
                      std::string("write: ") + std::strerror(errno));
      p += w;
      n -= static_cast<size_t>(w);
    }
  };
  try {
    fill(sink);
    if (::fchmod(fd, 0644) != 0)
      throw IoError(IoErrorKind::WriteFailed, path, std::string("chmod: ") + std::strerror(errno));
    if (t_batch) {
      // Starts the write-back; BatchedWrites::commit waits for it. A filesystem without
      // sync_file_range (it is only advice) leaves all of the work to the sync.
      (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
      t_batch->pending_.push_back({path, tmp, fd});
      return;
    }
    if (::fsync(fd) != 0) throw sync_failed(path, errno);
  } catch (...) {
    ::close(fd);
    discard(tmp);
    throw;
  }
  close_and_rename(path, tmp, fd);
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  write_file_atomic(path, [&](const ByteSink& sink) { sink(data, size); });
}

}  // namespace attnlab::io
