// Every input a fuzzer ever crashed on (tests/fuzz/regressions/) goes through the
// public entry point: it must now end in a result or an IoError, nothing else.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/io/file_bytes.h"
#include "core/io/tensor_file.h"

namespace attnlab::io {
namespace {

TEST(FuzzRegressions, EveryCrashInputNowFailsCleanly) {
  const std::filesystem::path dir =
      std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests/fuzz/regressions";
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::vector<uint8_t> bytes = read_file_bytes(entry.path().string());
    try {
      parse_tensor_file(ByteView(bytes.data(), bytes.size()), entry.path().filename().string());
    } catch (const IoError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << " escaped as " << e.what();
    }
    ++n;
  }
  EXPECT_GE(n, 2u) << "regression inputs missing from " << dir;
}

}  // namespace
}  // namespace attnlab::io
