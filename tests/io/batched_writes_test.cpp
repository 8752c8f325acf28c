// io::BatchedWrites (core/io/file_bytes.h): a batch's files appear only at commit(), each
// whole and in order; an uncommitted batch leaves nothing; a failure at commit keeps the
// files before it and removes the failing one and those after it, temporaries included.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/io/file_bytes.h"
#include "core/io/io_error.h"
#include "tests/support/temp_path.h"

namespace attnlab::io {
namespace {

using testing::TempDir;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BatchedWrites, FilesAppearWholeAtCommitAndNotBefore) {
  TempDir dir("batched");
  BatchedWrites batch;
  for (int i = 0; i < 5; ++i)
    write_file_atomic(dir.file("f" + std::to_string(i)), std::string(1000 + i, char('a' + i)));
  // Written, not yet in place: only temporaries.
  for (const std::string& name : dir.list()) EXPECT_NE(name.find(".tmp-"), std::string::npos);
  EXPECT_EQ(dir.list().size(), 5u);
  batch.commit();
  EXPECT_EQ(batch.committed(), 5u);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"f0", "f1", "f2", "f3", "f4"}));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(read_text(dir.file("f" + std::to_string(i))), std::string(1000 + i, char('a' + i)));
}

TEST(BatchedWrites, ABatchCommitsAgainWhatWasWrittenAfterItsLastCommit) {
  TempDir dir("batched_twice");
  BatchedWrites batch;
  write_file_atomic(dir.file("a"), std::string("1"));
  write_file_atomic(dir.file("b"), std::string("2"));
  batch.commit();
  write_file_atomic(dir.file("c"), std::string("3"));
  EXPECT_EQ(dir.list().size(), 3u);  // a, b and c's temporary
  EXPECT_FALSE(std::filesystem::exists(dir.file("c")));
  batch.commit();
  EXPECT_EQ(batch.committed(), 3u);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(read_text(dir.file("c")), "3");
}

TEST(BatchedWrites, ABatchLeftUncommittedLeavesNothingAndEndsTheBatching) {
  TempDir dir("batched_dropped");
  {
    BatchedWrites batch;
    write_file_atomic(dir.file("a"), std::string("first"));
    write_file_atomic(dir.file("b"), std::string("second"));
  }
  EXPECT_EQ(dir.list(), std::vector<std::string>{});
  write_file_atomic(dir.file("c"), std::string("alone"));
  EXPECT_EQ(dir.list(), std::vector<std::string>{"c"});
}

TEST(BatchedWrites, ARenameThatFailsKeepsTheFilesBeforeItOnly) {
  TempDir dir("batched_rename");
  std::filesystem::create_directories(dir.path / "taken" / "inside");  // rename onto it fails
  BatchedWrites batch;
  write_file_atomic(dir.file("a"), std::string("kept"));
  write_file_atomic(dir.file("taken"), std::string("cannot replace a folder"));
  write_file_atomic(dir.file("z"), std::string("after the failure"));
  EXPECT_THROW(batch.commit(), IoError);
  EXPECT_EQ(batch.committed(), 1u);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"a", "taken"}));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path / "taken"));
  EXPECT_EQ(read_text(dir.file("a")), "kept");
}

TEST(BatchedWrites, AFillThatThrowsInsideABatchLeavesTheOthersToCommit) {
  TempDir dir("batched_fill");
  BatchedWrites batch;
  write_file_atomic(dir.file("a"), std::string("one"));
  EXPECT_THROW(write_file_atomic(dir.file("b"),
                                 [](const ByteSink& sink) {
                                   sink("partial", 7);
                                   throw std::runtime_error("fill failed");
                                 }),
               std::runtime_error);
  write_file_atomic(dir.file("c"), std::string("three"));
  batch.commit();
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"a", "c"}));
}

TEST(BatchedWrites, NestedBatchesCommitOnlyTheirOwnFiles) {
  TempDir dir("batched_nested");
  BatchedWrites outer;
  write_file_atomic(dir.file("outer"), std::string("o"));
  {
    BatchedWrites inner;
    write_file_atomic(dir.file("inner"), std::string("i"));
    inner.commit();
  }
  EXPECT_TRUE(std::filesystem::exists(dir.file("inner")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("outer")));
  write_file_atomic(dir.file("outer2"), std::string("o2"));  // the outer batch's again
  EXPECT_FALSE(std::filesystem::exists(dir.file("outer2")));
  outer.commit();
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"inner", "outer", "outer2"}));
}

}  // namespace
}  // namespace attnlab::io
