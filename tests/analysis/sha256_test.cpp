// SHA-256 (core/analysis/sha256.h): the FIPS 180-2 test vectors, files in chunks, and
// lengths around the padding and read-chunk boundaries against the system's sha256sum.
#include "core/analysis/sha256.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "core/io/io_error.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace attnlab::analysis {
namespace {

namespace fs = std::filesystem;

using attnlab::testing::TempDir;

using testing::read_text;

TEST(Sha256, StandardVectors) {
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256_hex(m448.data(), m448.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  EXPECT_EQ(sha256_hex(million.data(), million.size()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The SHA instructions (when this CPU has them) and the portable code agree on every
// length around the block and padding boundaries, and on a few MB of random bytes.
TEST(Sha256, ShaInstructionsAndPortableCodeAgree) {
  if (!sha256_extensions_available()) std::cout << "[sha256] this CPU has no SHA instructions\n";
  std::mt19937 rng(9);
  std::string bytes(size_t(3) << 20, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  for (size_t n : {size_t(0), size_t(1), size_t(55), size_t(56), size_t(63), size_t(64),
                   size_t(65), size_t(127), size_t(128), size_t(1000), bytes.size()})
    EXPECT_EQ(sha256_hex(bytes.data(), n, Sha256Code::Fastest),
              sha256_hex(bytes.data(), n, Sha256Code::Portable))
        << n;
  const std::string million(1000000, 'a');
  EXPECT_EQ(sha256_hex(million.data(), million.size(), Sha256Code::Portable),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FileMatchesMemoryAndMissingFileThrows) {
  TempDir dir("sha_file");
  const std::string million(1000000, 'a');
  std::ofstream(dir.file("a.bin"), std::ios::binary) << million;
  EXPECT_EQ(sha256_file(dir.file("a.bin")),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_THROW(sha256_file(dir.file("missing.bin")), io::IoError);
}

// Lengths around the padding boundaries (55/56/64 bytes) and around the 1 MiB read chunk,
// checked against the system's sha256sum, an independent implementation.
TEST(Sha256, MatchesSha256sum) {
  if (std::system("command -v sha256sum > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "sha256sum is not installed";
  TempDir dir("sha_tool");
  std::mt19937 rng(5);
  for (size_t n : {size_t(1), size_t(55), size_t(56), size_t(63), size_t(64), size_t(65),
                   size_t(119), size_t(120), size_t(1) << 20, (size_t(5) << 19) + 3}) {
    std::string bytes(n, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const std::string path = dir.file("blob.bin"), out = dir.file("sum.txt");
    std::ofstream(path, std::ios::binary) << bytes;
    ASSERT_EQ(std::system(("sha256sum '" + path + "' > '" + out + "'").c_str()), 0);
    const std::string expected = read_text(out).substr(0, 64);
    EXPECT_EQ(sha256_file(path), expected) << n << " bytes";
    EXPECT_EQ(sha256_hex(bytes.data(), bytes.size()), expected) << n << " bytes";
  }
}

}  // namespace
}  // namespace attnlab::analysis
