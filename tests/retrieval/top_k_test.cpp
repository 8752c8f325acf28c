// core/retrieval/top_k.h: the k most cosine-similar tokens. Hand-made vectors with known
// cosines (the exact order, ties by image then token, a zero-norm row and a zero query
// scoring 0, exclude-self), every refusal, progress and cancellation, the same answer for
// every thread count and chunk size, and agreement with a double-precision sort of every
// cosine on random data (fixed seed).
//
// Tolerance: a score is float32 sums of F products, |error| ≤ about (F + 2)·2^-24 of the
// exact cosine (top_k.h); the reference is double precision, whose own error is negligible.
#include "core/retrieval/top_k.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tests/retrieval/retrieval_npy.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

using retrieval::Match;
using retrieval::SearchOptions;
using retrieval::TokenIndex;
using retrieval::top_k_similar;

double retrieval_tolerance(int64_t features) {
  return double(features + 2) * std::ldexp(1.0, -24);
}

using Key = std::tuple<int64_t, int64_t>;
std::vector<Key> keys_of(const std::vector<Match>& matches) {
  std::vector<Key> keys;
  for (const Match& m : matches) keys.emplace_back(m.image, m.token);
  return keys;
}

// 3 images × 2 tokens × 3 features, against the query (1, 0, 0):
//   (0,0) = (1,0,0): 1      (0,1) = (0,1,0): 0
//   (1,0) = (2,0,0): 1      (1,1) = (1,1,0): 1/√2
//   (2,0) = (0,0,0): 0 (zero norm)   (2,1) = (-1,0,0): -1
std::string retrieval_known_file(const TempDir& dir) {
  const std::string path = dir.file("known.npy");
  retrieval_write_f32(path, {3, 2, 3}, {1, 0, 0, 0, 1, 0, 2, 0, 0, 1, 1, 0, 0, 0, 0, -1, 0, 0});
  return path;
}

TEST(TopK, KnownVectorsInTheirExactOrder) {
  TempDir dir("known");
  const TokenIndex index(retrieval_known_file(dir));
  const std::vector<float> q = {1, 0, 0};
  const std::vector<Match> all = top_k_similar(index, q, 100);
  // Ties at 1 and at 0 in image order; the zero-norm row (2,0) scores 0.
  EXPECT_EQ(keys_of(all), (std::vector<Key>{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {2, 0}, {2, 1}}));
  const std::vector<double> want = {1, 1, 1 / std::sqrt(2.0), 0, 0, -1};
  const double tol = retrieval_tolerance(3);
  for (size_t i = 0; i < all.size(); ++i)
    EXPECT_NEAR(static_cast<double>(all[i].score), want[i], tol) << i;
  // Exact where the arithmetic is exact: both unit matches, and the zeros.
  EXPECT_EQ(all[0].score, 1.0f);
  EXPECT_EQ(all[1].score, 1.0f);
  EXPECT_EQ(all[3].score, 0.0f);
  EXPECT_EQ(all[4].score, 0.0f);
  // k cuts the same list.
  EXPECT_EQ(keys_of(top_k_similar(index, q, 2)), (std::vector<Key>{{0, 0}, {1, 0}}));
  EXPECT_EQ(keys_of(top_k_similar(index, q, 4)),
            (std::vector<Key>{{0, 0}, {1, 0}, {1, 1}, {0, 1}}));
  // Ties on both score and image go by token: the query (0,0,1) is orthogonal to every row
  // (and the zero row scores 0 too), so all tie at 0 in (image, token) order.
  EXPECT_EQ(keys_of(top_k_similar(index, {0, 0, 1}, 3)),
            (std::vector<Key>{{0, 0}, {0, 1}, {1, 0}}));
  // A zero query scores 0 everywhere: the list is (image, token) order.
  const std::vector<Match> zero = top_k_similar(index, {0, 0, 0}, 6);
  EXPECT_EQ(keys_of(zero), (std::vector<Key>{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}}));
  for (const Match& m : zero) EXPECT_EQ(m.score, 0.0f);
}

TEST(TopK, ExcludeSelfLeavesOutEveryTokenOfThatImage) {
  TempDir dir("exclude");
  const TokenIndex index(retrieval_known_file(dir));
  SearchOptions options;
  options.exclude_image = 0;
  EXPECT_EQ(keys_of(top_k_similar(index, {1, 0, 0}, 100, options)),
            (std::vector<Key>{{1, 0}, {1, 1}, {2, 0}, {2, 1}}));
  options.exclude_image = 1;
  EXPECT_EQ(keys_of(top_k_similar(index, {1, 0, 0}, 2, options)),
            (std::vector<Key>{{0, 0}, {0, 1}}));
  // An image range, with the excluded image inside and outside it.
  options.images_begin = 1;
  options.images_end = 3;
  EXPECT_EQ(keys_of(top_k_similar(index, {1, 0, 0}, 100, options)),
            (std::vector<Key>{{2, 0}, {2, 1}}));
  options.exclude_image = 0;
  EXPECT_EQ(keys_of(top_k_similar(index, {1, 0, 0}, 100, options)),
            (std::vector<Key>{{1, 0}, {1, 1}, {2, 0}, {2, 1}}));
  // Nothing left to search: an empty answer, not an error.
  options.images_begin = options.images_end = 2;
  EXPECT_TRUE(top_k_similar(index, {1, 0, 0}, 5, options).empty());
}

TEST(TopK, NotANumberRowsAreNeverReturned) {
  TempDir dir("nan");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  retrieval_write_f32(dir.file("nan.npy"), {4, 2}, {1, 0, nan, 0, inf, 1, 0, 1});
  const TokenIndex index(dir.file("nan.npy"));
  EXPECT_EQ(keys_of(top_k_similar(index, {1, 0}, 10)), (std::vector<Key>{{0, 0}, {3, 0}}));
}

template <typename E>
std::string retrieval_search_error(const TokenIndex& index, const std::vector<float>& q, int64_t k,
                                   const SearchOptions& options = {}) {
  try {
    top_k_similar(index, q, k, options);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(TopK, RefusesBadQueriesAndOptions) {
  TempDir dir("errors");
  const TokenIndex index(retrieval_known_file(dir));
  using IA = std::invalid_argument;
  EXPECT_NE(retrieval_search_error<IA>(index, {1, 0}, 3).find("the query has 2 features but "),
            std::string::npos);
  EXPECT_NE(retrieval_search_error<IA>(index, {1, 0, 0, 0}, 3).find("has 3"), std::string::npos);
  EXPECT_NE(retrieval_search_error<IA>(index, {1, 0, 0}, 0).find("k must be at least 1, not 0"),
            std::string::npos);
  EXPECT_NE(retrieval_search_error<IA>(index, {1, 0, 0}, -2).find("not -2"), std::string::npos);
  EXPECT_NE(retrieval_search_error<IA>(index, {std::nanf(""), 0, 0}, 1).find("NaN or infinite"),
            std::string::npos);
  SearchOptions o;
  o.chunk_rows = 0;
  EXPECT_NE(retrieval_search_error<IA>(index, {1, 0, 0}, 1, o).find("chunk_rows"),
            std::string::npos);
  o = {};
  o.exclude_image = 3;
  EXPECT_NE(retrieval_search_error<IA>(index, {1, 0, 0}, 1, o).find("exclude_image 3 is not"),
            std::string::npos);
  o = {};
  o.images_begin = 2;
  o.images_end = 4;
  EXPECT_NE(retrieval_search_error<IA>(index, {1, 0, 0}, 1, o).find("image range [2, 4)"),
            std::string::npos);
}

TEST(TopK, ReportsProgressAndStopsWhenCancelled) {
  TempDir dir("progress");
  std::vector<float> values(50 * 4 * 6);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (float& v : values) v = normal(rng);
  retrieval_write_f32(dir.file("p.npy"), {50, 4, 6}, values);
  const TokenIndex index(dir.file("p.npy"));
  SearchOptions o;
  o.chunk_rows = 16;
  o.threads = 1;
  std::vector<int64_t> seen;
  o.on_progress = [&](int64_t done, int64_t total) {
    EXPECT_EQ(total, 200);
    seen.push_back(done);
  };
  top_k_similar(index, index.vector(0, 0), 5, o);
  ASSERT_EQ(seen.size(), 13u);  // ceil(200 / 16) chunks
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.back(), 200);
  // With more threads, progress still ends at the total.
  seen.clear();
  o.threads = 3;
  top_k_similar(index, index.vector(0, 0), 5, o);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 200);
  // Cancelled after the first chunk: Cancelled, and nothing more is reported.
  seen.clear();
  o.threads = 1;
  o.cancelled = [&] { return !seen.empty(); };
  EXPECT_THROW(top_k_similar(index, index.vector(0, 0), 5, o), retrieval::Cancelled);
  EXPECT_EQ(seen, (std::vector<int64_t>{16}));
}

// Random Gaussian tokens with a planted duplicate (an exact tie) and a zero row.
struct RetrievalRandomSet {
  int64_t n = 37, t = 11, f = 45;
  std::vector<float> values;
  explicit RetrievalRandomSet(uint32_t seed) {
    values.resize(size_t(n * t * f));
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    for (float& v : values) v = normal(rng);
    // (20, 3) duplicates (4, 9); (30, 0) is zero.
    std::copy_n(values.begin() + (4 * t + 9) * f, f, values.begin() + (20 * t + 3) * f);
    std::fill_n(values.begin() + (30 * t + 0) * f, f, 0.0f);
  }
  // Every row's cosine with q in double precision, sorted as top_k documents.
  std::vector<std::tuple<double, int64_t, int64_t>> reference(const std::vector<float>& q,
                                                              int64_t exclude) const {
    double qq = 0;
    for (float v : q) qq += double(v) * double(v);
    std::vector<std::tuple<double, int64_t, int64_t>> all;
    for (int64_t i = 0; i < n; ++i) {
      if (i == exclude) continue;
      for (int64_t k = 0; k < t; ++k) {
        double dot = 0, aa = 0;
        for (int64_t j = 0; j < f; ++j) {
          const double a = values[size_t((i * t + k) * f + j)];
          dot += a * double(q[size_t(j)]);
          aa += a * a;
        }
        all.emplace_back(aa == 0 || qq == 0 ? 0.0 : dot / std::sqrt(aa * qq), i, k);
      }
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
      return std::make_pair(std::get<1>(a), std::get<2>(a)) <
             std::make_pair(std::get<1>(b), std::get<2>(b));
    });
    return all;
  }
};

TEST(TopK, AgreesWithADoublePrecisionSortOfEveryCosine) {
  TempDir dir("brute");
  const RetrievalRandomSet set(12345);
  retrieval_write_f32(dir.file("r.npy"), {set.n, set.t, set.f}, set.values);
  const TokenIndex index(dir.file("r.npy"));
  const double tol = retrieval_tolerance(set.f);
  const int64_t k = 40;
  for (const auto& [qi, qt, exclude] : std::vector<std::tuple<int64_t, int64_t, bool>>{
           {4, 9, false}, {4, 9, true}, {17, 2, false}, {36, 10, true}}) {
    const std::vector<float> q = index.vector(qi, qt);
    const auto want = set.reference(q, exclude ? qi : -1);
    // The reference's scores are apart by more than the tolerance at every rank compared
    // (else float rounding could legitimately swap two rows), except exact ties of
    // identical rows, which both sides order by (image, token).
    for (int64_t r = 0; r < k; ++r) {
      const double gap = std::get<0>(want[size_t(r)]) - std::get<0>(want[size_t(r + 1)]);
      const bool duplicate = gap == 0.0;
      ASSERT_TRUE(duplicate || gap > 2 * tol) << "seed gives a near tie at rank " << r;
    }
    SearchOptions o;
    o.exclude_image = exclude ? qi : -1;
    o.chunk_rows = 7;
    o.threads = 3;
    const std::vector<Match> got = top_k_similar(index, q, k, o);
    ASSERT_EQ(got.size(), size_t(k));
    for (int64_t r = 0; r < k; ++r) {
      const auto& [score, image, token] = want[size_t(r)];
      EXPECT_EQ(got[size_t(r)].image, image) << "rank " << r;
      EXPECT_EQ(got[size_t(r)].token, token) << "rank " << r;
      EXPECT_NEAR(static_cast<double>(got[size_t(r)].score), score, tol) << "rank " << r;
      if (exclude) {
        EXPECT_NE(got[size_t(r)].image, qi);
      }
    }
    if (!exclude) {
      // The query's own row and its duplicate score 1 and tie: image 4 before image 20.
      if (qi == 4 && qt == 9) {
        EXPECT_EQ(keys_of({got[0], got[1]}), (std::vector<Key>{{4, 9}, {20, 3}}));
        EXPECT_EQ(got[0].score, got[1].score);
      }
      EXPECT_NEAR(static_cast<double>(got[0].score), 1.0, tol);
    }
  }
}

TEST(TopK, TheSameAnswerForEveryThreadCountAndChunkSize) {
  TempDir dir("determinism");
  const RetrievalRandomSet set(99);
  retrieval_write_f32(dir.file("r.npy"), {set.n, set.t, set.f}, set.values);
  const TokenIndex index(dir.file("r.npy"));
  const std::vector<float> q = index.vector(11, 5);
  SearchOptions o;
  o.threads = 1;
  o.chunk_rows = 1 << 20;
  const std::vector<Match> one = top_k_similar(index, q, 60, o);
  for (int threads : {2, 4, 7})
    for (int64_t chunk : {1, 5, 64}) {
      o.threads = threads;
      o.chunk_rows = chunk;
      const std::vector<Match> other = top_k_similar(index, q, 60, o);
      ASSERT_EQ(other.size(), one.size());
      for (size_t i = 0; i < one.size(); ++i) {
        EXPECT_EQ(other[i].image, one[i].image) << threads << " threads, chunks of " << chunk;
        EXPECT_EQ(other[i].token, one[i].token);
        EXPECT_EQ(other[i].score, one[i].score);  // bit for bit
      }
    }
  // cosine_of_row computes what the search returns.
  for (const Match& m : one)
    EXPECT_EQ(retrieval::cosine_of_row(index, m.image * set.t + m.token, q), m.score);
}

TEST(TopK, SearchesAVectorsFileAsOneTokenPerImage) {
  TempDir dir("vectors");
  retrieval_write_f32(dir.file("v.npy"), {4, 2}, {1, 0, 0, 1, 1, 1, -1, 0});
  const TokenIndex index(dir.file("v.npy"));
  const std::vector<Match> best = top_k_similar(index, {1, 0}, 4);
  EXPECT_EQ(keys_of(best), (std::vector<Key>{{0, 0}, {2, 0}, {1, 0}, {3, 0}}));
}

}  // namespace
}  // namespace attnlab::testing
