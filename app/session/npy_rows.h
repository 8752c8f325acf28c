// Concatenating the rows of .npy arrays written in parts (a sharded embed's shards): one
// file per folder, each a C-ordered array of the same trailing shape, joined along the first
// axis in the folders' order — the single run's file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/dtype.h"

namespace attnlab::session {

// Writes out_dir/file (atomically) from dirs[i]/file; returns the rows in all. Throws
// std::runtime_error naming the folder whose file is missing, of another dtype or of another
// trailing shape. dtype: float32 or int64.
int64_t concatenate_npy_rows(const std::vector<std::string>& dirs, const std::string& file,
                             io::DType dtype, const std::string& out_dir);

}  // namespace attnlab::session
