#include "nxrt/graph/value_consumers.hpp"

#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;
using testing::TestGraph;

std::vector<std::pair<uint32_t, size_t>> Pairs(std::span<const ValueConsumer> consumers) {
  std::vector<std::pair<uint32_t, size_t>> out;
  for (const auto& c : consumers) out.emplace_back(c.node.index, c.input_slot);
  return out;
}

TEST(ValueConsumers, ListsEveryReaderWithItsSlotInNodeOrder) {
  TestGraph t;
  const ValueId x = t.Input("x", {4});
  const ValueId y = t.Value("y", {4});
  const ValueId unused = t.Value("unused", {4});
  t.Op("Add", "a", {x, x}, {y});
  t.Op("Mul", "b", {std::nullopt, y, x}, {t.Value("z", {4})});
  const ValueConsumers consumers(t.graph);
  EXPECT_THAT(
      Pairs(consumers.Of(x)),
      ElementsAre(std::pair{0u, size_t{0}}, std::pair{0u, size_t{1}}, std::pair{1u, size_t{2}}));
  EXPECT_THAT(Pairs(consumers.Of(y)), ElementsAre(std::pair{1u, size_t{1}}));
  EXPECT_TRUE(consumers.Of(unused).empty());
  EXPECT_TRUE(consumers.Of(ValueId{}).empty());
  EXPECT_TRUE(consumers.Of(ValueId{1000}).empty());
}

}  // namespace
}  // namespace nxrt::graph
