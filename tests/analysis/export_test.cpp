// Tests for core/analysis/export.h: CSV / JSON / .npy round trips to the same numbers,
// non-finite values, malformed input, the LaTeX booktabs layout and escapes, atomic
// writes that leave nothing behind when interrupted.
#include "core/analysis/export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>

#include "core/io/file_bytes.h"
#include "core/io/io_error.h"
#include "core/io/npy.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace attnlab::analysis {
namespace {

namespace fs = std::filesystem;
using attnlab::testing::unique_temp_path;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using attnlab::testing::TempDir;

using testing::read_text;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Every kind of cell an export must carry: ints at the int64 limits, float32 values
// stored as double (what the analyses produce), text that needs quoting or looks numeric.
Table mixed_table() {
  Table t;
  t.name = "mixed";
  t.caption = "cells of every kind, one per column";
  t.columns = {"id", "label, \"quoted\"", "value", "count"};
  t.key_columns = 2;
  const std::vector<std::string> texts = {"plain", "a,b", "say \"hi\"", "two\nlines", "crlf\r\nend",
                                          "",      "42",  "nan",        " padded ",   "-1.5e3",
                                          "1,5",   "\"",  "λ ünïcode"};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1000.0f, 1000.0f);
  const int64_t ints[] = {0, -1, std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::min(), 123456789012345};
  for (size_t r = 0; r < 40; ++r) {
    float f = u(rng) * std::pow(10.0f, static_cast<float>(static_cast<int>(r % 13) - 6));
    if (r == 1) f = std::numeric_limits<float>::denorm_min();
    if (r == 2) f = -0.0f;
    if (r == 3) f = std::numeric_limits<float>::max();
    if (r == 4) f = 2.0f;
    t.add_row(
        {static_cast<int64_t>(r), texts[r % texts.size()], static_cast<double>(f), ints[r % 5]});
  }
  return t;
}

bool same_float(double a, double b) {
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  return std::memcmp(&fa, &fb, sizeof fa) == 0;
}

// ---- CSV ------------------------------------------------------------------------------

TEST(ExportCsv, ExactText) {
  Table t;
  t.columns = {"layer", "head name", "rank,eff"};
  t.add_row({0, "h,0", 1.5});
  t.add_row({-3, "say \"x\"", 2.0});
  t.add_row({7, "12", kNaN});
  EXPECT_EQ(table_csv(t),
            "layer,head name,\"rank,eff\"\r\n"
            "0,\"h,0\",1.5\r\n"
            "-3,\"say \"\"x\"\"\",2.0\r\n"
            "7,\"12\",nan\r\n");
}

TEST(ExportCsv, RoundTripsTheSameNumbersAndText) {
  TempDir dir("csv");
  const Table t = mixed_table();
  write_table_csv(dir.file("mixed.csv"), t);
  const Table back = read_table_csv(dir.file("mixed.csv"));
  EXPECT_EQ(back.name, "mixed");
  EXPECT_EQ(back.key_columns, 0u);  // CSV does not record it
  EXPECT_EQ(back.columns, t.columns);
  ASSERT_EQ(back.rows.size(), t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    ASSERT_EQ(back.rows[r].size(), t.rows[r].size());
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const Cell &a = t.rows[r][c], &b = back.rows[r][c];
      EXPECT_EQ(b.kind, a.kind) << "row " << r << " col " << c;
      if (a.kind == Cell::Kind::Int) {
        EXPECT_EQ(b.i, a.i);
      } else if (a.kind == Cell::Kind::Text) {
        EXPECT_EQ(b.t, a.t);
      } else {
        EXPECT_TRUE(same_float(b.r, a.r)) << "row " << r << ": " << a.r << " came back " << b.r;
      }
    }
  }
}

TEST(ExportCsv, NonFiniteRealsAreNanInfMinusInf) {
  TempDir dir("csv_nonfinite");
  Table t;
  t.columns = {"v"};
  for (double v : {kNaN, kInf, -kInf}) t.add_row({v});
  EXPECT_EQ(table_csv(t), "v\r\nnan\r\ninf\r\n-inf\r\n");
  write_table_csv(dir.file("nf.csv"), t);
  const Table back = read_table_csv(dir.file("nf.csv"));
  ASSERT_EQ(back.rows.size(), 3u);
  for (const auto& row : back.rows) EXPECT_EQ(row[0].kind, Cell::Kind::Real);
  EXPECT_TRUE(std::isnan(back.rows[0][0].r));
  EXPECT_EQ(back.rows[1][0].r, kInf);
  EXPECT_EQ(back.rows[2][0].r, -kInf);
}

TEST(ExportCsv, ReaderTypesUnquotedFieldsAndAcceptsLf) {
  TempDir dir("csv_types");
  std::ofstream(dir.file("t.csv"), std::ios::binary)
      << "a,b,c,d,e,f\n+5,-0.25,1e3,0x10,99999999999999999999,\"7\"\n,1.,.5,1e,abc,-inf";
  const Table t = read_table_csv(dir.file("t.csv"));
  ASSERT_EQ(t.rows.size(), 2u);
  const auto& r0 = t.rows[0];
  EXPECT_EQ(r0[0].kind, Cell::Kind::Int);
  EXPECT_EQ(r0[0].i, 5);
  EXPECT_EQ(r0[1].kind, Cell::Kind::Real);
  EXPECT_EQ(r0[1].r, -0.25);
  EXPECT_EQ(r0[2].r, 1000.0);
  EXPECT_EQ(r0[3].kind, Cell::Kind::Text);  // no hex numbers
  EXPECT_EQ(r0[4].kind, Cell::Kind::Real);  // beyond int64: still a number
  EXPECT_EQ(r0[4].r, 1e20);
  EXPECT_EQ(r0[5].kind, Cell::Kind::Text);  // quoted is always text
  const auto& r1 = t.rows[1];
  EXPECT_EQ(r1[0].kind, Cell::Kind::Text);
  EXPECT_EQ(r1[0].t, "");
  EXPECT_EQ(r1[1].r, 1.0);
  EXPECT_EQ(r1[2].r, 0.5);
  EXPECT_EQ(r1[3].kind, Cell::Kind::Text);
  EXPECT_EQ(r1[4].t, "abc");
  EXPECT_EQ(r1[5].r, -kInf);
}

void expect_csv_error(const std::string& content, const std::string& where) {
  TempDir dir("csv_bad");
  const std::string path = dir.file("bad.csv");
  std::ofstream(path, std::ios::binary) << content;
  try {
    (void)read_table_csv(path);
    ADD_FAILURE() << "accepted: " << content;
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), path + ":" + where)) << e.what();
  }
}

TEST(ExportCsv, MalformedInputNamesFileAndLine) {
  expect_csv_error("", "1: empty file");
  expect_csv_error("a,b\r\n1,2\r\n3\r\n", "3: 1 fields");
  expect_csv_error("a\n\"open\nstill open\n", "2: quoted field is never closed");
  expect_csv_error("a\n1\n\"x\"y\n", "3: unexpected character after a closing quote");
  expect_csv_error("a,b\n1,x\"y\n", "2: quote inside an unquoted field");
  expect_csv_error("a\r1\n", "1: carriage return");
  // A multi-line quoted field moves the line count on.
  expect_csv_error("a,b\n\"1\n2\",3\n4\n", "4: 1 fields");
}

TEST(ExportCsv, RaggedTableIsRefused) {
  Table t;
  t.columns = {"a", "b"};
  t.rows.push_back({1});
  EXPECT_THROW(table_csv(t), std::invalid_argument);
}

// ---- JSON -----------------------------------------------------------------------------

TEST(ExportJson, RoundTripsExactly) {
  TempDir dir("json");
  Table t = mixed_table();
  t.rows[5][2] = Cell(1.0 / 3.0);  // a full double: JSON keeps all 17 digits
  write_table_json(dir.file("mixed.json"), t);
  const Table back = read_table_json(dir.file("mixed.json"));
  EXPECT_EQ(back.name, t.name);
  EXPECT_EQ(back.caption, t.caption);
  EXPECT_EQ(back.columns, t.columns);
  EXPECT_EQ(back.key_columns, t.key_columns);
  ASSERT_EQ(back.rows.size(), t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r)
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const Cell &a = t.rows[r][c], &b = back.rows[r][c];
      ASSERT_EQ(b.kind, a.kind) << "row " << r << " col " << c;
      EXPECT_EQ(b.i, a.i);
      EXPECT_EQ(b.t, a.t);
      EXPECT_EQ(std::memcmp(&a.r, &b.r, sizeof a.r), 0) << a.r << " came back " << b.r;
    }
}

TEST(ExportJson, NonFiniteRealsAreNullAndReadBackAsNaN) {
  TempDir dir("json_nonfinite");
  Table t;
  t.columns = {"v"};
  for (double v : {kNaN, kInf, -kInf, 2.5}) t.add_row({v});
  const nlohmann::json j = table_json(t);
  EXPECT_TRUE(j["rows"][0][0].is_null());
  EXPECT_TRUE(j["rows"][1][0].is_null());
  EXPECT_TRUE(j["rows"][2][0].is_null());
  EXPECT_EQ(j["rows"][3][0].get<double>(), 2.5);
  write_table_json(dir.file("nf.json"), t);
  EXPECT_TRUE(contains(read_text(dir.file("nf.json")), "null"));
  const Table back = read_table_json(dir.file("nf.json"));
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(back.rows[r][0].kind, Cell::Kind::Real);
    EXPECT_TRUE(std::isnan(back.rows[r][0].r));  // JSON cannot tell NaN from ±inf
  }
  EXPECT_EQ(back.rows[3][0].r, 2.5);
}

TEST(ExportJson, WriteJsonIsPrettyAndParsesBack) {
  TempDir dir("json_pretty");
  const nlohmann::json j = {{"model", "ravlt_t"}, {"tol", 1e-6}, {"layers", {0, 1}}};
  write_json(dir.file("s.json"), j);
  const std::string text = read_text(dir.file("s.json"));
  EXPECT_EQ(text, j.dump(2) + "\n");
  EXPECT_TRUE(contains(text, "\n  \"model\": \"ravlt_t\""));
  EXPECT_EQ(nlohmann::json::parse(text), j);
}

TEST(ExportJson, MalformedInputNamesFile) {
  TempDir dir("json_bad");
  const std::string path = dir.file("bad.json");
  std::ofstream(path) << "{\"name\": \"x\",\n \"rows\": [1, }";
  try {
    (void)read_table_json(path);
    ADD_FAILURE() << "accepted malformed JSON";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
    EXPECT_TRUE(contains(e.what(), "line 2")) << e.what();
  }
  std::ofstream(path, std::ios::trunc)
      << R"({"name":"x","caption":"","columns":["a"],"key_columns":0,"rows":[[1],[1,2]]})";
  try {
    (void)read_table_json(path);
    ADD_FAILURE() << "accepted a ragged row";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "row 1")) << e.what();
  }
}

// ---- .npy -----------------------------------------------------------------------------

TEST(ExportNpy, RoundTripsThroughReadNpy) {
  TempDir dir("npy");
  Array a;
  a.name = "maps";
  a.shape = {2, 3, 4};
  a.axes = {"head", "y", "x"};
  for (int k = 0; k < 24; ++k) a.data.push_back(std::ldexp(static_cast<float>(k) - 7.3f, k - 12));
  a.data[5] = std::numeric_limits<float>::quiet_NaN();
  a.data[6] = -0.0f;
  write_array_npy(dir.file("maps.npy"), a);
  const io::RawTensor back = io::read_npy(dir.file("maps.npy"));
  EXPECT_EQ(back.dtype, io::DType::F32);
  EXPECT_EQ(back.shape, a.shape);
  ASSERT_EQ(back.bytes.size(), a.data.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(back.bytes.data(), a.data.data(), back.bytes.size()), 0);
}

TEST(ExportNpy, InconsistentArraysThrowBeforeWriting) {
  TempDir dir("npy_bad");
  Array a;
  a.shape = {2, 2};
  a.axes = {"y", "x"};
  a.data = {1, 2, 3};
  EXPECT_THROW(write_array_npy(dir.file("a.npy"), a), std::invalid_argument);
  a.data.push_back(4);
  a.axes = {"x"};
  EXPECT_THROW(write_array_npy(dir.file("a.npy"), a), std::invalid_argument);
  EXPECT_TRUE(dir.list().empty());
}

// ---- Atomic writes ------------------------------------------------------------------

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

TEST(ExportAtomic, FillThatThrowsMidwayLeavesNoFile) {
  TempDir dir("atomic");
  const std::string path = dir.file("out.csv");
  EXPECT_THROW(io::write_file_atomic(path,
                                     [](const io::ByteSink& sink) {
                                       const std::string half(100000, 'x');
                                       sink(half.data(), half.size());
                                       throw Interrupted();
                                     }),
               Interrupted);
  EXPECT_EQ(dir.list(), std::vector<std::string>{});  // no final file, no temporary
}

TEST(ExportAtomic, FillThatThrowsKeepsThePreviousFile) {
  TempDir dir("atomic_keep");
  const std::string path = dir.file("t.csv");
  Table t;
  t.columns = {"v"};
  t.add_row({1});
  write_table_csv(path, t);
  const std::string before = read_text(path);
  EXPECT_THROW(io::write_file_atomic(path,
                                     [](const io::ByteSink& sink) {
                                       sink("partial", 7);
                                       throw Interrupted();
                                     }),
               Interrupted);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"t.csv"});
  EXPECT_EQ(read_text(path), before);
}

TEST(ExportAtomic, MissingDirectoryThrowsAndLeavesNothing) {
  TempDir dir("atomic_missing");
  Table t;
  t.columns = {"v"};
  t.add_row({2.5});
  const std::string path = dir.file("no_such_dir/t.csv");
  EXPECT_THROW(write_table_csv(path, t), io::IoError);
  EXPECT_THROW(write_table_json(dir.file("no_such_dir/t.json"), t), io::IoError);
  EXPECT_THROW(write_table_latex(dir.file("no_such_dir/t.tex"), t), io::IoError);
  Array a;
  a.shape = {1};
  a.axes = {"x"};
  a.data = {1.0f};
  EXPECT_THROW(write_array_npy(dir.file("no_such_dir/a.npy"), a), io::IoError);
  EXPECT_EQ(dir.list(), std::vector<std::string>{});
}

TEST(ExportAtomic, UnwritableTableThrowsBeforeAnyFile) {
  TempDir dir("atomic_invalid");
  Table ragged;
  ragged.columns = {"a", "b"};
  ragged.rows.push_back({1, 2, 3});
  EXPECT_THROW(write_table_csv(dir.file("r.csv"), ragged), std::invalid_argument);
  EXPECT_THROW(write_table_json(dir.file("r.json"), ragged), std::invalid_argument);
  EXPECT_THROW(write_table_latex(dir.file("r.tex"), ragged), std::invalid_argument);
  // Invalid UTF-8 cannot be JSON: refused while rendering, before the file is opened.
  EXPECT_THROW(write_json(dir.file("bad.json"), nlohmann::json{{"k", "\xff"}}),
               nlohmann::json::exception);
  EXPECT_EQ(dir.list(), std::vector<std::string>{});
}

// ---- LaTeX ----------------------------------------------------------------------------

Table latex_table() {
  Table t;
  t.name = "rank_heads";
  t.caption = "Rank of the KV buffer_per head & 50% #1";
  t.columns = {"model_name", "layer", "rank%", "a&b", "#h"};
  t.key_columns = 2;
  t.add_row({"ravlt_t", 0, 3.14159, -0.0004, 12});
  t.add_row({"50% & #2_x", 11, kNaN, 2.0, -kInf});
  return t;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(s.substr(start, nl - start));
  return out;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a);
}

TEST(ExportLatex, BooktabsStructure) {
  const std::vector<std::string> lines = lines_of(table_latex(latex_table()));
  std::vector<std::string> body;
  for (const auto& l : lines) body.push_back(trim(l));
  const std::vector<std::string> expected = {
      "% Rank of the KV buffer_per head & 50% #1",
      "\\begin{table}[htbp]",
      "\\centering",
      "\\caption{Rank of the KV buffer\\_per head \\& 50\\% \\#1}",
      "\\label{tab:rank_heads}",
      "\\begin{tabular}{llrrr}",
      "\\toprule",
      "model\\_name & layer & rank\\% & a\\&b & \\#h \\\\",
      "\\midrule",
      "ravlt\\_t & 0 & 3.142 & 0.000 & 12 \\\\",
      "50\\% \\& \\#2\\_x & 11 & -- & 2.000 & $-\\infty$ \\\\",
      "\\bottomrule",
      "\\end{tabular}",
      "\\end{table}"};
  EXPECT_EQ(body, expected);
}

TEST(ExportLatex, NoUnescapedSpecialCharacters) {
  const std::vector<std::string> lines = lines_of(table_latex(latex_table()));
  for (size_t k = 1; k < lines.size(); ++k) {  // line 0 is the comment
    std::string l = lines[k];
    if (contains(l, "\\label{")) continue;  // a label is a name, not typeset text
    for (size_t p; (p = l.find(" & ")) != std::string::npos;) l.erase(p, 3);  // separators
    for (size_t p = 0; p < l.size(); ++p)
      if (std::strchr("_%&#", l[p])) {
        EXPECT_TRUE(p > 0 && l[p - 1] == '\\') << "unescaped '" << l[p] << "' in: " << lines[k];
      }
  }
}

TEST(ExportLatex, OtherSpecialCharacters) {
  Table t;
  t.columns = {"text"};
  t.add_row({"a\\b~c^d{e}$f\ng"});
  EXPECT_TRUE(contains(table_latex(t),
                       "    a\\textbackslash{}b\\textasciitilde{}c"
                       "\\textasciicircum{}d\\{e\\}\\$f g \\\\\n"))
      << table_latex(t);
}

TEST(ExportLatex, Digits) {
  Table t;
  t.columns = {"v"};
  t.add_row({3.14159265});
  t.add_row({-2.5});
  t.add_row({1234567.0});
  t.add_row({7});
  auto cells = [&](int digits) {
    std::vector<std::string> out;
    for (const auto& l : lines_of(table_latex(t, digits)))
      if (contains(l, " \\\\") && !contains(l, "v \\\\")) out.push_back(trim(l));
    return out;
  };
  EXPECT_EQ(cells(3),
            (std::vector<std::string>{"3.142 \\\\", "-2.500 \\\\", "1234567.000 \\\\", "7 \\\\"}));
  EXPECT_EQ(cells(0), (std::vector<std::string>{"3 \\\\", "-2 \\\\", "1234567 \\\\", "7 \\\\"}));
  EXPECT_EQ(cells(6)[0], "3.141593 \\\\");
  EXPECT_THROW(table_latex(t, -1), std::invalid_argument);
  EXPECT_THROW(table_latex(t, 18), std::invalid_argument);
  EXPECT_THROW(table_latex(Table{}), std::invalid_argument);  // a tabular needs a column
}

TEST(ExportLatex, FileHoldsTheSameText) {
  TempDir dir("latex");
  write_table_latex(dir.file("t.tex"), latex_table(), 2);
  EXPECT_EQ(read_text(dir.file("t.tex")), table_latex(latex_table(), 2));
}

}  // namespace
}  // namespace attnlab::analysis
