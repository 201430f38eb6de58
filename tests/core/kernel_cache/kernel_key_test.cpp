#include "kernel_cache/kernel_key.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/pre_binding.hpp"

namespace nxrt::kernel_cache {
namespace {

TEST(KernelKeyTest, MatchesExactlyTheSameShapes) {
  const KernelKey key{NodeRef{nullptr, graph::NodeId{3}}, {InputShape{{2, 3}}, InputShape{{3}}}};
  const std::vector<InputShape> same{InputShape{{2, 3}}, InputShape{{3}}};
  const std::vector<InputShape> other_extent{InputShape{{4, 3}}, InputShape{{3}}};
  const std::vector<InputShape> other_rank{InputShape{{2, 3, 1}}, InputShape{{3}}};
  const std::vector<InputShape> fewer{InputShape{{2, 3}}};
  EXPECT_TRUE(key.MatchesShapes(same));
  EXPECT_FALSE(key.MatchesShapes(other_extent));
  EXPECT_FALSE(key.MatchesShapes(other_rank));
  EXPECT_FALSE(key.MatchesShapes(fewer));
}

TEST(KernelKeyTest, AnAbsentInputIsNotAPresentScalar) {
  const KernelKey absent{NodeRef{}, {InputShape{{}, true}}};
  const std::vector<InputShape> scalar{InputShape{{}, false}};
  const std::vector<InputShape> also_absent{InputShape{{}, true}};
  EXPECT_FALSE(absent.MatchesShapes(scalar));
  EXPECT_TRUE(absent.MatchesShapes(also_absent));
}

TEST(KernelKeyTest, NodesOfDifferentGraphsAreDifferentNodes) {
  graph::Graph main_graph;
  graph::Graph body;
  const NodeRef in_main{&main_graph, graph::NodeId{0}};
  const NodeRef in_body{&body, graph::NodeId{0}};
  EXPECT_FALSE(in_main == in_body);
  EXPECT_TRUE(in_main == (NodeRef{&main_graph, graph::NodeId{0}}));
}

TEST(KernelKeyTest, FormatsShapesForErrorMessages) {
  const std::vector<InputShape> shapes{InputShape{{2, 3}}, InputShape{{}, false},
                                       InputShape{{}, true}};
  EXPECT_EQ(FormatShapes(shapes), "[2,3],[],(absent)");
}

TEST(PreBindingTest, AnUnboundBindingMatchesNothing) {
  const PreBinding binding;
  const std::vector<InputShape> none;
  EXPECT_FALSE(binding.bound());
  EXPECT_FALSE(binding.Matches(none));
}

}  // namespace
}  // namespace nxrt::kernel_cache
