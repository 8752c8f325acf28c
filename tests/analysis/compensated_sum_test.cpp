// core/analysis/compensated_sum.h (issue 50): Neumaier's compensated sum, element-wise on
// float64 tensors. It keeps what plain float64 loses to cancellation; a run split into
// shards and absorbed in any grouping gives the one-sum value (where plain float64 sums of
// the same groupings differ by many ulps, so the comparison can fail); a saved state that
// is not float64, or whose parts differ in shape, is refused.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis/compensated_sum.h"

namespace {

using attnlab::analysis::CompensatedSum;

at::Tensor csum_tensor(const std::vector<double>& v) {
  at::Tensor t = at::empty({int64_t(v.size())}, at::kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t;
}

std::vector<double> csum_values(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// Doubles in an order-preserving integer line: the distance of two values in ulps.
int64_t csum_ordered(double d) {
  int64_t i = 0;
  std::memcpy(&i, &d, sizeof d);
  return i < 0 ? std::numeric_limits<int64_t>::min() - i : i;
}
uint64_t csum_ulps(double a, double b) {
  const int64_t x = csum_ordered(a), y = csum_ordered(b);
  return x > y ? uint64_t(x) - uint64_t(y) : uint64_t(y) - uint64_t(x);
}

// The terms: kTerms tensors of kElements, each element a random sign times 10^U(-8, 8), from
// a fixed seed and raw generator bits (no distribution whose algorithm the library picks).
constexpr int kCsumTerms = 600;
constexpr int kCsumElements = 2048;

std::vector<at::Tensor> csum_terms() {
  std::mt19937_64 gen(20240611);
  const auto uniform = [&] { return double(gen() >> 11) * 0x1p-53; };  // [0, 1)
  std::vector<at::Tensor> terms;
  for (int k = 0; k < kCsumTerms; ++k) {
    std::vector<double> v(kCsumElements);
    for (double& x : v) {
      const double magnitude = std::pow(10.0, -8.0 + 16.0 * uniform());
      x = (gen() & 1) ? magnitude : -magnitude;
    }
    terms.push_back(csum_tensor(v));
  }
  return terms;
}

// A grouping: shards of term indices; each shard adds its terms in its order, the total
// absorbs the shards in the grouping's order.
using CsumGrouping = std::vector<std::vector<int>>;

std::vector<int> csum_range(int begin, int end) {
  std::vector<int> v(size_t(end - begin));
  std::iota(v.begin(), v.end(), begin);
  return v;
}

std::vector<std::pair<std::string, CsumGrouping>> csum_groupings() {
  std::vector<std::pair<std::string, CsumGrouping>> g;
  g.push_back({"halves", {csum_range(0, 300), csum_range(300, 600)}});
  g.push_back({"three uneven", {csum_range(0, 100), csum_range(100, 450), csum_range(450, 600)}});
  CsumGrouping seven;
  for (int i = 0; i < 7; ++i) seven.push_back(csum_range(600 * i / 7, 600 * (i + 1) / 7));
  g.push_back({"seven", seven});
  CsumGrouping singles;
  for (int i = 0; i < kCsumTerms; ++i) singles.push_back({i});
  g.push_back({"one term per shard", singles});
  std::vector<int> reversed = csum_range(0, 600);
  std::reverse(reversed.begin(), reversed.end());
  g.push_back({"one shard, reversed", {reversed}});
  // Any order: the terms shuffled into five shards, absorbed in a shuffled order.
  std::mt19937 gen(7);
  std::vector<int> shuffled = csum_range(0, 600);
  std::shuffle(shuffled.begin(), shuffled.end(), gen);
  CsumGrouping five;
  for (int i = 0; i < 5; ++i)
    five.emplace_back(shuffled.begin() + 600 * i / 5, shuffled.begin() + 600 * (i + 1) / 5);
  std::shuffle(five.begin(), five.end(), gen);
  g.push_back({"shuffled into five", five});
  return g;
}

at::Tensor csum_compensated(const std::vector<at::Tensor>& terms, const CsumGrouping& grouping) {
  CompensatedSum total;
  for (const auto& shard : grouping) {
    CompensatedSum part;
    for (const int k : shard) part.add(terms[size_t(k)]);
    total.absorb(part);
  }
  return total.value();
}

at::Tensor csum_naive(const std::vector<at::Tensor>& terms, const CsumGrouping& grouping) {
  at::Tensor total;
  for (const auto& shard : grouping) {
    at::Tensor part;
    for (const int k : shard) part = part.defined() ? part + terms[size_t(k)] : terms[size_t(k)];
    total = total.defined() ? total + part : part;
  }
  return total;
}

}  // namespace

TEST(CompensatedSum, KeepsWhatCancellationLoses) {
  // Element-wise, three orders of {1e16, 1, -1e16}: 1e16 + 1 rounds to 1e16 (its ulp is 2).
  const std::vector<at::Tensor> terms = {csum_tensor({1e16, 1.0, 1e16}),
                                         csum_tensor({1.0, 1e16, -1e16}),
                                         csum_tensor({-1e16, -1e16, 1.0})};
  CompensatedSum s;
  at::Tensor naive;
  for (const auto& t : terms) {
    s.add(t);
    naive = naive.defined() ? naive + t : t;
  }
  EXPECT_EQ(csum_values(s.value()), (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(csum_values(naive), (std::vector<double>{0.0, 0.0, 1.0}));  // what it fixes
  EXPECT_EQ(s.value().scalar_type(), at::kDouble);
}

TEST(CompensatedSum, FirstTermIsCopiedAsFloat64) {
  at::Tensor first = at::full({4}, 0.5f, at::kFloat);
  CompensatedSum s;
  EXPECT_FALSE(s.defined());
  s.add(first);
  first.fill_(2.0f);  // the sum holds its own copy
  ASSERT_TRUE(s.defined());
  EXPECT_EQ(s.sum().scalar_type(), at::kDouble);
  EXPECT_EQ(csum_values(s.value()), (std::vector<double>(4, 0.5)));
  EXPECT_EQ(csum_values(s.compensation()), (std::vector<double>(4, 0.0)));
}

// The sum is updated in place: a copy taken before must keep its own terms, and the
// compensation must still hold what the addition lost.
TEST(CompensatedSum, CopiesAreIndependentOfLaterAdds) {
  CompensatedSum s;
  s.add(csum_tensor({1e16, 1.0}));
  const CompensatedSum before = s;
  s.add(csum_tensor({0.75, 1.0}));
  EXPECT_EQ(csum_values(before.sum()), (std::vector<double>{1e16, 1.0}));
  EXPECT_EQ(csum_values(before.compensation()), (std::vector<double>{0.0, 0.0}));
  // 1e16 + 0.75 rounds to 1e16 (the doubles there are 2 apart): 0.75 goes to the compensation.
  EXPECT_EQ(csum_values(s.sum()), (std::vector<double>{1e16, 2.0}));
  EXPECT_EQ(csum_values(s.compensation()), (std::vector<double>{0.75, 0.0}));
}

// Neumaier's algorithm records the rounding error e_i of every addition exactly (each
// is a Fast2Sum with the larger operand first), absorb included (it is one more such
// addition, plus the shard's own errors), so for any grouping sum + sum_i e_i = S, the exact
// sum of the terms. Only the running compensation, a plain sum of the m ≤ 2 (terms + shards)
// errors, is rounded: |e_i| ≤ u·Σ|x| (u = 2^-53), so its error is at most
// Δ = m²·u²·Σ|x| (first order; this is the O(n u² Σ|x|) term of Neumaier's bound
// |value − S| ≤ u|S| + O(n u² Σ|x|)). The value is fl(S + δ) with |δ| ≤ Δ; while Δ is below
// half an ulp of S, fl(S + δ) is one of the two doubles around S, so two groupings can differ
// by one ulp at most (tighter than the 2 ulp of the bound's u|S| for each), and only where S
// lies within Δ of the midpoint between them; elsewhere both are fl(S), bit for bit. Here
// Σ|x| ≤ 600·1e8 and m ≤ 2400, so Δ ≤ 4.3e-15, while |S| is ~1e8 (ulp ~1e-8): the chance that
// one of the 2048 elements lies within Δ of a midpoint is ~1e-3, and the terms (fixed seed)
// and the element-wise float64 arithmetic (exactly rounded at any vector width) are fixed.
// So: at most 1 ulp everywhere (checked, with the premise Δ < ulp/4 checked per element),
// and in fact no element differs.
TEST(CompensatedSum, ShardsAbsorbedInAnyGroupingGiveTheOneSumValue) {
  const std::vector<at::Tensor> terms = csum_terms();
  const CsumGrouping one_sum = {csum_range(0, kCsumTerms)};
  const std::vector<double> reference = csum_values(csum_compensated(terms, one_sum));
  const std::vector<double> naive_reference = csum_values(csum_naive(terms, one_sum));

  // The premise: Δ below a quarter ulp of every element's sum.
  at::Tensor abs_total = at::zeros({kCsumElements}, at::kDouble);
  for (const auto& t : terms) abs_total += t.abs();
  const std::vector<double> abs_sum = csum_values(abs_total);
  const double u = 0x1p-53, m = 4.0 * kCsumTerms;
  for (int e = 0; e < kCsumElements; ++e) {
    const double delta = m * m * u * u * abs_sum[size_t(e)];
    const double s = std::fabs(reference[size_t(e)]);
    const double ulp = std::nextafter(s, std::numeric_limits<double>::infinity()) - s;
    ASSERT_LT(delta, ulp / 4) << "element " << e << " (|S| " << s << ", Σ|x| " << abs_sum[size_t(e)]
                              << "): the premise of the bound does not hold; pick another seed";
  }

  uint64_t naive_worst = 0;
  int64_t naive_differing = 0;
  for (const auto& [name, grouping] : csum_groupings()) {
    SCOPED_TRACE(name);
    const std::vector<double> value = csum_values(csum_compensated(terms, grouping));
    const std::vector<double> naive = csum_values(csum_naive(terms, grouping));
    ASSERT_EQ(value.size(), reference.size());
    uint64_t worst = 0;
    int64_t differing = 0;
    for (size_t e = 0; e < value.size(); ++e) {
      worst = std::max(worst, csum_ulps(value[e], reference[e]));
      differing += value[e] != reference[e];
      naive_worst = std::max(naive_worst, csum_ulps(naive[e], naive_reference[e]));
      naive_differing += naive[e] != naive_reference[e];
    }
    EXPECT_LE(worst, 1u);  // the bound
    EXPECT_EQ(differing, 0) << "of " << value.size() << " elements (worst " << worst << " ulp)";
  }
  // Plain float64 sums of the same groupings are not the same: the test can tell.
  EXPECT_GT(naive_worst, 4u);
  EXPECT_GT(naive_differing, kCsumElements);
}

TEST(CompensatedSum, AbsorbOfAbsorbedShardsIsTheOneSum) {
  // A tree: four shards, merged in pairs, the pairs merged (both sides carry compensation).
  const std::vector<at::Tensor> terms = csum_terms();
  CompensatedSum quarters[4];
  for (int k = 0; k < kCsumTerms; ++k) quarters[k * 4 / kCsumTerms].add(terms[size_t(k)]);
  CompensatedSum left, right, total;
  left.absorb(quarters[0]);
  left.absorb(quarters[1]);
  right.absorb(quarters[2]);
  right.absorb(quarters[3]);
  total.absorb(left);
  total.absorb(right);
  CompensatedSum one;
  for (const auto& t : terms) one.add(t);
  EXPECT_TRUE(at::equal(total.value(), one.value()));
}

TEST(CompensatedSum, AbsorbingAnEmptySumChangesNothing) {
  CompensatedSum s, empty;
  s.add(csum_tensor({1e16, 3.0}));
  s.add(csum_tensor({1.0, 0.25}));
  const at::Tensor sum = s.sum().clone(), comp = s.compensation().clone();
  s.absorb(empty);
  EXPECT_TRUE(at::equal(s.sum(), sum));
  EXPECT_TRUE(at::equal(s.compensation(), comp));
  // Into an empty sum: the other's sum and compensation, as they are.
  CompensatedSum fresh;
  fresh.absorb(s);
  EXPECT_TRUE(at::equal(fresh.sum(), sum));
  EXPECT_TRUE(at::equal(fresh.compensation(), comp));
  EXPECT_FALSE(at::equal(comp, at::zeros_like(comp)));  // 1e16 + 1 left something to keep
}

TEST(CompensatedSum, RestoredStateAbsorbsLikeTheOriginal) {
  const std::vector<at::Tensor> terms = csum_terms();
  CompensatedSum a, b;
  for (int k = 0; k < kCsumTerms; ++k) (k < 250 ? a : b).add(terms[size_t(k)]);
  const CompensatedSum saved = CompensatedSum::restore(b.sum(), b.compensation());
  EXPECT_TRUE(at::equal(saved.value(), b.value()));
  CompensatedSum x, y;
  x.absorb(a);
  x.absorb(b);
  y.absorb(a);
  y.absorb(saved);
  EXPECT_TRUE(at::equal(x.value(), y.value()));
}

TEST(CompensatedSum, RefusesStatesThatAreNotFloat64OrDifferInShape) {
  const at::Tensor d3 = at::zeros({3}, at::kDouble);
  EXPECT_THROW(CompensatedSum::restore(at::zeros({3}, at::kFloat), d3), std::invalid_argument);
  EXPECT_THROW(CompensatedSum::restore(at::zeros({3}, at::kLong), d3), std::invalid_argument);
  EXPECT_THROW(CompensatedSum::restore(d3, at::zeros({4}, at::kDouble)), std::invalid_argument);
  EXPECT_THROW(CompensatedSum::restore(d3, at::zeros({3, 1}, at::kDouble)), std::invalid_argument);
  EXPECT_THROW(
      CompensatedSum::restore(at::zeros({2, 3}, at::kDouble), at::zeros({3, 2}, at::kDouble)),
      std::invalid_argument);
  EXPECT_NO_THROW(CompensatedSum::restore(d3, at::zeros({3}, at::kDouble)));
  // A term of another shape.
  CompensatedSum s;
  s.add(d3);
  EXPECT_THROW(s.add(at::zeros({4}, at::kDouble)), std::invalid_argument);
  CompensatedSum other;
  other.add(at::zeros({2}, at::kDouble));
  EXPECT_THROW(s.absorb(other), std::invalid_argument);
}
