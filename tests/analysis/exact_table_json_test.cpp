// core/analysis/exact_table_json.h (issue 50): a table written as JSON text and read back
// keeps every cell's kind (an Int 1 stays an Int, a Real 1.0 a Real, a Text "1" a Text) and
// every real's bits (-0.0, subnormals, the largest double, NaN and the infinities, which JSON
// has no numbers for); malformed JSON is refused with std::invalid_argument.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis/exact_table_json.h"
#include "core/analysis/table.h"

namespace {

using attnlab::analysis::Cell;
using attnlab::analysis::exact_table_json;
using attnlab::analysis::Table;
using attnlab::analysis::table_from_exact_json;

uint64_t etj_bits(double d) {
  uint64_t b = 0;
  std::memcpy(&b, &d, sizeof d);
  return b;
}

const char* etj_kind(Cell::Kind k) {
  switch (k) {
    case Cell::Kind::Int:
      return "Int";
    case Cell::Kind::Real:
      return "Real";
    case Cell::Kind::Text:
      return "Text";
  }
  return "?";
}

Table etj_every_kind() {
  using lim = std::numeric_limits<double>;
  using ilim = std::numeric_limits<int64_t>;
  Table t;
  t.name = "per_image";
  t.caption = "every kind of cell, with \"quotes\", a tab\tand ünïcödé";
  t.columns = {"image", "int", "real", "text"};
  t.key_columns = 1;
  t.add_row({"a.png", 1, 1.0, "1"});
  t.add_row({"b.png", 0, -0.0, "nan"});
  t.add_row({"c.png", -7, 0.1, "inf"});
  t.add_row({"d.png", int64_t(ilim::max()), 1e-310, "-0.0"});  // 1e-310: subnormal
  t.add_row({"e.png", int64_t(ilim::min()), lim::max(), "1.0"});
  t.add_row({"f.png", int64_t(1) << 53, lim::quiet_NaN(), "ünïcödé ✓ 漢字 😀"});
  t.add_row({"g.png", -1, lim::infinity(), ""});
  t.add_row({"h.png", 2, -lim::infinity(), "{\"real\": \"nan\"}"});
  t.add_row({"ü/漢字 😀.png", 3, lim::denorm_min(), "line\nbreak"});
  t.add_row({"j.png", 4, -lim::max(), "\x01"});
  t.add_row({"k.png", 5, lim::min(), "0"});
  t.add_row({"l.png", 6, 1.0 / 3.0, "1e-310"});
  t.add_row({"m.png", 7, 0.0, "true"});
  t.add_row({"n.png", 8, 123456789012345680.0, "null"});
  return t;
}

// Every cell of `b` has the kind of `a`'s and the same integer, text or real bits.
void etj_expect_same_cells(const Table& a, const Table& b) {
  EXPECT_EQ(b.name, a.name);
  EXPECT_EQ(b.caption, a.caption);
  EXPECT_EQ(b.columns, a.columns);
  EXPECT_EQ(b.key_columns, a.key_columns);
  ASSERT_EQ(b.rows.size(), a.rows.size());
  for (size_t r = 0; r < a.rows.size(); ++r) {
    ASSERT_EQ(b.rows[r].size(), a.rows[r].size()) << "row " << r;
    for (size_t c = 0; c < a.rows[r].size(); ++c) {
      SCOPED_TRACE("row " + std::to_string(r) + " column " + a.columns[c]);
      const Cell& x = a.rows[r][c];
      const Cell& y = b.rows[r][c];
      ASSERT_EQ(etj_kind(y.kind), etj_kind(x.kind));
      switch (x.kind) {
        case Cell::Kind::Int:
          EXPECT_EQ(y.i, x.i);
          break;
        case Cell::Kind::Text:
          EXPECT_EQ(y.t, x.t);
          break;
        case Cell::Kind::Real:
          EXPECT_EQ(etj_bits(y.r), etj_bits(x.r)) << x.r << " read back as " << y.r;
          EXPECT_EQ(std::signbit(y.r), std::signbit(x.r));
          break;
      }
    }
  }
}

}  // namespace

TEST(ExactTableJson, TextRoundTripKeepsKindsAndBits) {
  const Table t = etj_every_kind();
  const nlohmann::json j = exact_table_json(t);
  // Through the text a manifest holds, compact and indented (analysis::write_json's form).
  for (const int indent : {-1, 2}) {
    SCOPED_TRACE(indent);
    const std::string text = j.dump(indent);
    etj_expect_same_cells(t, table_from_exact_json(nlohmann::json::parse(text)));
  }
  etj_expect_same_cells(t, table_from_exact_json(j));  // and the JSON value itself
}

TEST(ExactTableJson, NegativeZeroAndSubnormalsSurvive) {
  const Table back =
      table_from_exact_json(nlohmann::json::parse(exact_table_json(etj_every_kind()).dump()));
  EXPECT_TRUE(std::signbit(back.rows[1][2].r));
  EXPECT_EQ(back.rows[1][2].r, 0.0);
  EXPECT_EQ(std::fpclassify(back.rows[3][2].r), FP_SUBNORMAL);
  EXPECT_EQ(back.rows[3][2].r, 1e-310);
  EXPECT_EQ(back.rows[8][2].r, std::numeric_limits<double>::denorm_min());
  EXPECT_TRUE(std::isnan(back.rows[5][2].r));
  EXPECT_EQ(back.rows[6][2].r, std::numeric_limits<double>::infinity());
  EXPECT_EQ(back.rows[7][2].r, -std::numeric_limits<double>::infinity());
}

TEST(ExactTableJson, NonFiniteRealsAreSpelledOutAndKindsAreVisible) {
  const nlohmann::json j = exact_table_json(etj_every_kind());
  const nlohmann::json& rows = j.at("rows");
  EXPECT_EQ(rows[5][2], nlohmann::json({{"real", "nan"}}));
  EXPECT_EQ(rows[6][2], nlohmann::json({{"real", "inf"}}));
  EXPECT_EQ(rows[7][2], nlohmann::json({{"real", "-inf"}}));
  EXPECT_TRUE(rows[0][1].is_number_integer());
  EXPECT_TRUE(rows[0][2].is_number_float());
  EXPECT_TRUE(rows[0][3].is_string());
  EXPECT_EQ(rows[0][2].dump(), "1.0");  // a real in the text, so that it reads back as one
  EXPECT_EQ(rows[1][2].dump(), "-0.0");
}

TEST(ExactTableJson, EmptyTableRoundTrips) {
  Table t;
  t.name = "empty";
  t.columns = {"a", "b"};
  t.key_columns = 2;
  etj_expect_same_cells(t,
                        table_from_exact_json(nlohmann::json::parse(exact_table_json(t).dump())));
}

TEST(ExactTableJson, MalformedCellsAndRowsAreRefused) {
  const nlohmann::json good = exact_table_json(etj_every_kind());
  ASSERT_NO_THROW(table_from_exact_json(good));
  const auto refused = [&](const std::string& what,
                           const std::function<void(nlohmann::json&)>& edit) {
    SCOPED_TRACE(what);
    nlohmann::json j = good;
    edit(j);
    EXPECT_THROW(table_from_exact_json(j), std::invalid_argument);
  };
  refused("an object without \"real\"", [](nlohmann::json& j) {
    j["rows"][0][2] = {{"value", 1.0}};
  });
  refused("\"real\" spelled otherwise", [](nlohmann::json& j) {
    j["rows"][5][2] = {{"real", "NaN"}};
  });
  refused("\"real\" a number", [](nlohmann::json& j) { j["rows"][5][2] = {{"real", 1.0}}; });
  refused("a null cell", [](nlohmann::json& j) { j["rows"][0][1] = nullptr; });
  refused("a boolean cell", [](nlohmann::json& j) { j["rows"][0][1] = true; });
  refused("an array cell", [](nlohmann::json& j) { j["rows"][0][1] = {1, 2}; });
  refused("a row too short", [](nlohmann::json& j) { j["rows"][2].erase(3); });
  refused("a row too long", [](nlohmann::json& j) { j["rows"][2].push_back(1); });
  refused("an empty row", [](nlohmann::json& j) { j["rows"][0] = nlohmann::json::array(); });
  refused("no rows", [](nlohmann::json& j) { j.erase("rows"); });
  refused("no columns", [](nlohmann::json& j) { j.erase("columns"); });
  refused("no name", [](nlohmann::json& j) { j.erase("name"); });
  refused("not an object", [](nlohmann::json& j) { j = nlohmann::json::array(); });
  // The message says what it found.
  nlohmann::json j = good;
  j["rows"][0][2] = {{"value", 1.0}};
  try {
    table_from_exact_json(j);
    ADD_FAILURE() << "not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"value\""), std::string::npos) << e.what();
  }
}

// A row must be an array of cells: nlohmann iterates a number as a one-element range and an
// object over its values, so without a check `5` reads as the row [5] and {"x": 1, "y": 2}
// as [1, 2]; and a column name or table name of the wrong type must be refused as
// malformed (std::invalid_argument, as the header promises), not with nlohmann's type_error.
TEST(ExactTableJson, RowsThatAreNoArraysAndMistypedNamesAreRefused) {
  const auto table = [](nlohmann::json columns, nlohmann::json rows) {
    nlohmann::json j = nlohmann::json::object();
    j["name"] = "t";
    j["columns"] = std::move(columns);
    j["rows"] = std::move(rows);
    return j;
  };
  nlohmann::json number_row = table(nlohmann::json::array({"a"}), nlohmann::json::array({5}));
  ASSERT_TRUE(number_row["rows"][0].is_number());
  EXPECT_THROW(table_from_exact_json(number_row), std::invalid_argument) << number_row.dump();
  nlohmann::json object = nlohmann::json::object();
  object["x"] = 1;
  object["y"] = 2;
  nlohmann::json rows = nlohmann::json::array();
  rows.push_back(object);
  nlohmann::json object_row = table(nlohmann::json::array({"a", "b"}), rows);
  ASSERT_TRUE(object_row["rows"][0].is_object());
  EXPECT_THROW(table_from_exact_json(object_row), std::invalid_argument) << object_row.dump();
  nlohmann::json numeric_columns = table(nlohmann::json::array({1, 2}), nlohmann::json::array());
  EXPECT_THROW(table_from_exact_json(numeric_columns), std::invalid_argument);
  nlohmann::json numeric_name = table(nlohmann::json::array({"a"}), nlohmann::json::array());
  numeric_name["name"] = 3;
  EXPECT_THROW(table_from_exact_json(numeric_name), std::invalid_argument);
}

// A shard's running mean/std state (accumulator_json, what a manifest holds of a mean/std
// table since the shards stopped saving every image's rows): read back with every count,
// mean and squared deviation bit for bit, the keys' kinds kept; shards absorbed in order give
// the one accumulator's rows in its order and its means and stds up to rounding.
namespace {

using attnlab::analysis::accumulator_from_json;
using attnlab::analysis::accumulator_json;
using attnlab::analysis::TableAccumulator;

Table etj_image_rows(int image) {
  Table t;
  t.name = "per_head";
  t.caption = "one image's rows";
  t.columns = {"layer", "head", "value", "other"};
  t.key_columns = 2;
  for (int row = 0; row < 3; ++row) {
    // Image 3 adds a row the others lack; values with cancellation-prone magnitudes.
    t.add_row({int64_t(row), "h" + std::to_string(row), 1e8 + 0.1 * image * (row + 1),
               image % 2 ? -0.0 : 1e-300 * image});
    if (image == 3 && row == 0) t.add_row({int64_t(9), "late", 0.5, 2.0});
  }
  return t;
}

}  // namespace

TEST(ExactTableJson, AccumulatorStateRoundTripsBitForBit) {
  TableAccumulator acc;
  for (int image = 0; image < 7; ++image) acc.add(etj_image_rows(image));
  const TableAccumulator back =
      accumulator_from_json(nlohmann::json::parse(accumulator_json(acc).dump(2)));
  EXPECT_EQ(back.count(), acc.count());
  EXPECT_EQ(back.shape().columns, acc.shape().columns);
  EXPECT_EQ(back.shape().key_columns, acc.shape().key_columns);
  ASSERT_EQ(back.rows().size(), acc.rows().size());
  for (size_t r = 0; r < acc.rows().size(); ++r) {
    SCOPED_TRACE(r);
    const auto& x = acc.rows()[r];
    const auto& y = back.rows()[r];
    EXPECT_EQ(y.n, x.n);
    ASSERT_EQ(y.key.size(), x.key.size());
    for (size_t k = 0; k < x.key.size(); ++k) {
      EXPECT_EQ(etj_kind(y.key[k].kind), etj_kind(x.key[k].kind));
      EXPECT_EQ(y.key[k].str(), x.key[k].str());
    }
    ASSERT_EQ(y.mean.size(), x.mean.size());
    for (size_t v = 0; v < x.mean.size(); ++v) {
      EXPECT_EQ(etj_bits(y.mean[v]), etj_bits(x.mean[v]));
      EXPECT_EQ(etj_bits(y.m2[v]), etj_bits(x.m2[v]));
    }
  }
  etj_expect_same_cells(acc.result(), back.result());
}

TEST(ExactTableJson, AccumulatorShardsAbsorbedInOrderGiveTheOneRunsRows) {
  TableAccumulator one, merged;
  TableAccumulator shards[3];
  for (int image = 0; image < 9; ++image) {
    one.add(etj_image_rows(image));
    shards[image / 3].add(etj_image_rows(image));
  }
  for (const auto& s : shards)
    merged.absorb(accumulator_from_json(nlohmann::json::parse(accumulator_json(s).dump())));
  const Table a = one.result(), b = merged.result();
  EXPECT_EQ(b.columns, a.columns);
  ASSERT_EQ(b.rows.size(), a.rows.size());
  for (size_t r = 0; r < a.rows.size(); ++r)
    for (size_t c = 0; c < a.columns.size(); ++c) {
      SCOPED_TRACE("row " + std::to_string(r) + " " + a.columns[c]);
      const Cell& x = a.rows[r][c];
      const Cell& y = b.rows[r][c];
      ASSERT_EQ(etj_kind(y.kind), etj_kind(x.kind));
      if (x.kind != Cell::Kind::Real) {
        EXPECT_EQ(y.str(), x.str());  // keys and image counts: exact, in the same order
        continue;
      }
      // Up to rounding: 1e-15 relative, on the scale of the row's mean for a std (a std is
      // accurate to a fraction of its mean: here 0.3 beside 1e8).
      const std::string& name = a.columns[c];
      const std::string base = name.substr(0, name.rfind('_'));
      const size_t mean_column = a.column(base + "_mean");
      const double scale =
          std::max({std::fabs(x.r), std::fabs(y.r), std::fabs(a.rows[r][mean_column].r)});
      EXPECT_LE(std::fabs(x.r - y.r), 1e-15 * scale) << x.r << " vs " << y.r;
    }
}

TEST(ExactTableJson, MalformedAccumulatorStateIsRefused) {
  TableAccumulator acc;
  for (int image = 0; image < 2; ++image) acc.add(etj_image_rows(image));
  const nlohmann::json good = accumulator_json(acc);
  ASSERT_NO_THROW(accumulator_from_json(good));
  const auto refused = [&](const std::string& what,
                           const std::function<void(nlohmann::json&)>& edit) {
    SCOPED_TRACE(what);
    nlohmann::json j = good;
    edit(j);
    EXPECT_THROW(accumulator_from_json(j), std::invalid_argument);
  };
  refused("a mean too short", [](nlohmann::json& j) { j["rows"][0]["mean"].erase(0); });
  refused("a key too long", [](nlohmann::json& j) { j["rows"][0]["key"].push_back(1); });
  refused("a repeated key", [](nlohmann::json& j) { j["rows"][1]["key"] = j["rows"][0]["key"]; });
  refused("no images", [](nlohmann::json& j) { j["rows"][0]["n"] = 0; });
  refused("a text statistic", [](nlohmann::json& j) { j["rows"][0]["m2"][0] = "1"; });
  refused("no count", [](nlohmann::json& j) { j.erase("images"); });
  refused("no shape", [](nlohmann::json& j) { j.erase("shape"); });
}
