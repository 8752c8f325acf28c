// DINO's attention masks (core/analysis/attention_segmentation): the mass threshold on
// hand-worked rows, ties, zeros and batches of heads; the Jaccard index by hand; nearest-
// neighbour upsampling of a token mask; bad input.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/analysis/attention_segmentation.h"

namespace attnlab::testing {
namespace {

using analysis::jaccard;
using analysis::mass_threshold_mask;

at::Tensor seg_test_bools(std::initializer_list<int> v) {
  return at::tensor(std::vector<int>(v), at::kInt).to(at::kBool);
}

// A map that is 1 on a mask and 0 elsewhere: its largest entries are one tie group holding
// all the mass, so every tau keeps exactly the mask.
TEST(AttentionSegmentation, AMapEqualToAMaskGivesTheMaskBack) {
  at::Tensor mask = at::zeros({4, 5}, at::kBool);
  mask.slice(0, 1, 3).slice(1, 1, 4).fill_(true);
  mask[3][0] = true;
  const at::Tensor map = mask.to(at::kFloat).reshape({20});  // one row of 20 weights
  for (const double tau : {1e-6, 0.3, 0.6, 0.9, 1.0}) {
    const at::Tensor kept = mass_threshold_mask(map, tau).reshape({4, 5});
    EXPECT_TRUE(at::equal(kept, mask)) << tau;
    EXPECT_EQ(jaccard(kept, mask), 1.0) << tau;  // 7 / 7: an exact division of integers
  }
}

// [0.1, 0.2, 0.3, 0.4] shuffled. DINO's rule: ascending cumulative sums 0.1, 0.3, 0.6, 1.0;
// keep those > 1 − tau. tau = 0.6: > 0.4 keeps 0.6 and 1.0, i.e. entries 0.3 and 0.4 (mass
// 0.7 >= 0.6). tau = 0.4: > 0.6 keeps only 1.0 (entry 0.4, mass exactly 0.4: the boundary,
// where float sums round either way; the documented slack decides it as exact arithmetic).
// tau = 0.7: > 0.3 keeps 0.3 and 0.4 (mass 0.7, the boundary again). tau = 0.71: also 0.2.
TEST(AttentionSegmentation, AHandWorkedRow) {
  const at::Tensor row = at::tensor({0.3, 0.1, 0.4, 0.2}, at::kDouble);
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 0.6), seg_test_bools({1, 0, 1, 0})));
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 0.4), seg_test_bools({0, 0, 1, 0})));
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 0.1), seg_test_bools({0, 0, 1, 0})));
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 0.7), seg_test_bools({1, 0, 1, 0})));
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 0.71), seg_test_bools({1, 0, 1, 1})));
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 1.0), seg_test_bools({1, 1, 1, 1})));
  // Rows need not sum to 1: ten times the row keeps the same entries.
  EXPECT_TRUE(at::equal(mass_threshold_mask(row * 10.0, 0.6), seg_test_bools({1, 0, 1, 0})));
}

TEST(AttentionSegmentation, TiesAreKeptTogether) {
  // Mass above each 0.25 is 0.5 < 0.6: both kept, though one would reach 0.6 already.
  const at::Tensor row = at::tensor({0.25, 0.5, 0.25}, at::kDouble);
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 0.6), seg_test_bools({1, 1, 1})));
  EXPECT_TRUE(at::equal(mass_threshold_mask(row, 0.5), seg_test_bools({0, 1, 0})));
  EXPECT_TRUE(at::equal(mass_threshold_mask(at::full({4}, 0.25, at::kDouble), 0.3),
                        seg_test_bools({1, 1, 1, 1})));
}

TEST(AttentionSegmentation, ZerosAreNeverKept) {
  const at::Tensor maps =
      at::tensor({0.0, 0.0, 0.0, 0.0, 0.0, 1e-300, 0.0, 2.0}, at::kDouble).reshape({2, 4});
  for (const double tau : {0.5, 1.0}) {
    const at::Tensor kept = mass_threshold_mask(maps, tau);
    EXPECT_FALSE(kept[0].any().item<bool>()) << tau;  // a row of zeros keeps nothing
    EXPECT_FALSE(kept[1][0].item<bool>() || kept[1][2].item<bool>()) << tau;
    EXPECT_TRUE(kept[1][3].item<bool>()) << tau;
  }
  // tau = 1 keeps every positive entry, however small; tau = 0.5 not the tiny one.
  EXPECT_TRUE(mass_threshold_mask(maps, 1.0)[1][1].item<bool>());
  EXPECT_FALSE(mass_threshold_mask(maps, 0.5)[1][1].item<bool>());
}

// (heads, queries, N): every row alone gives the same mask as inside the batch.
TEST(AttentionSegmentation, BatchedHeadsAreRowByRow) {
  at::manual_seed(2);
  const at::Tensor maps = at::rand({3, 2, 7}, at::kFloat);
  const at::Tensor kept = mass_threshold_mask(maps, 0.6);
  ASSERT_EQ(kept.sizes(), maps.sizes());
  EXPECT_EQ(kept.scalar_type(), at::kBool);
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t q = 0; q < 2; ++q) {
      EXPECT_TRUE(at::equal(kept[h][q], mass_threshold_mask(maps[h][q], 0.6))) << h << " " << q;
      // The kept set holds >= 0.6 of the mass and, without its smallest entry, less.
      const at::Tensor row = maps[h][q].to(at::kDouble);
      const double total = row.sum().item<double>();
      const at::Tensor in = row.index({kept[h][q]});
      EXPECT_GE(in.sum().item<double>(), 0.6 * total * (1 - 1e-12));  // rounding of 7 terms
      EXPECT_LT(in.sum().item<double>() - in.min().item<double>(), 0.6 * total);
    }
}

TEST(AttentionSegmentation, JaccardByHand) {
  const at::Tensor a = seg_test_bools({1, 1, 0, 0}), b = seg_test_bools({0, 0, 1, 1});
  EXPECT_EQ(jaccard(a, b), 0.0);                                          // disjoint
  EXPECT_DOUBLE_EQ(jaccard(a, seg_test_bools({1, 0, 0, 0})), 0.5);        // 1 of 2
  EXPECT_DOUBLE_EQ(jaccard(a, seg_test_bools({0, 1, 1, 0})), 1.0 / 3.0);  // 1 of 3
  const at::Tensor none = at::zeros({2, 2}, at::kBool);
  EXPECT_EQ(jaccard(none, none), 1.0);  // both say: no object
  EXPECT_EQ(jaccard(none, at::ones({2, 2}, at::kBool)), 0.0);
}

TEST(AttentionSegmentation, UpsamplingIsNearestNeighbour) {
  const at::Tensor m = seg_test_bools({1, 0, 0, 0, 1, 1}).reshape({2, 3});
  // An integer factor: each token a 2×2 block.
  const at::Tensor twice = analysis::upsample_token_mask(m, 4, 6);
  EXPECT_TRUE(at::equal(twice, m.repeat_interleave(2, 0).repeat_interleave(2, 1)));
  // 2×3 to 3×4: rows ⌊y·2/3⌋ = 0, 0, 1; columns ⌊x·3/4⌋ = 0, 0, 1, 2.
  const at::Tensor odd = analysis::upsample_token_mask(m, 3, 4);
  const at::Tensor expected = seg_test_bools({1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}).reshape({3, 4});
  EXPECT_TRUE(at::equal(odd, expected));
  EXPECT_TRUE(at::equal(analysis::upsample_token_mask(m, 2, 3), m));
}

TEST(AttentionSegmentation, BadInputThrows) {
  const at::Tensor row = at::tensor({0.1, 0.2}, at::kDouble);
  for (const double tau : {0.0, -0.5, 1.5, double(NAN)})
    EXPECT_THROW(mass_threshold_mask(row, tau), std::invalid_argument) << tau;
  EXPECT_THROW(mass_threshold_mask(at::tensor({0.1, -0.2}, at::kDouble), 0.5),
               std::invalid_argument);
  EXPECT_THROW(mass_threshold_mask(at::tensor({0.1, NAN}, at::kDouble), 0.5),
               std::invalid_argument);
  EXPECT_THROW(mass_threshold_mask(at::tensor({0.1, INFINITY}, at::kDouble), 0.5),
               std::invalid_argument);
  EXPECT_THROW(mass_threshold_mask(at::scalar_tensor(1.0), 0.5), std::invalid_argument);
  EXPECT_THROW(mass_threshold_mask(at::zeros({3, 0}), 0.5), std::invalid_argument);
  const at::Tensor m = at::ones({2, 2}, at::kBool);
  EXPECT_THROW(jaccard(m, at::ones({2, 2})), std::invalid_argument);
  EXPECT_THROW(jaccard(m, at::ones({4}, at::kBool)), std::invalid_argument);
  EXPECT_THROW(analysis::upsample_token_mask(at::ones({2, 2}), 4, 4), std::invalid_argument);
  EXPECT_THROW(analysis::upsample_token_mask(at::ones({1, 2, 2}, at::kBool), 4, 4),
               std::invalid_argument);
  EXPECT_THROW(analysis::upsample_token_mask(m, 0, 4), std::invalid_argument);
  EXPECT_THROW(analysis::upsample_token_mask(at::ones({0, 2}, at::kBool), 4, 4),
               std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::testing
