// Result keys: the one format/parse pair for the analyses' array names. The names on disk
// are the ones analyze has always written (docs/ANALYSIS.md), so existing outputs parse.
#include <gtest/gtest.h>

#include "core/analysis/result_key.h"

namespace {

using attnlab::analysis::format_result_key;
using attnlab::analysis::parse_result_key;
using attnlab::analysis::ResultKey;

TEST(ResultKey, FormatsTheNamesAnalyzeWrites) {
  EXPECT_EQ(format_result_key({"maps", "chelsea", 3, "q7-3", "", "heads"}),
            "maps__chelsea__L03__q7-3__heads");
  EXPECT_EQ(format_result_key({"rollout", "chelsea", -1, "cls", "", ""}), "rollout__chelsea__cls");
  EXPECT_EQ(format_result_key({"anchors", "demo", 11, "", "", "soft"}), "anchors__demo__L11__soft");
  EXPECT_EQ(format_result_key({"spectra", "", 2, "", "hifi", "log_amplitude"}),
            "spectra__L02__hifi__log_amplitude");
  EXPECT_EQ(format_result_key({"rank_sigma", "", 5, "", "", "kv_plain"}),
            "rank_sigma__L05__kv_plain");
  EXPECT_EQ(format_result_key({"gradcam", "demo", -1, "", "", ""}), "gradcam__demo");
  EXPECT_EQ(format_result_key({"maps", "x", 123, "cls", "", "heads"}), "maps__x__L123__cls__heads");
}

TEST(ResultKey, ParsingGivesBackEveryField) {
  const std::vector<ResultKey> keys = {
      {"maps", "chelsea", 3, "q7-3", "", "heads"},
      {"maps", "a__b__L03", 0, "dist", "", "fused"},  // an image tag holding "__" and "L03"
      {"rollout", "img", -1, "q0-13", "", ""},
      {"anchors", "08-bag-00030", 1, "", "", "hard"},
      {"spectra", "", 0, "", "output", "radial"},
      {"rank_sigma", "", 12, "", "", "output_gated"},
      {"gradrollout", "photo__2", -1, "", "", ""},
      {"unknown", "some__image", -1, "", "", ""},  // an analysis without a declared shape
  };
  for (const ResultKey& k : keys) {
    const auto parsed = parse_result_key(format_result_key(k));
    ASSERT_TRUE(parsed.has_value()) << format_result_key(k);
    EXPECT_EQ(*parsed, k) << format_result_key(k);
  }
}

TEST(ResultKey, MalformedNamesDoNotParse) {
  for (const char* bad :
       {"", "maps__img__L03__heads", "maps__img__X03__q1-1__heads", "anchors__img__L3x__hard",
        "spectra__L01", "rank_sigma__01__kv", "rollout__cls", "maps____L01__q1-1__heads"})
    EXPECT_FALSE(parse_result_key(bad).has_value()) << bad;
}

TEST(ResultKey, GridQueryTags) {
  EXPECT_EQ(attnlab::analysis::grid_query_tag(7, 13), "q7-13");
  const auto cell = attnlab::analysis::parse_grid_query_tag("q7-13");
  ASSERT_TRUE(cell.has_value());
  EXPECT_EQ(cell->first, 7);
  EXPECT_EQ(cell->second, 13);
  for (const char* notacell : {"cls", "q7", "q-1-2", "qa-b", "q7-"})
    EXPECT_FALSE(attnlab::analysis::parse_grid_query_tag(notacell).has_value()) << notacell;
  EXPECT_EQ(attnlab::analysis::layer_tag(3), "L03");
  EXPECT_EQ(attnlab::analysis::layer_tag(123), "L123");
}

}  // namespace
