// Skipping a test that runs a reduced precision where this LibTorch cannot: the test asks
// the same probe the product asks (runtime::precision_refusal: each forward op once on a
// tiny tensor) and skips with the product's own message, so a skipped test says why (for
// example "--dtype bf16 is not supported here: at::gelu fails at bf16 on cpu (could not
// create a primitive descriptor iterator)" on an AVX-512 CPU run with
// ONEDNN_MAX_CPU_ISA=AVX2). Where the precision runs, nothing changes: the test runs.
#pragma once

#include <gtest/gtest.h>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

#include "core/runtime/precision.h"

// In a test body: skips the rest of the test when `dtype` cannot run on the CPU here.
#define ATTNLAB_SKIP_UNLESS_CPU_RUNS(dtype)                                     \
  do {                                                                          \
    const std::string attnlab_refusal_ =                                        \
        ::attnlab::runtime::precision_refusal((dtype), c10::Device(c10::kCPU)); \
    if (!attnlab_refusal_.empty()) GTEST_SKIP() << attnlab_refusal_;            \
  } while (0)
