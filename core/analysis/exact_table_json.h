// Tables as JSON that reads back to the same cells, bit for bit: the kind of every cell
// kept (an Int 1 stays an Int, a Real 1.0 a Real), reals in the shortest text that reads
// back to the same double, NaN and infinities spelled out (JSON has no such numbers; the
// exporter's table_json writes them as null). What a shard's manifest holds of its
// per-image rows, so that `attnlab merge` replays exactly what the single run added.
#pragma once

#include <nlohmann/json.hpp>

#include "core/analysis/table.h"

namespace attnlab::analysis {

nlohmann::json exact_table_json(const Table& t);
// Throws std::invalid_argument naming what is malformed.
Table table_from_exact_json(const nlohmann::json& j);

// A running mean/std table's state (a shard's, for `attnlab merge`), exactly; and back.
nlohmann::json accumulator_json(const TableAccumulator& acc);
TableAccumulator accumulator_from_json(const nlohmann::json& j);

}  // namespace attnlab::analysis
