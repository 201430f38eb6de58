#include "inference/integer_ops.hpp"

#include <algorithm>

#include "nxrt/support/checked_math.hpp"

namespace nxrt::graph::inference {

std::optional<int64_t> EvaluateBinary(SymbolExpr::Op op, int64_t lhs, int64_t rhs) {
  using Op = SymbolExpr::Op;
  switch (op) {
    case Op::kAdd:
      return CheckedAdd(lhs, rhs);
    case Op::kSub:
      return CheckedSub(lhs, rhs);
    case Op::kMul:
      return CheckedMul(lhs, rhs);
    case Op::kMin:
      return std::min(lhs, rhs);
    case Op::kMax:
      return std::max(lhs, rhs);
    case Op::kFloorDiv:
    case Op::kCeilDiv:
    case Op::kMod:
      break;
  }
  if (rhs == 0) return std::nullopt;
  if (lhs == INT64_MIN && rhs == -1) return std::nullopt;
  int64_t quotient = lhs / rhs;
  int64_t remainder = lhs % rhs;
  const bool inexact = remainder != 0;
  const bool negative = (remainder < 0) != (rhs < 0);
  if (op == Op::kMod) return inexact && negative ? remainder + rhs : remainder;
  if (op == Op::kFloorDiv) return inexact && negative ? quotient - 1 : quotient;
  return inexact && !negative ? quotient + 1 : quotient;
}

}  // namespace nxrt::graph::inference
