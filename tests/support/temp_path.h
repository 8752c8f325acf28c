// A temporary file path unique to this process and test: ctest runs test cases as
// parallel processes, so a fixed name in /tmp is a race between them.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

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

}  // namespace attnlab::testing
