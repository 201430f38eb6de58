// Checked integer evaluation of one SymbolExpr operator, shared by inference's
// constant folding and the run-time symbol binder so both agree on the
// rounding of divisions and on what counts as an overflow.
#pragma once

#include <cstdint>
#include <optional>

#include "nxrt/graph/symbol.hpp"

namespace nxrt::graph::inference {

// lhs op rhs; nullopt on overflow or division by zero. Divisions round toward
// negative infinity (floor) or positive infinity (ceil).
std::optional<int64_t> EvaluateBinary(SymbolExpr::Op op, int64_t lhs, int64_t rhs);

}  // namespace nxrt::graph::inference
