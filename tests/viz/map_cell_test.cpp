// viz::map_cell: a query picked on one token grid found on another (the compare view's
// models with other patch sizes, a hierarchical model's later stages, a click on a stage-3
// map sent back to the first layer's grid). The rule is "by area": the cell of the other
// grid that contains the centre of the query cell. Integer results, so exact.
#include <gtest/gtest.h>

#include "viz/figures/map_panels.h"

namespace attnlab::viz {
namespace {

GridCell cell(int row, int col) {
  return GridCell{row, col};
}

void expect_cell(GridCell got, int row, int col) {
  EXPECT_EQ(got.row, row);
  EXPECT_EQ(got.col, col);
}

TEST(MapCell, SameGridIsTheIdentity) {
  for (int r = 0; r < 14; ++r)
    for (int c = 0; c < 14; ++c) expect_cell(map_cell(cell(r, c), 14, 14, 14, 14), r, c);
}

TEST(MapCell, CoarserGridTakesTheCellContainingTheCentre) {
  // 14x14 (patch 16) onto 7x7 (a stage with patch 32): cells pair up.
  expect_cell(map_cell(cell(0, 0), 14, 14, 7, 7), 0, 0);
  expect_cell(map_cell(cell(1, 1), 14, 14, 7, 7), 0, 0);
  expect_cell(map_cell(cell(2, 3), 14, 14, 7, 7), 1, 1);
  expect_cell(map_cell(cell(13, 13), 14, 14, 7, 7), 6, 6);
  // 14x14 onto 4x4 (no even split): centre of cell 7 is at 7.5/14 = 0.536 -> 4·0.536 = 2.1.
  expect_cell(map_cell(cell(7, 7), 14, 14, 4, 4), 2, 2);
  expect_cell(map_cell(cell(6, 6), 14, 14, 4, 4), 1, 1);  // 6.5/14·4 = 1.86
}

TEST(MapCell, FinerGridTakesTheCellUnderTheCentre) {
  // 7x7 onto 14x14: the centre of cell k is at 2k + 1 on the finer grid (the lower-right
  // of the four cells it covers, as floor of the centre position).
  expect_cell(map_cell(cell(0, 0), 7, 7, 14, 14), 1, 1);
  expect_cell(map_cell(cell(3, 5), 7, 7, 14, 14), 7, 11);
  expect_cell(map_cell(cell(6, 6), 7, 7, 14, 14), 13, 13);
}

TEST(MapCell, RowsAndColumnsMapIndependently) {
  // A non-square input: 12 x 20 tokens onto 6 x 5.
  expect_cell(map_cell(cell(11, 0), 12, 20, 6, 5), 5, 0);
  expect_cell(map_cell(cell(0, 19), 12, 20, 6, 5), 0, 4);
  expect_cell(map_cell(cell(5, 10), 12, 20, 6, 5), 2, 2);  // 5.5/12·6 = 2.75; 10.5/20·5 = 2.6
}

TEST(MapCell, StaysOnTheTargetGrid) {
  // Every cell of every pairing lands inside the target grid.
  for (int ref = 1; ref <= 16; ++ref)
    for (int to = 1; to <= 16; ++to)
      for (int r = 0; r < ref; ++r) {
        const GridCell g = map_cell(cell(r, ref - 1 - r), ref, ref, to, to);
        ASSERT_GE(g.row, 0);
        ASSERT_LT(g.row, to);
        ASSERT_GE(g.col, 0);
        ASSERT_LT(g.col, to);
      }
}

TEST(MapCell, RoundTripThroughACoarserGridReturnsToTheSameBlock) {
  // A click on a 7x7 stage map sent back to the 14x14 query grid and then shown on the
  // stage again lands on the cell that was clicked.
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 7; ++c) {
      const GridCell fine = map_cell(cell(r, c), 7, 7, 14, 14);
      expect_cell(map_cell(fine, 14, 14, 7, 7), r, c);
    }
}

TEST(MapCell, NoReferenceGridLeavesTheCellAsItIs) {
  expect_cell(map_cell(cell(3, 4), 0, 0, 7, 7), 3, 4);
}

}  // namespace
}  // namespace attnlab::viz
