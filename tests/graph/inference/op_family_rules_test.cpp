// One check per rule family on hand-built graphs with symbolic dims: what the
// node test cases (all static) cannot show.
#include <gtest/gtest.h>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::IntAttr;
using testing::IntsAttr;
using testing::StringAttr;
using testing::TestGraph;

TEST(OpFamilyRules, MatMulBroadcastsBatchDimsThroughTheChokepoint) {
  TestGraph t;
  t.Input("a", {"batch", 1, "seq", 64});
  t.Input("b", {"beam", 4, 64, 32});
  t.Op("MatMul", {"a", "b"}, {"c"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& c = t.ShapeOf("c");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1], Dim::Static(4));
  EXPECT_EQ(c[2], t.Sym("seq"));
  EXPECT_EQ(c[3], Dim::Static(32));
  EXPECT_EQ(t.graph.lineage.unifications.size(), 1u);
}

TEST(OpFamilyRules, MatMulContractionMismatchIsAModelError) {
  TestGraph t;
  t.Input("a", {"seq", 64});
  t.Input("b", {32, 16});
  t.Op("MatMul", {"a", "b"}, {"c"});
  EXPECT_EQ(t.Infer().code(), StatusCode::kInvalidArgument);
}

TEST(OpFamilyRules, GemmWithTransposesAndBroadcastC) {
  TestGraph t;
  t.Input("a", {64, "batch"});
  t.Input("b", {32, 64});
  t.Input("c", {32});
  t.Op("Gemm", {"a", "b", "c"}, {"y"}, {IntAttr("transA", 1), IntAttr("transB", 1)});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), Dim::Static(32)}));
}

TEST(OpFamilyRules, MatMulNBitsTakesNFromItsAttribute) {
  TestGraph t;
  t.graph.opset_imports["com.microsoft"] = 1;
  t.Input("a", {"batch", "seq", 256});
  t.Input("b", {1024, 8, 16}, DataType::kUint8);
  t.Input("scales", {8192});
  t.Op("MatMulNBits", {"a", "b", "scales"}, {"y"},
       {IntAttr("K", 256), IntAttr("N", 1024), IntAttr("bits", 4), IntAttr("block_size", 32)},
       "com.microsoft");
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(1024)}));
}

TEST(OpFamilyRules, FusedMatMulTransposesBeforeMultiplying) {
  TestGraph t;
  t.graph.opset_imports["com.microsoft"] = 1;
  t.Input("a", {"batch", 64, "seq"});
  t.Input("b", {32, 64});
  t.Op("FusedMatMul", {"a", "b"}, {"y"}, {IntAttr("transA", 1), IntAttr("transB", 1)},
       "com.microsoft");
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(32)}));
}

TEST(OpFamilyRules, EinsumEllipsisBroadcasts) {
  TestGraph t;
  t.Input("a", {"batch", "heads", "seq", 64});
  t.Input("b", {"batch", 1, 64, "kv"});
  t.Op("Einsum", {"a", "b"}, {"c"}, {StringAttr("equation", "...ij,...jk->...ik")});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("c"), (Shape{t.Sym("batch"), t.Sym("heads"), t.Sym("seq"), t.Sym("kv")}));
}

TEST(OpFamilyRules, ConvOverSymbolicSpatialDimsDerivesTheOutputExtent) {
  TestGraph t;
  t.Input("x", {"n", 3, "h", 32});
  t.Input("w", {16, 3, 3, 3});
  t.Op("Conv", {"x", "w"}, {"y"}, {IntsAttr("strides", {2, 2}), IntsAttr("pads", {1, 1, 1, 1})});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], t.Sym("n"));
  EXPECT_EQ(y[1], Dim::Static(16));
  EXPECT_EQ(y[3], Dim::Static(16));
  ASSERT_TRUE(y[2].is_symbolic());
  EXPECT_EQ(t.graph.symbol(y[2].symbol()).origin, SymbolOrigin::kDerived);
}

TEST(OpFamilyRules, PoolingAndGlobalPooling) {
  TestGraph t;
  t.Input("x", {"n", 8, 9, 9});
  t.Op("MaxPool", {"x"}, {"y", "idx"},
       {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2}), IntAttr("ceil_mode", 1)});
  t.Op("GlobalAveragePool", {"x"}, {"g"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("n"), Dim::Static(8), Dim::Static(5), Dim::Static(5)}));
  EXPECT_EQ(t.V("idx").dtype, DataType::kInt64);
  EXPECT_EQ(t.ShapeOf("g"), (Shape{t.Sym("n"), Dim::Static(8), Dim::Static(1), Dim::Static(1)}));
}

// Windows the specification forbids are model errors naming the fault,
// before any extent divides by a zero stride or overflows.
TEST(OpFamilyRules, ForbiddenWindowsAreModelErrors) {
  struct Case {
    const char* op;
    std::vector<Attribute> attributes;
    const char* fault;
  };
  const int64_t huge = int64_t{1} << 40;
  const Case cases[] = {
      {"MaxPool", {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {0, 1})}, "strides"},
      {"AveragePool",
       {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {1, 0}),
        StringAttr("auto_pad", "SAME_LOWER")},
       "strides"},
      {"MaxPool", {IntsAttr("kernel_shape", {0, 2})}, "kernel extents"},
      {"LpPool", {IntsAttr("kernel_shape", {2, 2}), IntsAttr("dilations", {1, -1})}, "dilations"},
      {"AveragePool", {IntsAttr("kernel_shape", {2, 2}), IntsAttr("pads", {0, 0, -2, 0})}, "pads"},
      {"MaxPool",
       {IntsAttr("kernel_shape", {huge, 2}), IntsAttr("dilations", {huge, 1})},
       "overflows"},
      {"Conv", {IntsAttr("strides", {2, 0})}, "strides"},
      {"ConvTranspose", {IntsAttr("dilations", {0, 1})}, "dilations"},
      {"Conv", {IntsAttr("strides", {1})}, "strides has 1 values where the window needs 2"},
      {"MaxPool", {IntsAttr("kernel_shape", {2, 2}), IntsAttr("pads", {0, 0, 0})}, "pads has 3"},
      {"ConvTranspose", {IntsAttr("output_padding", {1, 1, 1})}, "output_padding has 3"},
  };
  for (const Case& c : cases) {
    TestGraph t;
    t.Input("x", {1, 4, 8, 8});
    t.Input("w", {4, 4, 3, 3});
    const bool convolution = std::string(c.op).starts_with("Conv");
    t.Op(c.op, convolution ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"},
         {"y"}, c.attributes);
    const Status status = t.Infer();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.op << " " << c.fault;
    EXPECT_NE(status.message().find(c.fault), std::string::npos) << status.message();
  }
}

TEST(OpFamilyRules, BlocksizesWithoutAnExtentSquaredAreModelErrors) {
  for (const int64_t blocksize : {int64_t{0}, int64_t{-2}, int64_t{1} << 62}) {
    for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
      TestGraph t;
      t.Input("x", {1, 8, 4, 4});
      t.Op(op, {"x"}, {"y"}, {IntAttr("blocksize", blocksize)});
      const Status status = t.Infer();
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << op << " " << blocksize;
      EXPECT_NE(status.message().find("whose square fits in 64 bits"), std::string::npos)
          << status.message();
    }
  }
}

// libonnx's STFT rule reads three signal dims without checking the rank.
TEST(OpFamilyRules, StftOfASignalNotOfRankThreeIsAModelError) {
  TestGraph t;
  t.Input("signal", {5});
  t.Input("step", {}, DataType::kInt64);
  t.Op("STFT", {"signal", "step"}, {"y"});
  const Status status = t.Infer();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("STFT takes [batch, length, 1 or 2]"), std::string::npos)
      << status.message();
}

// libonnx's convolution rules index the weight by the input's rank.
TEST(OpFamilyRules, ConvolutionsNeedOneRankForInputAndWeight) {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    for (const bool rank_one : {true, false}) {
      TestGraph t;
      t.Input("x", {1, 2, 4, 4});
      if (rank_one) {
        t.Input("w", {2});
      } else {
        t.Input("w", {2, 2, 3});
      }
      t.Op(op, {"x", "w"}, {"y"});
      const Status status = t.Infer();
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << op << " " << rank_one;
      EXPECT_NE(status.message().find("need one rank of at least 3"), std::string::npos)
          << status.message();
    }
  }
}

TEST(OpFamilyRules, KernelShapesMustMatchTheInputRank) {
  for (const char* op : {"MaxUnpool", "ConvTranspose"}) {
    for (const std::vector<int64_t>& kernel : {std::vector<int64_t>{2}, {2, 2, 3}}) {
      TestGraph t;
      t.Input("x", {1, 2, 4, 4});
      // MaxUnpool's indices, ConvTranspose's weight.
      const bool unpool = std::string(op) == "MaxUnpool";
      t.Input("second", {1, 2, 4, 4}, unpool ? DataType::kInt64 : DataType::kFloat32);
      t.Op(op, {"x", "second"}, {"y"}, {IntsAttr("kernel_shape", kernel)});
      const Status status = t.Infer();
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << op << " " << kernel.size();
      EXPECT_NE(status.message().find("kernel rank does not match the input"), std::string::npos)
          << status.message();
    }
  }
}

TEST(OpFamilyRules, SplitNumOutputsMustCountTheOutputs) {
  TestGraph t;
  t.graph.opset_imports[""] = 18;
  t.Input("x", {6});
  t.Op("Split", {"x"}, {"a", "b", "c"}, {IntAttr("num_outputs", int64_t{1} << 40)});
  const Status status = t.Infer();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("num_outputs is 1099511627776 but the node has 3 outputs"),
            std::string::npos)
      << status.message();
}

TEST(OpFamilyRules, ReductionsAndArgMax) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 16});
  t.Int64s("axes", {1});
  t.Op("ReduceSum", {"x", "axes"}, {"keep"});
  t.Op("ReduceMean", {"x", "axes"}, {"drop"}, {IntAttr("keepdims", 0)});
  t.Op("ArgMax", {"x"}, {"arg"}, {IntAttr("axis", -1), IntAttr("keepdims", 0)});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("keep"), (Shape{t.Sym("batch"), Dim::Static(1), Dim::Static(16)}));
  EXPECT_EQ(t.ShapeOf("drop"), (Shape{t.Sym("batch"), Dim::Static(16)}));
  EXPECT_EQ(t.ShapeOf("arg"), (Shape{t.Sym("batch"), t.Sym("seq")}));
  EXPECT_EQ(t.V("arg").dtype, DataType::kInt64);
}

TEST(OpFamilyRules, ConcatAddsAlongTheAxisAndBroadcastsTheRest) {
  TestGraph t;
  t.Input("past", {"batch", 2, "past_seq", 64});
  t.Input("now", {"batch", 2, "seq", 64});
  t.Op("Concat", {"past", "now"}, {"all"}, {IntAttr("axis", 2)});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& all = t.ShapeOf("all");
  ASSERT_TRUE(all[2].is_symbolic());
  const Symbol& total = t.graph.symbol(all[2].symbol());
  EXPECT_EQ(total.origin, SymbolOrigin::kDerived);
  EXPECT_EQ(total.expr.op, SymbolExpr::Op::kAdd);
  EXPECT_EQ(all[0], t.Sym("batch"));
}

TEST(OpFamilyRules, SliceOfASymbolicAxis) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 64});
  t.Int64s("starts", {1, 0});
  t.Int64s("ends", {INT64_MAX, 32});
  t.Int64s("axes", {1, 2});
  t.Op("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  EXPECT_EQ(y[0], t.Sym("batch"));
  EXPECT_EQ(y[2], Dim::Static(32));
  ASSERT_TRUE(y[1].is_symbolic());
  const Symbol& rest = t.graph.symbol(y[1].symbol());
  EXPECT_EQ(rest.expr.op, SymbolExpr::Op::kSub);
}

TEST(OpFamilyRules, SplitGatherAndExpand) {
  TestGraph t;
  t.Input("x", {"batch", 12});
  t.Int64s("sizes", {4, 8});
  t.Op("Split", {"x", "sizes"}, {"a", "b"}, {IntAttr("axis", 1)});
  t.Input("table", {1000, 64});
  t.Input("ids", {"batch", "seq"}, DataType::kInt64);
  t.Op("Gather", {"table", "ids"}, {"emb"});
  t.Int64s("target", {3, 1, 1});
  t.Op("Expand", {"a", "target"}, {"wide"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("a"), (Shape{t.Sym("batch"), Dim::Static(4)}));
  EXPECT_EQ(t.ShapeOf("b"), (Shape{t.Sym("batch"), Dim::Static(8)}));
  EXPECT_EQ(t.ShapeOf("emb"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(64)}));
  EXPECT_EQ(t.ShapeOf("wide"), (Shape{Dim::Static(3), t.Sym("batch"), Dim::Static(4)}));
}

TEST(OpFamilyRules, NormalisationAndSoftmaxKeepTheShape) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 64});
  t.Input("scale", {64});
  t.Op("LayerNormalization", {"x", "scale"}, {"y", "mean", "inv"});
  t.Op("Softmax", {"y"}, {"p"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("p"), t.ShapeOf("x"));
  EXPECT_EQ(t.ShapeOf("mean"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(1)}));
}

TEST(OpFamilyRules, TopKRangeAndUniqueMintOrReadTheirExtents) {
  TestGraph t;
  t.Input("x", {"batch", 100});
  t.Int64s("k", {5});
  t.Op("TopK", {"x", "k"}, {"values", "indices"});
  t.Input("limit", {}, DataType::kInt64);
  t.Scalar("start", 0);
  t.Scalar("step", 1);
  t.Op("Range", {"start", "limit", "step"}, {"r"});
  t.Op("Unique", {"x"}, {"u", "ui", "uinv", "uc"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("indices"), (Shape{t.Sym("batch"), Dim::Static(5)}));
  EXPECT_EQ(t.V("indices").dtype, DataType::kInt64);
  const Dim r = t.ShapeOf("r")[0];
  ASSERT_TRUE(r.is_symbolic());
  EXPECT_EQ(t.graph.symbol(r.symbol()).origin, SymbolOrigin::kMinted);
  const Dim u = t.ShapeOf("u")[0];
  ASSERT_TRUE(u.is_symbolic());
  EXPECT_EQ(t.ShapeOf("uc")[0], u);
}

TEST(OpFamilyRules, UnknownInputRankLeavesTheOutputUnknownWithoutFailing) {
  TestGraph t;
  t.RankUnknownInput("x");
  t.Op("Relu", {"x"}, {"y"});
  t.Op("Shape", {"y"}, {"s"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_FALSE(t.V("y").shape.has_value());
  EXPECT_EQ(t.V("y").dtype, DataType::kFloat32);
  ShapeInferenceOptions strict;
  strict.fail_on_unknown_shape = true;
  TestGraph u;
  u.RankUnknownInput("x");
  u.Op("Relu", {"x"}, {"y"});
  EXPECT_FALSE(u.Infer(strict).ok());
}

TEST(OpFamilyRules, OpsWithoutOwnRuleUseTheOnnxSchema) {
  TestGraph t;
  t.Input("x", {2, 3, 3});
  t.Op("Det", {"x"}, {"d"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("d"), (Shape{Dim::Static(2)}));
  EXPECT_EQ(t.V("d").dtype, DataType::kFloat32);
}

TEST(OpFamilyRules, SchemaFallbackKeepsOurSymbols) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 4});
  t.Op("Det", {"x"}, {"d"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("d"), (Shape{t.Sym("batch")}));
}

TEST(OpFamilyRules, IfMergesBranchShapes) {
  TestGraph t;
  t.Input("cond", {}, DataType::kBool);
  t.Input("x", {"batch", 4});
  auto branch = [](const char* op) {
    auto body = std::make_shared<Graph>();
    Value outer;
    outer.name = "x";
    outer.is_outer_scope = true;
    ValueId x = body->AddValue(std::move(outer));
    Value out;
    out.name = std::string("y_") + op;
    ValueId y = body->AddValue(std::move(out));
    Node n;
    n.op_type = op;
    n.inputs = {x};
    n.outputs = {y};
    body->AddNode(std::move(n));
    body->outputs.push_back(y);
    return body;
  };
  Attribute then_branch, else_branch;
  then_branch.name = "then_branch";
  then_branch.type = AttributeType::kGraph;
  then_branch.graph = branch("Relu");
  else_branch.name = "else_branch";
  else_branch.type = AttributeType::kGraph;
  else_branch.graph = branch("Neg");
  t.Op("If", {"cond"}, {"y"}, {then_branch, else_branch});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), Dim::Static(4)}));
  EXPECT_EQ(t.V("y").dtype, DataType::kFloat32);
}

TEST(OpFamilyRules, LoopStacksScanOutputsOverAMintedTripCount) {
  TestGraph t;
  t.Input("trip", {}, DataType::kInt64);
  t.Input("cond", {}, DataType::kBool);
  t.Input("state", {"batch", 4});
  auto body = std::make_shared<Graph>();
  auto body_value = [&](const std::string& name, bool input) {
    Value v;
    v.name = name;
    v.is_graph_input = input;
    ValueId id = body->AddValue(std::move(v));
    if (input) body->inputs.push_back(id);
    return id;
  };
  body_value("iter", true);
  const ValueId cond_in = body_value("cond_in", true);
  const ValueId state_in = body_value("state_in", true);
  const ValueId cond_out = body_value("cond_out", false);
  const ValueId state_out = body_value("state_out", false);
  const ValueId scan_out = body_value("scan_out", false);
  auto body_node = [&](const char* op, std::vector<ValueId> in, ValueId out) {
    Node n;
    n.op_type = op;
    for (ValueId v : in) n.inputs.push_back(v);
    n.outputs.push_back(out);
    body->AddNode(std::move(n));
  };
  body_node("Identity", {cond_in}, cond_out);
  body_node("Relu", {state_in}, state_out);
  body_node("Identity", {state_in}, scan_out);
  body->outputs = {cond_out, state_out, scan_out};
  Attribute attr;
  attr.name = "body";
  attr.type = AttributeType::kGraph;
  attr.graph = body;
  t.Op("Loop", {"trip", "cond", "state"}, {"final", "stacked"}, {attr});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("final"), (Shape{t.Sym("batch"), Dim::Static(4)}));
  const Shape& stacked = t.ShapeOf("stacked");
  ASSERT_EQ(stacked.size(), 3u);
  ASSERT_TRUE(stacked[0].is_symbolic());
  EXPECT_EQ(t.graph.symbol(stacked[0].symbol()).origin, SymbolOrigin::kMinted);
  EXPECT_EQ(stacked[1], t.Sym("batch"));
  EXPECT_EQ(stacked[2], Dim::Static(4));
}

}  // namespace
}  // namespace nxrt::graph
