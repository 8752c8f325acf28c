// Which analysis outputs the cross-world test compares how (tolerance.h gives the bounds).
//
// Continuous: within the rounding bounds. Discrete (counts, shares of counts, flags, argmax
// indices, masks): a value decided by a comparison jumps when the deciding quantity crosses
// its boundary, so it has no rounding bound. Its float64 values must be equal in both
// worlds: the deciding float64 values differ by about (a)'s bound (tolerance.h), 2^-18 of
// the float32 error, so a decision flips there only when it lies that close to its
// boundary, 2^-18 as often as float32 flips it. Its float32 values may differ only where
// the decision is shown to lie within the float32 error of its boundary: float32 and
// float64 disagree on it in a world, while the two worlds' float64 values agree. (A
// float32-only defect of this world that moves decisions moves the continuous values of
// the same path too, which (b) bounds.) Definitions that depend on the dtype (the float32
// rank rule counts singular values above max(m, n)·ε·σ_max with the data's own ε, so a
// float64 run counts with ε64) cannot use that evidence: their counts are equal at each
// precision unless the analysis itself flags the row's rank ambiguous (a singular value
// within a factor 4 of the tolerance), and their tolerances are σ_max times an exact
// constant (κ = 1, compared with the a-priori budget). A continuous value that a discrete
// one in its row decides (the segmentation's mass for the kept tokens, the PCA of the
// foreground) is not compared where that discrete value differs between the worlds.
#pragma once

#include <string>

#include "tests/cross_world/output_values.h"

namespace attnlab::testing::cross_world {

enum class Kind {
  Continuous,
  Discrete,
  DtypeDiscrete,    // a count under a rule with the dtype's ε
  DtypeContinuous,  // a tolerance under such a rule: σ_max times an exact constant
};

struct OutputKind {
  Kind kind = Kind::Continuous;
  // Discrete groups: what decides them. Dependent continuous groups: the discrete group
  // (its name, same folder) whose differing rows exempt theirs. DtypeDiscrete: the column
  // of the same row flagging ambiguity ("" when none is written).
  std::string why;
  std::string decided_by;
  std::string ambiguity_flag;
};

OutputKind output_kind(const ValueGroup& g);

}  // namespace attnlab::testing::cross_world
