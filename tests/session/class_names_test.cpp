// Class names from a user's file (--class-names): one per line, a JSON list, or a JSON map
// from index to name (Hugging Face's id2label); a bad file is refused with its reason.
#include <gtest/gtest.h>

#include <fstream>

#include "app/session/predictions.h"
#include "tests/support/temp_path.h"

namespace {

using attnlab::session::checked_class_names;
using attnlab::session::read_class_names;
using Names = std::vector<std::string>;

std::string write(const attnlab::testing::TempDir& dir, const std::string& name,
                  const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message of the error `f` throws ("" when it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(ClassNames, LinesJsonListsAndIndexMaps) {
  attnlab::testing::TempDir dir("names");
  EXPECT_EQ(read_class_names(write(dir, "a.txt", "tench\ngoldfish\r\n\nshark\n")),
            (Names{"tench", "goldfish", "", "shark"}));
  EXPECT_EQ(read_class_names(write(dir, "b.json", R"(["cat", "dog"])")), (Names{"cat", "dog"}));
  EXPECT_EQ(read_class_names(write(dir, "c.json", R"({"2": "bird", "0": "cat"})")),
            (Names{"cat", "", "bird"}));
}

TEST(ClassNames, BadFilesAreRefusedWithTheirReason) {
  attnlab::testing::TempDir dir("bad");
  const std::string missing = dir.file("missing.txt");
  EXPECT_NE(error_of([&] { read_class_names(missing); }).find("cannot read"), std::string::npos);
  const std::string empty = write(dir, "empty.txt", " \n\n");
  EXPECT_NE(error_of([&] { read_class_names(empty); }).find("is empty"), std::string::npos);
  const std::string broken = write(dir, "broken.json", "[\"cat\", ");
  EXPECT_NE(error_of([&] { read_class_names(broken); }).find("not valid JSON"), std::string::npos);
  const std::string key = write(dir, "key.json", R"({"cat": "dog"})");
  EXPECT_NE(error_of([&] { read_class_names(key); }).find("not a class index"), std::string::npos);
  const std::string number = write(dir, "number.json", "[1, 2]");
  EXPECT_NE(error_of([&] { read_class_names(number); }).find("not a string"), std::string::npos);
  // Each message names the file.
  EXPECT_NE(error_of([&] { read_class_names(number); }).find(number), std::string::npos);
}

TEST(ClassNames, TheCountMustBeTheModels) {
  const Names names{"a", "b"};
  EXPECT_EQ(checked_class_names(names, 2, "f.txt"), names);
  EXPECT_NE(error_of([&] {
              checked_class_names(names, 10, "f.txt");
            }).find("f.txt names 2 classes, but the model has 10"),
            std::string::npos);
}

}  // namespace
