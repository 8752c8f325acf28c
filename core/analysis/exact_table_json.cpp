// Cells: an integer as a JSON integer, a finite real as a JSON real (nlohmann writes the
// shortest round-trip form and always with a '.' or exponent, so it reads back as a real),
// text as a string, a non-finite real as {"real": "nan" | "inf" | "-inf"}.
#include "core/analysis/exact_table_json.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnlab::analysis {
namespace {

nlohmann::json cell_json(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::Int:
      return c.i;
    case Cell::Kind::Text:
      return c.t;
    case Cell::Kind::Real:
      break;
  }
  if (std::isfinite(c.r)) return c.r;
  return {{"real", std::isnan(c.r) ? "nan" : c.r > 0 ? "inf" : "-inf"}};
}

Cell json_cell(const nlohmann::json& j) {
  if (j.is_number_integer()) return Cell(j.get<int64_t>());
  if (j.is_number_float()) return Cell(j.get<double>());
  if (j.is_string()) return Cell(j.get<std::string>());
  if (j.is_object() && j.contains("real") && j["real"].is_string()) {
    const std::string v = j["real"].get<std::string>();
    if (v == "nan") return Cell(std::numeric_limits<double>::quiet_NaN());
    if (v == "inf") return Cell(std::numeric_limits<double>::infinity());
    if (v == "-inf") return Cell(-std::numeric_limits<double>::infinity());
  }
  throw std::invalid_argument("a table cell that is no number or text: " + j.dump());
}

}  // namespace

nlohmann::json exact_table_json(const Table& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json r = nlohmann::json::array();
    for (const auto& c : row) r.push_back(cell_json(c));
    rows.push_back(std::move(r));
  }
  return {{"name", t.name},
          {"caption", t.caption},
          {"columns", t.columns},
          {"key_columns", t.key_columns},
          {"rows", std::move(rows)}};
}

Table table_from_exact_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j.contains("columns") || !j.contains("rows"))
    throw std::invalid_argument("a saved table without name, columns and rows");
  if (!j.at("name").is_string() || !j.at("columns").is_array() || !j.at("rows").is_array())
    throw std::invalid_argument(
        "a saved table whose name is no text or whose columns or rows "
        "are no lists");
  try {
    Table t;
    t.name = j.at("name").get<std::string>();
    t.caption = j.value("caption", "");
    t.columns = j.at("columns").get<std::vector<std::string>>();
    t.key_columns = j.value("key_columns", size_t{0});
    for (const auto& r : j.at("rows")) {
      if (!r.is_array())
        throw std::invalid_argument("table '" + t.name + "': a row that is no list");
      std::vector<Cell> row;
      for (const auto& c : r) row.push_back(json_cell(c));
      t.add_row(std::move(row));  // checks the width
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("a malformed saved table: ") + e.what());
  }
}

namespace {

nlohmann::json doubles_json(const std::vector<double>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (double x : v) out.push_back(cell_json(Cell(x)));
  return out;
}

std::vector<double> json_doubles(const nlohmann::json& j) {
  std::vector<double> out;
  for (const auto& c : j) {
    const Cell cell = json_cell(c);
    if (cell.kind == Cell::Kind::Text) throw std::invalid_argument("a saved statistic is text");
    out.push_back(cell.number());
  }
  return out;
}

}  // namespace

nlohmann::json accumulator_json(const TableAccumulator& acc) {
  Table shape = acc.shape();
  shape.rows.clear();
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : acc.rows()) {
    nlohmann::json key = nlohmann::json::array();
    for (const auto& c : r.key) key.push_back(cell_json(c));
    rows.push_back(
        {{"key", key}, {"n", r.n}, {"mean", doubles_json(r.mean)}, {"m2", doubles_json(r.m2)}});
  }
  return {{"shape", exact_table_json(shape)}, {"images", acc.count()}, {"rows", rows}};
}

TableAccumulator accumulator_from_json(const nlohmann::json& j) {
  try {
    const Table shape = table_from_exact_json(j.at("shape"));
    std::vector<TableAccumulator::RowState> rows;
    for (const auto& r : j.at("rows")) {
      TableAccumulator::RowState s;
      for (const auto& c : r.at("key")) s.key.push_back(json_cell(c));
      s.n = r.at("n").get<int64_t>();
      s.mean = json_doubles(r.at("mean"));
      s.m2 = json_doubles(r.at("m2"));
      rows.push_back(std::move(s));
    }
    return TableAccumulator::restore(shape, std::move(rows), j.at("images").get<int64_t>());
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("a malformed saved table: ") + e.what());
  }
}

}  // namespace attnlab::analysis
