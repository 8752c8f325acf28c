// Tests for core/analysis/table.h: cell text forms (float32 round trip at 9 digits), row
// checks, and TableAccumulator against a direct two-pass mean / population std in double.
#include "core/analysis/table.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

namespace attnlab::analysis {
namespace {

// Bitwise equality, so that -0.0f vs 0.0f counts as a difference.
bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

float parse_float(const std::string& s) {
  float f = 0.0f;
  auto res = std::from_chars(s.data(), s.data() + s.size(), f);
  EXPECT_EQ(res.ec, std::errc()) << s;
  EXPECT_EQ(res.ptr, s.data() + s.size()) << s;
  return f;
}

TEST(TableCell, IntegersAreExact) {
  EXPECT_EQ(Cell(0).str(), "0");
  EXPECT_EQ(Cell(-17).str(), "-17");
  EXPECT_EQ(Cell(std::numeric_limits<int64_t>::max()).str(), "9223372036854775807");
  EXPECT_EQ(Cell(std::numeric_limits<int64_t>::min()).str(), "-9223372036854775808");
}

TEST(TableCell, RealsUseNineSignificantDigits) {
  EXPECT_EQ(Cell(0.5).str(), "0.5");
  EXPECT_EQ(Cell(1.0 / 3.0).str(), "0.333333333");
  EXPECT_EQ(Cell(123456789012.0).str(), "1.23456789e+11");
  // A real that prints as an integer keeps a ".0" so a reader types it Real.
  EXPECT_EQ(Cell(3.0).str(), "3.0");
  EXPECT_EQ(Cell(-0.0).str(), "-0.0");
  EXPECT_EQ(Cell(static_cast<double>(0.1f)).str(), "0.100000001");
}

TEST(TableCell, NonFiniteReals) {
  EXPECT_EQ(Cell(std::numeric_limits<double>::quiet_NaN()).str(), "nan");
  EXPECT_EQ(Cell(-std::numeric_limits<double>::quiet_NaN()).str(), "nan");
  EXPECT_EQ(Cell(std::numeric_limits<double>::infinity()).str(), "inf");
  EXPECT_EQ(Cell(-std::numeric_limits<double>::infinity()).str(), "-inf");
}

TEST(TableCell, TextIsVerbatim) {
  EXPECT_EQ(Cell("a, \"b\"\nc").str(), "a, \"b\"\nc");
  EXPECT_EQ(Cell(std::string()).str(), "");
}

TEST(TableCell, Float32RoundTripsThroughNineDigits) {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               0.1f,
                               std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::epsilon(),
                               16777217.0f,
                               3.14159274f};
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  while (values.size() < 20000) {  // random bit patterns cover every exponent
    uint32_t b = bits(rng);
    float f;
    std::memcpy(&f, &b, sizeof f);
    if (std::isfinite(f)) values.push_back(f);
  }
  size_t bad = 0;
  for (float f : values) {
    const std::string s = Cell(static_cast<double>(f)).str();
    if (!same_bits(parse_float(s), f)) {
      ++bad;
      ADD_FAILURE() << s << " does not read back as " << f;
    }
    if (bad > 5) break;
  }
  EXPECT_EQ(bad, 0u);
}

TEST(Table, AddRowChecksWidth) {
  Table t;
  t.name = "demo";
  t.columns = {"layer", "value"};
  t.add_row({0, 1.5});
  EXPECT_EQ(t.rows.size(), 1u);
  try {
    t.add_row({1});
    FAIL() << "a short row was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1 cells"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 columns"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t.add_row({1, 2.0, "x"}), std::invalid_argument);
  EXPECT_EQ(t.rows.size(), 1u);
}

TEST(Table, ColumnLookup) {
  Table t;
  t.name = "demo";
  t.columns = {"layer", "head", "rank"};
  EXPECT_EQ(t.column("layer"), 0u);
  EXPECT_EQ(t.column("rank"), 2u);
  try {
    (void)t.column("ranks");
    FAIL() << "unknown column found";
  } catch (const std::out_of_range& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("ranks"), std::string::npos) << msg;
    EXPECT_NE(msg.find("layer, head, rank"), std::string::npos) << msg;
  }
}

TEST(Array, Numel) {
  Array a;
  EXPECT_EQ(a.numel(), 1);  // a 0-d array holds one value, as in numpy
  a.shape = {2, 3, 4};
  EXPECT_EQ(a.numel(), 24);
  a.shape = {5, 0};
  EXPECT_EQ(a.numel(), 0);
}

// Per-image tables: key (layer Int, head Text), values (rank Real, tokens Int).
Table image_table(const std::vector<std::tuple<int, std::string, double, int>>& rows) {
  Table t;
  t.name = "rank_heads";
  t.caption = "one row per head";
  t.columns = {"layer", "head", "rank", "tokens"};
  t.key_columns = 2;
  for (const auto& [l, h, r, n] : rows) t.add_row({l, h, r, n});
  return t;
}

// Two-pass mean and population std in double.
std::pair<double, double> direct(const std::vector<double>& xs) {
  double mean = 0.0, ss = 0.0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  for (double x : xs) ss += (x - mean) * (x - mean);
  return {mean, std::sqrt(ss / static_cast<double>(xs.size()))};
}

TEST(TableAccumulator, MeanAndPopulationStdMatchDirectComputation) {
  TableAccumulator acc;
  // Key (1, "h0") is in all three images, (0, "h1") in two, (2, "h0") only in the last;
  // the second image lists its rows in another order.
  acc.add(image_table({{1, "h0", 10.25, 196}, {0, "h1", 3.5, 197}}));
  acc.add(image_table({{0, "h1", 4.75, 199}, {1, "h0", 12.0, 201}}));
  acc.add(image_table({{1, "h0", 9.125, 190}, {2, "h0", 7.0, 50}}));
  EXPECT_EQ(acc.count(), 3);

  const Table r = acc.result();
  EXPECT_EQ(r.name, "rank_heads");
  EXPECT_EQ(r.caption, "one row per head");
  EXPECT_EQ(r.key_columns, 2u);
  EXPECT_EQ(r.columns, (std::vector<std::string>{"layer", "head", "rank_mean", "rank_std",
                                                 "tokens_mean", "tokens_std", "images"}));
  ASSERT_EQ(r.rows.size(), 3u);
  struct Expect {
    int layer;
    const char* head;
    std::vector<double> rank, tokens;
  };
  // First-seen order: (1,h0), (0,h1), (2,h0).
  const Expect expect[] = {{1, "h0", {10.25, 12.0, 9.125}, {196, 201, 190}},
                           {0, "h1", {3.5, 4.75}, {197, 199}},
                           {2, "h0", {7.0}, {50}}};
  for (size_t i = 0; i < 3; ++i) {
    const auto& row = r.rows[i];
    ASSERT_EQ(row.size(), r.columns.size());
    EXPECT_EQ(row[0].kind, Cell::Kind::Int);
    EXPECT_EQ(row[0].i, expect[i].layer);
    EXPECT_EQ(row[1].t, expect[i].head);
    const auto [rm, rs] = direct(expect[i].rank);
    const auto [tm, ts] = direct(expect[i].tokens);
    // Welford vs two-pass differ only by rounding in the last bits.
    EXPECT_NEAR(row[2].number(), rm, 1e-12 * std::abs(rm));
    EXPECT_NEAR(row[3].number(), rs, 1e-12 * std::abs(rm));
    EXPECT_NEAR(row[4].number(), tm, 1e-12 * std::abs(tm));
    EXPECT_NEAR(row[5].number(), ts, 1e-12 * std::abs(tm));
    EXPECT_EQ(row[6].kind, Cell::Kind::Int);
    EXPECT_EQ(row[6].i, static_cast<int64_t>(expect[i].rank.size()));  // the n column
  }
  EXPECT_EQ(r.rows[2][3].number(), 0.0);  // one image: std 0
  EXPECT_GT(r.rows[0][3].number(), 1.0);  // sanity: a real spread was measured
}

TEST(TableAccumulator, ManyImagesStayAccurate) {
  // Large offset, small spread: the case where a naive Σx² − n·mean² formula loses digits.
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 1e-3);
  std::vector<double> xs;
  TableAccumulator acc;
  for (int k = 0; k < 1000; ++k) {
    xs.push_back(1e6 + noise(rng));
    Table t;
    t.columns = {"v"};
    t.add_row({xs.back()});
    acc.add(t);
  }
  const auto [mean, sd] = direct(xs);
  const Table r = acc.result();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(r.rows[0][0].number(), mean, 1e-12 * mean);
  // Each input carries ~1e-10 of rounding (an ulp of 1e6), 1e-7 of the spread; both
  // methods see it, so 1e-6 of sd separates them from a formula that cancels digits.
  EXPECT_NEAR(r.rows[0][1].number(), sd, 1e-6 * sd);
  EXPECT_EQ(r.rows[0][2].i, 1000);
}

TEST(TableAccumulator, KeysOfDifferentKindsAreDifferentRows) {
  Table a;
  a.columns = {"key", "v"};
  a.key_columns = 1;
  a.add_row({1, 2.0});
  a.add_row({"1", 4.0});
  TableAccumulator acc;
  acc.add(a);
  EXPECT_EQ(acc.result().rows.size(), 2u);
}

TEST(TableAccumulator, MismatchedTablesThrowAndLeaveStateUnchanged) {
  TableAccumulator acc;
  acc.add(image_table({{0, "h0", 1.0, 10}}));
  const Table before = acc.result();

  Table renamed = image_table({{0, "h0", 2.0, 10}});
  renamed.columns[2] = "rank_eff";
  EXPECT_THROW(acc.add(renamed), std::invalid_argument);

  Table fewer_keys = image_table({{0, "h0", 2.0, 10}});
  fewer_keys.key_columns = 1;
  EXPECT_THROW(acc.add(fewer_keys), std::invalid_argument);

  Table wider = image_table({});
  wider.columns.push_back("extra");
  EXPECT_THROW(acc.add(wider), std::invalid_argument);

  Table text_value = image_table({{0, "h0", 2.0, 10}});
  text_value.rows[0][2] = Cell("high");
  try {
    acc.add(text_value);
    FAIL() << "a text value was averaged";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'rank'"), std::string::npos) << e.what();
  }

  Table duplicate = image_table({{5, "h0", 2.0, 10}, {5, "h0", 3.0, 11}});
  EXPECT_THROW(acc.add(duplicate), std::invalid_argument);

  Table ragged = image_table({{0, "h0", 2.0, 10}});
  ragged.rows[0].pop_back();
  EXPECT_THROW(acc.add(ragged), std::invalid_argument);

  // None of the rejected tables changed anything (the duplicate's key 5 was not added).
  EXPECT_EQ(acc.count(), 1);
  const Table after = acc.result();
  ASSERT_EQ(after.rows.size(), before.rows.size());
  EXPECT_EQ(after.rows[0][2].number(), before.rows[0][2].number());
  EXPECT_EQ(after.rows[0][6].i, 1);
}

// Images with the previous one's keys in its order take a shorter way (matched cell by
// cell, issue 51); it must give what the lookup gives, and step aside for anything else:
// the same keys reordered, a key that is new, a real key equal only to 9 digits.
TEST(TableAccumulator, RepeatedKeysInOrderAccumulateAsLookedUp) {
  TableAccumulator fast, mixed;
  const auto first = image_table({{0, "h0", 1.0, 10}, {0, "h1", 2.0, 20}, {1, "h0", 3.0, 30}});
  const auto same = image_table({{0, "h0", 4.0, 11}, {0, "h1", 5.0, 21}, {1, "h0", 6.0, 31}});
  const auto reordered = image_table({{1, "h0", 7.0, 32}, {0, "h0", 8.0, 12}, {0, "h1", 9.0, 22}});
  fast.add(first);
  fast.add(same);
  fast.add(same);
  fast.add(reordered);  // not the previous order: looked up
  mixed.add(first);
  mixed.add(reordered);
  mixed.add(same);
  mixed.add(same);
  const Table a = fast.result(), b = mixed.result();
  ASSERT_EQ(a.rows.size(), 3u);
  for (size_t r = 0; r < 3; ++r)
    for (size_t c = 0; c < a.columns.size(); ++c)
      EXPECT_NEAR(a.rows[r][c].number(), b.rows[r][c].number(), 1e-12) << r << "," << c;
  // A duplicate in a table of the previous length is still refused, state unchanged.
  EXPECT_THROW(fast.add(image_table({{0, "h0", 1.0, 1}, {0, "h0", 1.0, 1}, {1, "h0", 1.0, 1}})),
               std::invalid_argument);
  EXPECT_EQ(fast.count(), 4);
  // A new key at the previous length: a row of its own, not the old row at that position.
  fast.add(image_table({{0, "h0", 1.0, 1}, {0, "h1", 1.0, 1}, {2, "h0", 1.0, 1}}));
  EXPECT_EQ(fast.result().rows.size(), 4u);
}

TEST(TableAccumulator, EmptyAccumulator) {
  TableAccumulator acc;
  EXPECT_EQ(acc.count(), 0);
  const Table r = acc.result();
  EXPECT_EQ(r.columns, std::vector<std::string>{"images"});
  EXPECT_TRUE(r.rows.empty());
}

}  // namespace
}  // namespace attnlab::analysis
