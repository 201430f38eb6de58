// Products and exact quotients of extents, as Reshape, Flatten and the
// attention ops need them. Derived products are expanded into their factors
// before dividing, so [batch*seq, 512] reshaped to [batch, -1, 64] gives
// seq*8 rather than an opaque quotient.
#pragma once

#include <optional>
#include <span>

#include "inference/symbol_interner.hpp"

namespace nxrt::graph::inference {

// The product of `dims` as one interned expression (static when all are).
Dim Product(SymbolInterner& symbols, std::span<const Dim> dims);

// numerator / denominator where the division is known to be exact at run
// time. nullopt when it provably is not (static sizes that do not divide).
std::optional<Dim> ExactQuotient(SymbolInterner& symbols, std::span<const Dim> numerator,
                                 std::span<const Dim> denominator);

}  // namespace nxrt::graph::inference
