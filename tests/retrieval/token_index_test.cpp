// core/retrieval/token_index.h: the memory-mapped .npy view. Tokens (N, T, F) and vectors
// (N, F) files read back value for value, a data start that is not 4-byte aligned, every
// refusal with its exception type and message, and that opening maps the file rather than
// reading it: a sparse 2.4 GB file is opened and its last images searched while the
// process's peak resident memory grows by far less than the file.
#include "core/retrieval/token_index.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/retrieval/top_k.h"
#include "tests/retrieval/retrieval_npy.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

using retrieval::TokenIndex;

std::vector<float> iota_values(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f - 3.0f;
  return v;
}

TEST(TokenIndex, ReadsTokensFileValueForValue) {
  TempDir dir("tokens");
  const std::vector<float> values = iota_values(2 * 3 * 4);
  retrieval_write_f32(dir.file("e.npy"), {2, 3, 4}, values);
  const TokenIndex index(dir.file("e.npy"));
  EXPECT_EQ(index.images(), 2);
  EXPECT_EQ(index.tokens(), 3);
  EXPECT_EQ(index.features(), 4);
  EXPECT_EQ(index.rows(), 6);
  EXPECT_EQ(index.shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(index.data_offset(), 128u);  // numpy's header of this shape: 128 bytes
  EXPECT_EQ(index.file_size(), 128u + 96u);
  EXPECT_TRUE(index.aligned());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t t = 0; t < 3; ++t)
      EXPECT_EQ(index.vector(i, t), std::vector<float>(values.begin() + (i * 3 + t) * 4,
                                                       values.begin() + (i * 3 + t + 1) * 4));
  EXPECT_THROW(index.vector(2, 0), std::out_of_range);
  EXPECT_THROW(index.vector(0, 3), std::out_of_range);
  EXPECT_THROW(index.vector(-1, 0), std::out_of_range);
}

TEST(TokenIndex, ReadsVectorsFileAsOneTokenPerImage) {
  TempDir dir("vectors");
  const std::vector<float> values = iota_values(5 * 3);
  retrieval_write_f32(dir.file("e.npy"), {5, 3}, values);
  const TokenIndex index(dir.file("e.npy"));
  EXPECT_EQ(index.images(), 5);
  EXPECT_EQ(index.tokens(), 1);
  EXPECT_EQ(index.features(), 3);
  EXPECT_EQ(index.vector(4), (std::vector<float>{values[12], values[13], values[14]}));
}

TEST(TokenIndex, ReadsADataStartThatIsNotFourByteAligned) {
  TempDir dir("misaligned");
  const std::vector<float> values = iota_values(3 * 2 * 5);
  retrieval_write_f32(dir.file("e.npy"), {3, 2, 5}, values, /*extra_pad=*/1);
  TokenIndex index(dir.file("e.npy"));
  EXPECT_EQ(index.data_offset(), 129u);
  EXPECT_FALSE(index.aligned());
  EXPECT_EQ(index.vector(2, 1), std::vector<float>(values.begin() + 25, values.end()));
  // The search reads such rows through a copy: the query's own row is its best match.
  const std::vector<retrieval::Match> best = retrieval::top_k_similar(index, index.vector(1, 0), 1);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].image, 1);
  EXPECT_EQ(best[0].token, 0);
  // Moving keeps the mapping valid.
  TokenIndex moved(std::move(index));
  EXPECT_EQ(moved.vector(0, 0), std::vector<float>(values.begin(), values.begin() + 5));
}

// The message of the exception `open` throws, which must be of type E.
template <typename E>
std::string retrieval_error_of(const std::string& path) {
  try {
    TokenIndex index(path);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << path << " was accepted";
  return {};
}

#define EXPECT_REFUSED(E, path, needle)                                     \
  do {                                                                      \
    const std::string message = retrieval_error_of<E>(path);                \
    EXPECT_NE(message.find(needle), std::string::npos) << message;          \
    EXPECT_EQ(message.rfind(path, 0), 0u) << "names the path: " << message; \
  } while (0)

TEST(TokenIndex, RefusesWhatRetrievalCannotUse) {
  TempDir dir("refusals");
  const std::string f8 = dir.file("f8.npy");
  retrieval_write(f8, retrieval_npy_header("<f8", {2, 3}) + std::string(48, '\0'));
  EXPECT_REFUSED(std::invalid_argument, f8, "dtype '<f8'; retrieval reads little-endian float32");
  const std::string big = dir.file("big_endian.npy");
  retrieval_write(big, retrieval_npy_header(">f4", {2, 3}) + std::string(24, '\0'));
  EXPECT_REFUSED(std::invalid_argument, big, "dtype '>f4'");
  const std::string fortran = dir.file("fortran.npy");
  retrieval_write(fortran, retrieval_npy_header("<f4", {2, 3}, true) + std::string(24, '\0'));
  EXPECT_REFUSED(std::invalid_argument, fortran, "Fortran-ordered");
  const std::string rank1 = dir.file("rank1.npy");
  retrieval_write(rank1, retrieval_npy_header("<f4", {6}) + std::string(24, '\0'));
  EXPECT_REFUSED(std::invalid_argument, rank1, "shape (6,) has rank 1; expected (N, T, F)");
  const std::string rank4 = dir.file("rank4.npy");
  retrieval_write(rank4, retrieval_npy_header("<f4", {1, 2, 3, 1}) + std::string(24, '\0'));
  EXPECT_REFUSED(std::invalid_argument, rank4, "has rank 4");
  const std::string empty_rows = dir.file("no_rows.npy");
  retrieval_write(empty_rows, retrieval_npy_header("<f4", {0, 196, 128}));
  EXPECT_REFUSED(std::invalid_argument, empty_rows, "shape (0, 196, 128) has no rows (N = 0)");
  const std::string no_features = dir.file("no_features.npy");
  retrieval_write(no_features, retrieval_npy_header("<f4", {3, 0}));
  EXPECT_REFUSED(std::invalid_argument, no_features, "no tokens or no features");

  const std::string truncated = dir.file("truncated.npy");
  retrieval_write(truncated, retrieval_npy_header("<f4", {2, 3, 4}) + std::string(95, '\0'));
  EXPECT_REFUSED(std::runtime_error, truncated,
                 "truncated: the header's shape (2, 3, 4) needs 224 bytes but the file has 223");
  const std::string trailing = dir.file("trailing.npy");
  retrieval_write(trailing, retrieval_npy_header("<f4", {2, 3, 4}) + std::string(97, '\0'));
  EXPECT_REFUSED(std::runtime_error, trailing, "1 trailing byte(s)");
  const std::string header_cut = dir.file("header_cut.npy");
  retrieval_write(header_cut, retrieval_npy_header("<f4", {2, 3}).substr(0, 30));
  EXPECT_REFUSED(std::runtime_error, header_cut, "truncated .npy header");
  const std::string foreign = dir.file("foreign.npy");
  retrieval_write(foreign, "PK\x03\x04 not an npy file");
  EXPECT_REFUSED(std::runtime_error, foreign, "not an .npy file");
  const std::string zero = dir.file("zero_bytes.npy");
  retrieval_write(zero, "");
  EXPECT_REFUSED(std::runtime_error, zero, "empty file");
  const std::string malformed = dir.file("malformed.npy");
  std::string bad = retrieval_npy_header("<f4", {2, 3});
  bad.replace(bad.find("'shape'"), 7, "'shapes'");
  retrieval_write(malformed, bad + std::string(24, '\0'));
  EXPECT_REFUSED(std::runtime_error, malformed, "unknown key 'shapes'");
  const std::string version = dir.file("version.npy");
  std::string v9 = retrieval_npy_header("<f4", {2, 3});
  v9[6] = 9;
  retrieval_write(version, v9 + std::string(24, '\0'));
  EXPECT_REFUSED(std::runtime_error, version, "npy format version 9.0");
  EXPECT_REFUSED(std::runtime_error, dir.file("missing.npy"), "cannot open");
}

long retrieval_peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// 24 000 images of 196 tokens of 128 floats: 2.4 GB, written as a sparse file (ftruncate),
// with real values only in its last two images. Opening it and searching those two images
// must not read the rest: peak resident memory grows by much less than the file (a read of
// the whole file would add 2.4 GB; the mapping adds the pages touched, 200 KB).
TEST(TokenIndex, MapsALargeFileInsteadOfReadingIt) {
  TempDir dir("sparse");
  const int64_t n = 24000, t = 196, f = 128;
  const std::string path = dir.file("large.npy");
  const std::string header = retrieval_npy_header("<f4", {n, t, f});
  const uint64_t size = header.size() + uint64_t(n * t * f) * sizeof(float);
  ASSERT_GT(size, uint64_t(2) << 30);
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(::write(fd, header.data(), header.size()), ssize_t(header.size()));
    if (::ftruncate(fd, off_t(size)) != 0) {
      const int e = errno;
      ::close(fd);
      GTEST_SKIP() << "no sparse 2.4 GB file here: " << std::strerror(e);
    }
    // Image n-1, token 5: the direction e_0; image n-2, token 7: (1, 1, 0, ...).
    std::vector<float> row(f, 0.0f);
    row[0] = 3.0f;
    const uint64_t at_a = header.size() + uint64_t(((n - 1) * t + 5) * f) * sizeof(float);
    ASSERT_EQ(::pwrite(fd, row.data(), row.size() * sizeof(float), off_t(at_a)),
              ssize_t(row.size() * sizeof(float)));
    row[1] = 3.0f;
    const uint64_t at_b = header.size() + uint64_t(((n - 2) * t + 7) * f) * sizeof(float);
    ASSERT_EQ(::pwrite(fd, row.data(), row.size() * sizeof(float), off_t(at_b)),
              ssize_t(row.size() * sizeof(float)));
    ::close(fd);
  }
  const long before = retrieval_peak_rss_kib();
  const TokenIndex index(path);
  EXPECT_EQ(index.images(), n);
  EXPECT_EQ(index.file_size(), size);
  std::vector<float> query(f, 0.0f);
  query[0] = 1.0f;
  retrieval::SearchOptions options;
  options.images_begin = n - 2;
  const std::vector<retrieval::Match> best = retrieval::top_k_similar(index, query, 3, options);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].image, n - 1);
  EXPECT_EQ(best[0].token, 5);
  EXPECT_NEAR(static_cast<double>(best[0].score), 1.0, 1e-6);
  EXPECT_EQ(best[1].image, n - 2);
  EXPECT_EQ(best[1].token, 7);
  EXPECT_NEAR(static_cast<double>(best[1].score), 1.0 / std::sqrt(2.0), 1e-6);
  // The rest are zero rows: score 0, the first of them in (image, token) order.
  EXPECT_EQ(best[2].image, n - 2);
  EXPECT_EQ(best[2].token, 0);
  EXPECT_EQ(best[2].score, 0.0f);
  EXPECT_LT(retrieval_peak_rss_kib() - before, 64L * 1024) << "KiB of peak RSS growth";
}

}  // namespace
}  // namespace attnlab::testing
