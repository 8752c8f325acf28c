// How much memory one forward pass may use before attnlab refuses to start it. The budget
// is process-wide: `--max-memory SIZE` (or ATTNLAB_MAX_MEMORY) sets it for the CLI and the
// GUI alike; by default it is a fraction of the RAM available when the forward is about to
// run (MemAvailable in /proc/meminfo, read afresh each time, so a busy machine gets a
// smaller budget). models/memory_estimate.h estimates a forward's peak and checks it here.
// No LibTorch: the parsing and formatting are plain text.
#pragma once

#include <cstdint>
#include <string>

namespace attnlab::runtime {

// The share of available RAM a forward may take when no budget was set.
constexpr double kDefaultMemoryShare = 0.8;

struct MemoryBudget {
  int64_t bytes = 0;   // 0: unlimited (--max-memory off, or nothing could be read)
  std::string origin;  // "--max-memory 8G", "80% of the 20.1 GB of RAM available"
  bool set = false;    // set by set_memory_budget, not the default share of RAM
  bool limited() const { return bytes > 0; }
};

// "8G", "8GB", "512M", "1.5 GiB", "2000000000" (bytes): sizes in powers of 1024 (K, M, G,
// T, with or without B or iB); "off", "none" or "0": no limit (returns 0). Throws
// std::invalid_argument naming the text otherwise.
int64_t parse_memory_size(const std::string& text);
// "1.2 GB", "340 MB", "912 KB", "512 B" (powers of 1024, three significant digits).
std::string format_bytes(double bytes);

// Sets the budget from a size text (parse_memory_size; its origin says where it came from,
// e.g. "--max-memory 8G"). An empty text restores the default.
void set_memory_budget(const std::string& text, const std::string& origin);
// The budget in effect now: the one set, else kDefaultMemoryShare of the RAM available now.
MemoryBudget memory_budget();
// MemAvailable from /proc/meminfo in bytes, or -1 where it cannot be read.
int64_t available_ram_bytes();

}  // namespace attnlab::runtime
