#include "app/cli/cli_common.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace attnlab::cli {

std::string Args::take_option(const std::string& name) {
  auto it = std::find(args_.begin(), args_.end(), name);
  if (it == args_.end()) return {};
  if (it + 1 == args_.end()) throw UsageError("option " + name + " needs a value");
  std::string v = *(it + 1);
  args_.erase(it, it + 2);
  return v;
}

int Args::take_positive_int(const std::string& name, int fallback) {
  const std::string v = take_option(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || n <= 0 || n > 1'000'000)
    throw UsageError(name + " needs a positive number, got '" + v + "'");
  return static_cast<int>(n);
}

std::vector<std::string> Args::take_list(const std::string& name) {
  std::vector<std::string> values;
  for (auto it = std::find(args_.begin(), args_.end(), name); it != args_.end();
       it = std::find(args_.begin(), args_.end(), name)) {
    auto end = it + 1;
    while (end != args_.end() && end->rfind("--", 0) != 0) ++end;
    if (end == it + 1) throw UsageError("option " + name + " needs at least one value");
    values.insert(values.end(), it + 1, end);
    args_.erase(it, end);
  }
  return values;
}

double Args::take_real(const std::string& name, double fallback) {
  const std::string v = take_option(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(x))
    throw UsageError(name + " needs a number, got '" + v + "'");
  return x;
}

bool Args::take_flag(const std::string& name) {
  auto it = std::find(args_.begin(), args_.end(), name);
  if (it == args_.end()) return false;
  args_.erase(it);
  return true;
}

bool Args::has_flag(const std::string& name) const {
  return std::find(args_.begin(), args_.end(), name) != args_.end();
}

std::string Args::take_optional_value(const std::string& name) {
  auto it = std::find(args_.begin(), args_.end(), name);
  if (it == args_.end()) return {};
  it = args_.erase(it);
  if (it == args_.end() || (it->size() > 1 && (*it)[0] == '-')) return {};
  std::string v = *it;
  args_.erase(it);
  return v;
}

std::vector<std::string> Args::positionals() const {
  for (const auto& a : args_)
    if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option " + a);
  return args_;
}

std::string Args::take_command() {
  if (args_.empty() || args_[0].empty() || args_[0][0] == '-') return {};
  std::string c = args_[0];
  args_.erase(args_.begin());
  return c;
}

runtime::ComputeTarget compute_target(const GlobalOptions& g) {
  return runtime::select_target(g.device, g.dtype);
}

}  // namespace attnlab::cli
