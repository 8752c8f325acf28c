// Writers (CSV, JSON, LaTeX, .npy) and round-trip readers for analysis results.
//
// Every writer renders or validates first and only then calls io::write_file_atomic, so a
// table that cannot be written throws before any temporary exists, and a failure while
// writing never leaves a partial file under the final name.
//
// Non-finite reals: CSV writes nan / inf / -inf (and reads them back); JSON has no such
// values, so they become null, which reads back as NaN; LaTeX prints "--" for NaN and
// $\infty$ / $-\infty$. Numbers go through std::to_chars / from_chars (see table.cpp).
#include "core/analysis/export.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "core/io/file_bytes.h"
#include "core/io/io_error.h"
#include "core/io/npy.h"

namespace attnlab::analysis {

namespace {

void write_text(const std::string& path, const std::string& text) {
  io::write_file_atomic(path, text);
}

// Writers refuse ragged tables (rows can be pushed directly, bypassing add_row).
void check_rows(const Table& t, const char* who) {
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (t.rows[r].size() != t.columns.size())
      throw std::invalid_argument(std::string(who) + ": table '" + t.name + "' row " +
                                  std::to_string(r) + " has " + std::to_string(t.rows[r].size()) +
                                  " cells for " + std::to_string(t.columns.size()) + " columns");
}

// ---- CSV ------------------------------------------------------------------------------

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// [+-] d+
bool looks_int(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

// Strict decimal grammar: [+-] (d+ [. d*] | . d+) [(e|E) [+-] d+], or [+-] inf/infinity/nan
// in any case. Checked before from_chars so that its extras (hex, "nan(...)") stay text.
bool looks_real(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  std::string rest;
  for (char c : s.substr(i)) rest += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (rest == "inf" || rest == "infinity" || rest == "nan") return true;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && is_digit(s[i]);) ++i, ++frac_digits;
  if (int_digits + frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    if (++i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

// An unquoted CSV field as a cell: Int when it is an integer that fits int64, Real when it
// is a number, Text otherwise (including numbers out of double's range).
Cell classify(std::string_view s) {
  const char* first = s.data() + ((!s.empty() && s[0] == '+') ? 1 : 0);
  const char* last = s.data() + s.size();
  int64_t iv = 0;
  if (looks_int(s)) {
    auto ri = std::from_chars(first, last, iv);
    if (ri.ec == std::errc() && ri.ptr == last) return iv;  // else too big: try as a real
  }
  double dv = 0.0;
  if (looks_real(s)) {
    auto rd = std::from_chars(first, last, dv);
    if (rd.ec == std::errc() && rd.ptr == last) return dv;
  }
  return std::string(s);
}

bool needs_quotes(std::string_view s) {
  return s.find_first_of(",\"\r\n") != s.npos;
}

std::string csv_quote(std::string_view s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + '"';
}

// Text is quoted whenever an unquoted field would read back as something else: special
// characters, the empty string (a bare empty line is ambiguous), or text that looks like
// a number. The reader treats every quoted field as text.
std::string csv_field(const Cell& c) {
  if (c.kind != Cell::Kind::Text) return c.str();
  if (c.t.empty() || needs_quotes(c.t) || classify(c.t).kind != Cell::Kind::Text)
    return csv_quote(c.t);
  return c.t;
}

[[noreturn]] void csv_error(const std::string& path, size_t line, const std::string& what) {
  throw std::runtime_error("read_table_csv: " + path + ":" + std::to_string(line) + ": " + what);
}

// ---- LaTeX ----------------------------------------------------------------------------

std::string latex_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '\0' && std::strchr("&%$#_{}", c)) {
      out += '\\';
      out += c;
    } else if (c == '\\') {
      out += "\\textbackslash{}";
    } else if (c == '~') {
      out += "\\textasciitilde{}";
    } else if (c == '^') {
      out += "\\textasciicircum{}";
    } else {
      out += c == '\n' || c == '\r' ? ' ' : c;  // a newline would end a tabular row's text
    }
  }
  return out;
}

std::string latex_cell(const Cell& c, int digits) {
  if (c.kind == Cell::Kind::Int) return std::to_string(c.i);
  if (c.kind == Cell::Kind::Text) return latex_escape(c.t);
  if (std::isnan(c.r)) return "--";
  if (std::isinf(c.r)) return c.r > 0 ? "$\\infty$" : "$-\\infty$";
  std::array<char, 400> buf{};  // fixed notation of 1e308 with 17 decimals fits
  auto res =
      std::to_chars(buf.data(), buf.data() + buf.size(), c.r, std::chars_format::fixed, digits);
  std::string s(buf.data(), res.ptr);
  // -0.0004 at 3 digits prints "-0.000": a sign on a printed zero only confuses.
  if (s[0] == '-' && s.find_first_not_of("-0.") == s.npos) s.erase(0, 1);
  return s;
}

}  // namespace

std::string table_csv(const Table& t) {
  check_rows(t, "table_csv");
  // RFC 4180 ends every record with CRLF; the reader accepts LF too.
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c)
    out += (c ? "," : "") + (t.columns[c].empty() || needs_quotes(t.columns[c])
                                 ? csv_quote(t.columns[c])
                                 : t.columns[c]);
  out += "\r\n";
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csv_field(row[c]);
    out += "\r\n";
  }
  return out;
}

void write_table_csv(const std::string& path, const Table& t) {
  write_text(path, table_csv(t));
}

nlohmann::json table_json(const Table& t) {
  check_rows(t, "table_json");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json r = nlohmann::json::array();
    for (const Cell& c : row) {
      if (c.kind == Cell::Kind::Int)
        r.push_back(c.i);
      else if (c.kind == Cell::Kind::Text)
        r.push_back(c.t);
      else if (std::isfinite(c.r))
        r.push_back(c.r);
      else
        r.push_back(nullptr);
    }
    rows.push_back(std::move(r));
  }
  return {{"name", t.name},
          {"caption", t.caption},
          {"columns", t.columns},
          {"key_columns", t.key_columns},
          {"rows", std::move(rows)}};
}

void write_table_json(const std::string& path, const Table& t) {
  write_json(path, table_json(t));
}

std::string table_latex(const Table& t, int digits) {
  check_rows(t, "table_latex");
  if (t.columns.empty())
    throw std::invalid_argument("table_latex: table '" + t.name + "' has no columns");
  // A guard against typos: 17 decimals already exceed what a float32 statistic holds.
  if (digits < 0 || digits > 17)
    throw std::invalid_argument("table_latex: digits must be in [0, 17], got " +
                                std::to_string(digits));
  std::string comment = t.caption, label;
  for (char& ch : comment)
    if (ch == '\n' || ch == '\r') ch = ' ';  // keep the whole caption inside the comment
  for (char ch : t.name)  // \label accepts letters, digits and a few marks, not all text
    label += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' ? ch : '-';
  std::string spec;
  for (size_t c = 0; c < t.columns.size(); ++c) spec += c < t.key_columns ? 'l' : 'r';
  std::string out = "% " + comment + "\n\\begin{table}[htbp]\n  \\centering\n  \\caption{" +
                    latex_escape(t.caption) + "}\n  \\label{tab:" + label +
                    "}\n  \\begin{tabular}{" + spec + "}\n    \\toprule\n    ";
  for (size_t c = 0; c < t.columns.size(); ++c)
    out += (c ? " & " : "") + latex_escape(t.columns[c]);
  out += " \\\\\n    \\midrule\n";
  for (const auto& row : t.rows) {
    out += "    ";
    for (size_t c = 0; c < row.size(); ++c) out += (c ? " & " : "") + latex_cell(row[c], digits);
    out += " \\\\\n";
  }
  return out + "    \\bottomrule\n  \\end{tabular}\n\\end{table}\n";
}

void write_table_latex(const std::string& path, const Table& t, int digits) {
  write_text(path, table_latex(t, digits));
}

void write_array_npy(const std::string& path, const Array& a) {
  const std::string where = "write_array_npy: array '" + a.name + "'";
  if (a.axes.size() != a.shape.size())
    throw std::invalid_argument(where + " has " + std::to_string(a.shape.size()) +
                                " dimensions but " + std::to_string(a.axes.size()) + " axis names");
  for (int64_t d : a.shape)
    if (d < 0) throw std::invalid_argument(where + " has a negative dimension");
  if (a.numel() != static_cast<int64_t>(a.data.size()))
    throw std::invalid_argument(where + ": shape holds " + std::to_string(a.numel()) +
                                " values, data has " + std::to_string(a.data.size()));
  // .npy stores '<f4': the in-memory floats of a little-endian host, byte for byte.
  io::RawTensor raw;
  raw.dtype = io::DType::F32;
  raw.shape = a.shape;
  raw.bytes.resize(a.data.size() * sizeof(float));
  if (!a.data.empty()) std::memcpy(raw.bytes.data(), a.data.data(), raw.bytes.size());
  io::write_npy(path, raw);  // atomic, through io::write_file_atomic
}

void write_json(const std::string& path, const nlohmann::json& j) {
  // Dump first: invalid UTF-8 in a string throws here, before any file exists.
  write_text(path, j.dump(2) + "\n");
}

Table read_table_csv(const std::string& path) {
  const std::vector<uint8_t> bytes = io::read_file_bytes(path);
  const std::string_view s(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  struct Field {
    std::string text;
    bool quoted = false;
  };
  std::vector<std::pair<size_t, std::vector<Field>>> records;  // (first line, fields)
  size_t i = 0, line = 1;
  while (i < s.size()) {
    std::vector<Field> fields;
    const size_t first_line = line;
    for (bool more = true; more;) {
      Field f;
      if (i < s.size() && s[i] == '"') {
        f.quoted = true;
        const size_t open_line = line;
        for (++i;; ++i) {
          if (i >= s.size()) csv_error(path, open_line, "quoted field is never closed");
          if (s[i] == '"' && (i + 1 >= s.size() || s[i + 1] != '"')) break;
          if (s[i] == '"') ++i;  // "" is one quote
          if (s[i] == '\n') ++line;
          f.text += s[i];
        }
        ++i;
        if (i < s.size() && s[i] != ',' && s[i] != '\r' && s[i] != '\n')
          csv_error(path, line, "unexpected character after a closing quote");
      } else {
        for (; i < s.size() && s[i] != ',' && s[i] != '\r' && s[i] != '\n'; ++i) {
          if (s[i] == '"') csv_error(path, line, "quote inside an unquoted field");
          f.text += s[i];
        }
      }
      fields.push_back(std::move(f));
      more = i < s.size() && s[i] == ',';
      if (more) ++i;
    }
    if (i < s.size() && s[i] == '\r' && (i + 1 >= s.size() || s[i + 1] != '\n'))
      csv_error(path, line, "carriage return not followed by a newline");
    if (i < s.size()) {  // past the record's end: LF or CRLF
      i += s[i] == '\r' ? 2 : 1;
      ++line;
    }
    records.emplace_back(first_line, std::move(fields));
  }
  if (records.empty()) csv_error(path, 1, "empty file: no header row");

  Table t;
  t.name = std::filesystem::path(path).stem().string();
  for (Field& f : records[0].second) t.columns.push_back(std::move(f.text));
  for (size_t r = 1; r < records.size(); ++r) {
    const auto& [at, fields] = records[r];
    if (fields.size() != t.columns.size())
      csv_error(path, at,
                std::to_string(fields.size()) + " fields, the header has " +
                    std::to_string(t.columns.size()));
    std::vector<Cell> row;
    for (const Field& f : fields) row.push_back(f.quoted ? Cell(f.text) : classify(f.text));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table read_table_json(const std::string& path) {
  const std::vector<uint8_t> bytes = io::read_file_bytes(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() names the line and column.
    throw std::runtime_error("read_table_json: " + path + ": " + e.what());
  }
  auto fail = [&](const std::string& what) {
    throw std::runtime_error("read_table_json: " + path + ": " + what);
  };
  if (!j.is_object()) fail("top level is not an object");
  for (const char* key : {"name", "caption", "columns", "key_columns", "rows"})
    if (!j.contains(key)) fail(std::string("missing \"") + key + "\"");
  if (!j["name"].is_string() || !j["caption"].is_string()) fail("name/caption are not strings");
  if (!j["columns"].is_array() || !j["rows"].is_array()) fail("columns/rows are not arrays");
  if (!j["key_columns"].is_number_unsigned()) fail("key_columns is not a non-negative integer");
  Table t;
  t.name = j["name"].get<std::string>();
  t.caption = j["caption"].get<std::string>();
  for (const auto& c : j["columns"]) {
    if (!c.is_string()) fail("a column name is not a string");
    t.columns.push_back(c.get<std::string>());
  }
  t.key_columns = j["key_columns"].get<size_t>();
  if (t.key_columns > t.columns.size()) fail("key_columns exceeds the number of columns");
  const auto& rows = j["rows"];
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string at = "row " + std::to_string(r);
    if (!rows[r].is_array() || rows[r].size() != t.columns.size())
      fail(at + " is not an array of " + std::to_string(t.columns.size()) + " cells");
    std::vector<Cell> row;
    for (const auto& v : rows[r]) {
      if (v.is_number_unsigned()) {
        if (v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
          fail(at + ": integer beyond int64");
        row.emplace_back(v.get<int64_t>());
      } else if (v.is_number_integer()) {
        row.emplace_back(v.get<int64_t>());
      } else if (v.is_number_float()) {
        row.emplace_back(v.get<double>());
      } else if (v.is_null()) {
        row.emplace_back(std::numeric_limits<double>::quiet_NaN());  // written for non-finite
      } else if (v.is_string()) {
        row.emplace_back(v.get<std::string>());
      } else {
        fail(at + ": a cell is neither a number, null nor a string");
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string csv_text(std::string_view s) {
  return needs_quotes(s) ? csv_quote(s) : std::string(s);
}

}  // namespace attnlab::analysis
