// The run-time binder: declared symbols from input shapes, derived ones from
// their expressions, minted ones from outputs, with contradictions and
// overflow reported by symbol name.
#include <gtest/gtest.h>

#include "inference_test_graph.hpp"
#include "nxrt/graph/symbol_binding.hpp"

namespace nxrt::graph {
namespace {

using testing::TestGraph;

TEST(SymbolBinding, EvaluatesDerivedSymbolsFromBoundInputs) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 8});
  t.Int64s("flat", {-1});
  t.Op("Reshape", {"x", "flat"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  SymbolBinding binding(t.graph);
  const std::vector<int64_t> concrete{3, 5, 8};
  ASSERT_TRUE(binding.BindShape(t.ShapeOf("x"), concrete, "input 'x'").ok());
  ASSERT_TRUE(binding.EvaluateDerived().ok());
  auto resolved = binding.Resolve(t.ShapeOf("y"));
  ASSERT_TRUE(resolved.ok()) << resolved.status().message();
  EXPECT_EQ(*resolved, std::vector<int64_t>{120});
}

TEST(SymbolBinding, ContradictionNamesTheSymbol) {
  TestGraph t;
  t.Input("x", {"batch", 4});
  SymbolBinding binding(t.graph);
  const SymbolId batch = t.graph.DeclareSymbol("batch");
  ASSERT_TRUE(binding.Bind(batch, 2).ok());
  EXPECT_TRUE(binding.Bind(batch, 2).ok());
  Status s = binding.Bind(batch, 3);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'batch'"), std::string::npos);
}

TEST(SymbolBinding, StaticDimMismatchIsAnError) {
  TestGraph t;
  t.Input("x", {"batch", 4});
  SymbolBinding binding(t.graph);
  const std::vector<int64_t> concrete{2, 5};
  EXPECT_FALSE(binding.BindShape(t.ShapeOf("x"), concrete, "input 'x'").ok());
}

TEST(SymbolBinding, OverflowIsAnErrorNamingTheSymbol) {
  TestGraph t;
  t.Input("x", {"a", "b"});
  t.Int64s("flat", {-1});
  t.Op("Reshape", {"x", "flat"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  SymbolBinding binding(t.graph);
  const std::vector<int64_t> concrete{INT64_MAX / 2, 4};
  ASSERT_TRUE(binding.BindShape(t.ShapeOf("x"), concrete, "input 'x'").ok());
  auto resolved = binding.Resolve(t.ShapeOf("y"));
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.status().message().find("a*b"), std::string::npos);
}

TEST(SymbolBinding, MintedSymbolIsUnboundUntilAnOutputBindsIt) {
  TestGraph t;
  t.Input("x", {"batch", 4});
  t.Op("NonZero", {"x"}, {"idx"});
  ASSERT_TRUE(t.Infer().ok());
  SymbolBinding binding(t.graph);
  auto before = binding.Resolve(t.ShapeOf("idx"));
  EXPECT_FALSE(before.ok());
  const std::vector<int64_t> produced{2, 7};
  ASSERT_TRUE(binding.BindShape(t.ShapeOf("idx"), produced, "output 'idx'").ok());
  auto after = binding.Resolve(t.ShapeOf("idx"));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, produced);
}

TEST(SymbolBinding, DerivedSymbolCheckedAgainstItsExpression) {
  TestGraph t;
  t.Input("x", {"seq", 8});
  t.Int64s("flat", {-1});
  t.Op("Reshape", {"x", "flat"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  SymbolBinding binding(t.graph);
  ASSERT_TRUE(binding.Bind(t.graph.DeclareSymbol("seq"), 3).ok());
  const SymbolId derived = t.ShapeOf("y")[0].symbol();
  EXPECT_TRUE(binding.Bind(derived, 24).ok());
  EXPECT_FALSE(binding.Bind(derived, 25).ok());
}

}  // namespace
}  // namespace nxrt::graph
