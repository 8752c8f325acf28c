#include "core/io/file_bytes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

// The temporaries being written, for the signal handler: fixed storage (a handler may not
// allocate), each slot claimed by a compare-and-swap. A path too long for a slot, or a
// write while every slot is taken, is simply not listed (the write itself goes on).
constexpr int kTemporarySlots = 64;
constexpr size_t kTemporaryPathMax = 1024;
struct TemporarySlot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 listed
  char path[kTemporaryPathMax];
};
TemporarySlot g_temporaries[kTemporarySlots];

// Lists `path` until the returned object is destroyed.
class ListedTemporary {
 public:
  explicit ListedTemporary(const std::string& path) {
    if (path.size() >= kTemporaryPathMax) return;
    for (int i = 0; i < kTemporarySlots; ++i) {
      int expected = 0;
      if (!g_temporaries[i].state.compare_exchange_strong(expected, 1)) continue;
      std::memcpy(g_temporaries[i].path, path.c_str(), path.size() + 1);
      g_temporaries[i].state.store(2);
      slot_ = i;
      return;
    }
  }
  ~ListedTemporary() {
    if (slot_ >= 0) g_temporaries[slot_].state.store(0);
  }
  ListedTemporary(const ListedTemporary&) = delete;
  ListedTemporary& operator=(const ListedTemporary&) = delete;

 private:
  int slot_ = -1;
};

// A temporary between its creation and its listing would escape the handler: writers
// count themselves in that window (g_creating), and the handler, once it has said the
// process is dying (so no writer enters the window again), waits for the count to drain
// before it removes what is listed. The wait is bounded: the signal may have interrupted
// a writer inside the window on this very thread, which cannot drain while we spin.
std::atomic<int> g_creating{0};
std::atomic<bool> g_dying{false};
constexpr long kDrainSpins = 50'000'000;  // ~50 ms; a creation takes microseconds

extern "C" void remove_temporaries_and_die(int sig) {
  g_dying.store(true);
  for (long i = 0; i < kDrainSpins && g_creating.load() > 0; ++i) {
  }
  for (auto& t : g_temporaries)
    if (t.state.load() == 2) ::unlink(t.path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void remove_temporaries_on_signal() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction a {};
    a.sa_handler = remove_temporaries_and_die;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_RESETHAND;  // a second signal during the cleanup ends the process at once
    ::sigaction(sig, &a, nullptr);
  }
}

void write_file_atomic(const std::string& path, const std::function<void(const ByteSink&)>& fill) {
  std::string tmp = path + ".tmp-XXXXXX";
  // Created and listed as one step for the signal handler (see g_creating).
  g_creating.fetch_add(1);
  if (g_dying.load()) {  // a signal is ending the process: create nothing more
    g_creating.fetch_sub(1);
    throw IoError(IoErrorKind::WriteFailed, path, "interrupted by a signal");
  }
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    const int e = errno;
    g_creating.fetch_sub(1);
    throw IoError(IoErrorKind::WriteFailed, path,
                  std::string("cannot create a temporary file beside it: ") + std::strerror(e));
  }
  const ListedTemporary listed(tmp);  // removed by the handler if a signal ends the process
  g_creating.fetch_sub(1);
  auto cleanup = [&] {
    ::close(fd);
    ::unlink(tmp.c_str());
  };
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
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0)
      throw IoError(IoErrorKind::WriteFailed, path, std::string("sync: ") + std::strerror(errno));
  } catch (...) {
    cleanup();
    throw;
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw IoError(IoErrorKind::WriteFailed, path, std::string("rename: ") + std::strerror(e));
  }
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  write_file_atomic(path, [&](const ByteSink& sink) { sink(data, size); });
}

}  // namespace attnlab::io
