// core/io/text.h's shortest_decimal: every value reads back exactly, in the fewest digits,
// whole numbers as integers, and in plain form with no exponent when asked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

#include "core/io/text.h"

namespace attnlab::text {
namespace {

TEST(ShortestDecimal, TheFewestDigitsThatReadBackExactly) {
  EXPECT_EQ(shortest_decimal(200), "200");
  EXPECT_EQ(shortest_decimal(-3), "-3");
  EXPECT_EQ(shortest_decimal(0.35), "0.35");
  EXPECT_EQ(shortest_decimal(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(shortest_decimal(1e-5), "1e-05");
  EXPECT_EQ(shortest_decimal(1e20), "1e+20");
  EXPECT_EQ(shortest_decimal(1e-5, true), "0.00001");
  EXPECT_EQ(shortest_decimal(0.6, true), "0.6");
  EXPECT_EQ(shortest_decimal(200, true), "200");
  EXPECT_EQ(shortest_decimal(1e20, true), "100000000000000000000.0");
}

TEST(ShortestDecimal, RandomDoublesRoundTripInBothForms) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const double v =
        std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), int(rng() % 200) - 100);
    for (bool plain : {false, true}) {
      const std::string t = shortest_decimal(v, plain);
      EXPECT_EQ(std::strtod(t.c_str(), nullptr), v) << t;
      if (plain) {
        EXPECT_EQ(t.find('e'), std::string::npos) << t;
      }
    }
  }
  EXPECT_EQ(std::strtod(shortest_decimal(std::numeric_limits<double>::denorm_min(), true).c_str(),
                        nullptr),
            std::numeric_limits<double>::denorm_min());
}

}  // namespace
}  // namespace attnlab::text
