// The forward pass's memory budget; see memory_budget.h.
#include "core/runtime/memory_budget.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <stdexcept>

namespace attnlab::runtime {
namespace {

// The budget set by --max-memory / ATTNLAB_MAX_MEMORY; `set` false: the default applies.
// A mutex, not atomics: the size and its origin change together, and both are read
// once per forward.
struct SetBudget {
  std::mutex mutex;
  bool set = false;
  MemoryBudget budget;
};

SetBudget& set_budget() {
  static SetBudget b;
  return b;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

int64_t parse_memory_size(const std::string& text) {
  const std::string t = lower(text);
  if (t == "off" || t == "none") return 0;
  const auto bad = [&] {
    return std::invalid_argument("memory size '" + text +
                                 "': give bytes or a number with K, M, G or T (e.g. 8G, "
                                 "512M), or 'off' for no limit");
  };
  size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(t, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (!(value >= 0.0) || !std::isfinite(value)) throw bad();
  std::string unit = t.substr(used);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  double scale = 1.0;
  if (!unit.empty() && unit != "b") {
    const std::string units = "kmgt";
    const size_t power = units.find(unit[0]);
    const std::string rest = unit.substr(1);
    if (power == std::string::npos || !(rest.empty() || rest == "b" || rest == "ib")) throw bad();
    scale = std::pow(1024.0, static_cast<double>(power + 1));
  }
  const double bytes = value * scale;
  if (bytes > 9.0e18) throw bad();
  return static_cast<int64_t>(std::llround(bytes));
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof buf,
                  bytes < 10    ? "%.2f %s"
                  : bytes < 100 ? "%.1f %s"
                                : "%.0f %s",
                  bytes, units[u]);
  return buf;
}

void set_memory_budget(const std::string& text, const std::string& origin) {
  SetBudget& b = set_budget();
  const int64_t bytes = text.empty() ? 0 : parse_memory_size(text);  // may throw: nothing set
  std::lock_guard<std::mutex> lock(b.mutex);
  b.set = !text.empty();
  b.budget = {bytes, origin, b.set};
}

int64_t available_ram_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return -1;
}

MemoryBudget memory_budget() {
  {
    SetBudget& b = set_budget();
    std::lock_guard<std::mutex> lock(b.mutex);
    if (b.set) return b.budget;
  }
  const int64_t available = available_ram_bytes();
  if (available <= 0) return {0, "no limit (the available RAM could not be read)"};
  MemoryBudget m;
  m.bytes = static_cast<int64_t>(kDefaultMemoryShare * static_cast<double>(available));
  m.origin = std::to_string(static_cast<int>(kDefaultMemoryShare * 100 + 0.5)) + "% of the " +
             format_bytes(static_cast<double>(available)) + " of RAM available";
  return m;
}

}  // namespace attnlab::runtime
