#pragma once
// What codegen may assume about a row's max: when a max or min reduction
// may skip counting NaNs, and when an exp's argument is never positive.

#include "core/compiler/schedule.h"

namespace fusescope::compiler {

// A generated max (min) compares with `>` (`<`), which passes over a NaN, so
// it counts NaNs beside and yields NaN for a row that has one. The count is
// not needed where the row's NaN reaches every result anyway: softmax's
// max r is read only as sub(x, r) by exp, whose row sum is NaN when x has a
// NaN, and every kernel output that depends on r is computed through
// NaN-propagating arithmetic from such a sum. True when kernel k's
// reduction r is of that form (r's row then changes no output's value).
bool rowNaNReachesOutputs(const Kernel &k, const Node *r);

// True when n's first input is x - m, m a max reduction of the same x in
// kernel k: that value is at most 0 or NaN, so an exp of it cannot overflow
// (softmax's and log_softmax's exp).
bool shiftedByRowMax(const Kernel &k, const Node *n);

} // namespace fusescope::compiler
