// A temporary file path unique to this process and test: ctest runs test cases as
// parallel processes, so a fixed name in /tmp is a race between them.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::testing {

inline std::string unique_temp_path(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  for (char& c : test)
    if (c == '/') c = '_';
  return (std::filesystem::path(::testing::TempDir()) /
          ("attnlab-" + std::to_string(::getpid()) + "-" + test + "-" + name))
      .string();
}

// A fresh, empty directory unique to this process and test; left in place afterwards, so
// a failing test's files can be looked at (TempDir removes its own).
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const std::filesystem::path dir = unique_temp_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A fresh, empty directory for one test, removed with everything in it at the end.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) : path(fresh_temp_dir(name)) {}
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Names of the directory's entries, sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace attnlab::testing
