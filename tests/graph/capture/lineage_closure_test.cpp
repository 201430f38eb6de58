#include "nxrt/graph/lineage_closure.hpp"

#include <algorithm>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

SymbolId S(uint32_t index) {
  return SymbolId{index};
}

std::vector<uint32_t> Indices(const std::vector<SymbolId>& symbols) {
  std::vector<uint32_t> out;
  for (SymbolId s : symbols) out.push_back(s.index);
  return out;
}

std::vector<uint32_t> PathIndices(const LineageClosure& closure, SymbolId s) {
  std::vector<uint32_t> out;
  for (const auto& step : closure.PathTo(s)) out.push_back(step.symbol.index);
  return out;
}

TEST(LineageClosure, EmptyRecordsBuildNothingAndReachOnlyTheSeeds) {
  SymbolLineage lineage;
  const std::vector<SymbolId> seeds = {S(2), S(0)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 4);
  EXPECT_EQ(closure.edge_count(), 0u);
  EXPECT_THAT(Indices(closure.reached()), ElementsAre(2, 0));
  EXPECT_FALSE(closure.Contains(S(1)));
  EXPECT_FALSE(closure.Contains(S(3)));
}

TEST(LineageClosure, UnificationLinksBothWays) {
  SymbolLineage lineage;
  lineage.unifications = {{S(0), S(1)}};
  const std::vector<SymbolId> from_first = {S(0)};
  const std::vector<SymbolId> from_second = {S(1)};
  EXPECT_TRUE(LineageClosure::Compute(lineage, from_first, 2).Contains(S(1)));
  EXPECT_TRUE(LineageClosure::Compute(lineage, from_second, 2).Contains(S(0)));
}

TEST(LineageClosure, DerivationLinksSourceToDerivedOnly) {
  SymbolLineage lineage;
  // 2 = 0 * 1: the product depends on both factors, neither factor on it.
  lineage.derivations = {{S(2), S(0)}, {S(2), S(1)}};
  const std::vector<SymbolId> from_factor = {S(0)};
  const auto forward = LineageClosure::Compute(lineage, from_factor, 3);
  EXPECT_TRUE(forward.Contains(S(2)));
  EXPECT_FALSE(forward.Contains(S(1)));
  const std::vector<SymbolId> from_product = {S(2)};
  const auto backward = LineageClosure::Compute(lineage, from_product, 3);
  EXPECT_FALSE(backward.Contains(S(0)));
  EXPECT_FALSE(backward.Contains(S(1)));
}

TEST(LineageClosure, FollowsChainsTransitivelyAcrossBothKinds) {
  SymbolLineage lineage;
  lineage.unifications = {{S(0), S(1)}, {S(3), S(2)}};
  lineage.derivations = {{S(2), S(1)}, {S(5), S(4)}};
  const std::vector<SymbolId> seeds = {S(0)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 6);
  EXPECT_THAT(Indices(closure.reached()), UnorderedElementsAre(0, 1, 2, 3));
}

TEST(LineageClosure, CyclesTerminateAndReachEachSymbolOnce) {
  SymbolLineage lineage;
  lineage.derivations = {{S(1), S(0)}, {S(2), S(1)}, {S(0), S(2)}};
  lineage.unifications = {{S(2), S(0)}};
  const std::vector<SymbolId> seeds = {S(1)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 3);
  EXPECT_THAT(Indices(closure.reached()), UnorderedElementsAre(0, 1, 2));
  EXPECT_EQ(closure.reached().size(), 3u);
}

TEST(LineageClosure, SelfLinksAreIgnored) {
  SymbolLineage lineage;
  lineage.unifications = {{S(1), S(1)}};
  lineage.derivations = {{S(0), S(0)}};
  const std::vector<SymbolId> seeds = {S(0)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 2);
  EXPECT_EQ(closure.edge_count(), 0u);
  EXPECT_THAT(Indices(closure.reached()), ElementsAre(0));
}

TEST(LineageClosure, DuplicateAndInvalidSeedsAreReachedOnce) {
  SymbolLineage lineage;
  lineage.unifications = {{S(0), S(1)}};
  const std::vector<SymbolId> seeds = {S(0), SymbolId{}, S(0)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 2);
  EXPECT_THAT(Indices(closure.reached()), ElementsAre(0, 1));
}

TEST(LineageClosure, RecordsBeyondTheSymbolCountWidenTheSearch) {
  SymbolLineage lineage;
  lineage.derivations = {{S(9), S(1)}};
  lineage.unifications = {{S(9), SymbolId{}}};
  const std::vector<SymbolId> seeds = {S(1)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 2);
  EXPECT_TRUE(closure.Contains(S(9)));
  EXPECT_EQ(closure.edge_count(), 1u);
}

TEST(LineageClosure, NoSeedsReachNothing) {
  SymbolLineage lineage;
  lineage.unifications = {{S(0), S(1)}};
  const auto closure = LineageClosure::Compute(lineage, {}, 2);
  EXPECT_EQ(closure.edge_count(), 0u);
  EXPECT_TRUE(closure.reached().empty());
  EXPECT_FALSE(closure.Contains(S(0)));
}

TEST(LineageClosure, ExplainKeepsThePathAndTheLinkKinds) {
  SymbolLineage lineage;
  // 0 = 1, then 2 derived from 1, then 3 derived from 2.
  lineage.unifications = {{S(1), S(0)}};
  lineage.derivations = {{S(2), S(1)}, {S(3), S(2)}};
  const std::vector<SymbolId> seeds = {S(0)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 4, ClosureDetail::kExplain);
  ASSERT_TRUE(closure.explains());
  EXPECT_EQ(closure.RootOf(S(3)), S(0));
  EXPECT_THAT(PathIndices(closure, S(3)), ElementsAre(0, 1, 2, 3));
  const auto path = closure.PathTo(S(3));
  EXPECT_EQ(path[1].via, LineageLink::kUnification);
  EXPECT_EQ(path[2].via, LineageLink::kDerivation);
  EXPECT_EQ(path[3].via, LineageLink::kDerivation);
  EXPECT_THAT(PathIndices(closure, S(0)), ElementsAre(0));
}

TEST(LineageClosure, ExplainNamesTheSeedEachSymbolCameFrom) {
  SymbolLineage lineage;
  lineage.derivations = {{S(1), S(0)}, {S(3), S(2)}};
  const std::vector<SymbolId> seeds = {S(0), S(2)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 5, ClosureDetail::kExplain);
  EXPECT_EQ(closure.RootOf(S(1)), S(0));
  EXPECT_EQ(closure.RootOf(S(3)), S(2));
  EXPECT_FALSE(closure.RootOf(S(4)).valid());
  EXPECT_TRUE(closure.PathTo(S(4)).empty());
}

TEST(LineageClosure, ExplainTakesAShortestPath) {
  SymbolLineage lineage;
  // A long way 0 -> 1 -> 2 -> 3 and a short way 0 -> 3.
  lineage.derivations = {{S(1), S(0)}, {S(2), S(1)}, {S(3), S(2)}, {S(3), S(0)}};
  const std::vector<SymbolId> seeds = {S(0)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 4, ClosureDetail::kExplain);
  EXPECT_THAT(PathIndices(closure, S(3)), ElementsAre(0, 3));
}

TEST(LineageClosure, MembershipModeDoesNotExplain) {
  SymbolLineage lineage;
  lineage.derivations = {{S(1), S(0)}};
  const std::vector<SymbolId> seeds = {S(0)};
  const auto closure = LineageClosure::Compute(lineage, seeds, 2);
  EXPECT_TRUE(closure.Contains(S(1)));
  EXPECT_FALSE(closure.explains());
  EXPECT_FALSE(closure.RootOf(S(1)).valid());
  EXPECT_TRUE(closure.PathTo(S(1)).empty());
}

TEST(LineageClosure, MatchesAPlainSearchOnALargerRandomGraph) {
  constexpr uint32_t kSymbols = 2000;
  SymbolLineage lineage;
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1103515245u + 12345u;
    return (state >> 8) % kSymbols;
  };
  for (uint32_t i = 0; i < kSymbols / 2; ++i)
    lineage.unifications.emplace_back(S(next()), S(next()));
  for (uint32_t i = 0; i < kSymbols / 2; ++i)
    lineage.derivations.emplace_back(S(next()), S(next()));
  const std::vector<SymbolId> seeds = {S(next()), S(next()), S(next())};

  // Expected: relax every record until nothing changes.
  std::vector<bool> expected(kSymbols, false);
  for (SymbolId s : seeds) expected[s.index] = true;
  for (bool changed = true; changed;) {
    changed = false;
    auto mark = [&](SymbolId from, SymbolId to) {
      if (expected[from.index] && !expected[to.index]) expected[to.index] = changed = true;
    };
    for (const auto& [a, b] : lineage.unifications) {
      mark(a, b);
      mark(b, a);
    }
    for (const auto& [derived, source] : lineage.derivations) mark(source, derived);
  }
  const auto closure = LineageClosure::Compute(lineage, seeds, kSymbols, ClosureDetail::kExplain);
  for (uint32_t i = 0; i < kSymbols; ++i) {
    ASSERT_EQ(closure.Contains(S(i)), expected[i]) << "symbol " << i;
    if (expected[i]) {
      const auto path = closure.PathTo(S(i));
      ASSERT_FALSE(path.empty());
      EXPECT_EQ(path.front().symbol, closure.RootOf(S(i)));
      EXPECT_EQ(path.back().symbol, S(i));
      for (size_t k = 1; k < path.size(); ++k) {
        const SymbolId from = path[k - 1].symbol;
        const SymbolId to = path[k].symbol;
        const bool recorded =
            path[k].via == LineageLink::kDerivation
                ? std::count(lineage.derivations.begin(), lineage.derivations.end(),
                             std::pair{to, from}) > 0
                : std::count(lineage.unifications.begin(), lineage.unifications.end(),
                             std::pair{from, to}) +
                          std::count(lineage.unifications.begin(), lineage.unifications.end(),
                                     std::pair{to, from}) >
                      0;
        EXPECT_TRUE(recorded) << "step " << from.index << " to " << to.index;
      }
    }
  }
}

}  // namespace
}  // namespace nxrt::graph
