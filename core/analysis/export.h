// Writing analysis results: CSV and JSON for every Table, .npy for Arrays, a LaTeX booktabs
// table for rank summaries, and the JSON sidecar of settings. Every writer goes through
// io::write_file_atomic: a failure or an interruption never leaves a partial file under
// the final name. The readers exist so tests (and users' scripts) can check round trips.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/sha256.h"
#include "core/analysis/table.h"

namespace attnlab::analysis {

// RFC 4180 CSV: a header row of column names, then one line per row; text quoted when it
// holds a comma, quote or newline; reals with 9 significant digits (float32 exact).
std::string table_csv(const Table& t);
// One text field as those tables write it: quoted (quotes doubled) only when it holds a
// comma, quote or line break — for CSVs written row by row (attnlab embed's images.csv).
std::string csv_text(std::string_view s);
void write_table_csv(const std::string& path, const Table& t);

// {"name", "caption", "columns", "key_columns", "rows": [[...], ...]}; numbers as JSON
// numbers (non-finite reals as null), text as strings.
nlohmann::json table_json(const Table& t);
void write_table_json(const std::string& path, const Table& t);

// A booktabs tabular of the table (\toprule/\midrule/\bottomrule), `digits` decimals for
// reals, with the caption as a LaTeX comment and in \caption{} inside a table float.
std::string table_latex(const Table& t, int digits = 3);
void write_table_latex(const std::string& path, const Table& t, int digits = 3);

// float32 .npy in C order with the array's shape.
void write_array_npy(const std::string& path, const Array& a);

// Pretty-printed JSON (2-space indent), atomically.
void write_json(const std::string& path, const nlohmann::json& j);

// Readers for round-trip checks: CSV back into a Table (cells typed as Int when the text
// is an integer, Real when it parses as a number, Text otherwise; key_columns is 0) and
// JSON written by write_table_json back into a Table. Throw std::runtime_error naming the
// file and line on malformed input.
Table read_table_csv(const std::string& path);
Table read_table_json(const std::string& path);

}  // namespace attnlab::analysis
