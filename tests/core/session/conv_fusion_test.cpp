// A Conv and the nodes after it run as one kernel (com.microsoft FusedConv
// for Conv and Relu, pkg.nxrt ConvPool when a MaxPool follows) only when the
// provider that claimed them claims the fused node, nothing else reads what
// passes between them, and graph rewrites are on; the longer chain is
// offered first, and a failed claim leaves the nodes as they were.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Mock;
using nxrt_test::ModelBuilder;

// x -> Conv(w) -> c -> Relu -> y; `c_is_output` also makes c an output.
nxrt::graph::Graph ConvThenRelu(bool c_is_output = false) {
  ModelBuilder model;
  model.Input("x", {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}})
      .Constant("w", {1, 1, 2, 2}, {1, 2, 3, 4})
      .Node("Conv", {"x", "w"}, "c", "conv")
      .Node("Relu", {"c"}, "y", "relu")
      .Output("y");
  if (c_is_output) model.Output("c");
  return model.Build();
}

std::unique_ptr<nxrt::Session> Create(nxrt::graph::Graph graph,
                                      std::vector<nxrt::ExecutionProviderSpec> providers,
                                      bool rewrite_graph = true) {
  nxrt::SessionOptions options;
  options.providers = std::move(providers);
  options.rewrite_graph = rewrite_graph;
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), std::move(graph), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

// x -> Conv -> c -> [Relu -> r ->] MaxPool -> y, the MaxPool with its
// Indices output when `indices`.
nxrt::graph::Graph ConvThenPool(bool relu, bool indices = false) {
  ModelBuilder model;
  model.Input("x", {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}})
      .Constant("w", {1, 1, 2, 2}, {1, 2, 3, 4})
      .Node("Conv", {"x", "w"}, "c", "conv");
  if (relu) model.Node("Relu", {"c"}, "r", "relu");
  model.NodeOf("", "MaxPool", {relu ? "r" : "c"}, {"y", indices ? "i" : ""},
               {{"storage_order", 0}});
  model.Output("y");
  if (indices) model.Output("i");
  return model.Build();
}

size_t FusedClaims(const std::string& log, const char* verdict) {
  return nxrt_test::CountPrefix(nxrt_test::MockLibrary::Get().CallLog(log),
                                std::string("claim FusedConv ") + verdict);
}

TEST(ConvFusion, ProviderClaimingTheFusedNodeRunsThePairAsOne) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(ConvThenRelu(), {Mock(log, {{"claim", "Conv,Relu,FusedConv"}})});
  ASSERT_TRUE(session);
  EXPECT_EQ(FusedClaims(log, "claimed"), 1u);
  const auto& placements = session->placements();
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[0].fused_into, "");
  EXPECT_EQ(placements[1].fused_into, "conv");
  EXPECT_EQ(session->graph_rewrites(),
            (std::vector<std::string>{
                "Conv 'conv' and Relu 'relu' fused as com.microsoft::FusedConv on mock#1"}));
}

TEST(ConvFusion, ADeclinedFusedNodeLeavesThePair) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(ConvThenRelu(), {Mock(log, {{"claim", "Conv,Relu"}})});
  ASSERT_TRUE(session);
  EXPECT_EQ(FusedClaims(log, "declined"), 1u);
  EXPECT_EQ(session->placements()[1].fused_into, "");
  EXPECT_TRUE(session->graph_rewrites().empty());
}

TEST(ConvFusion, AFailedClaimOfTheFusedNodeLeavesThePair) {
  const std::string log = nxrt_test::TestLogId();
  // Claims in order: Conv, Relu, then the fused node.
  auto session =
      Create(ConvThenRelu(), {Mock(log, {{"claim", "Conv,Relu,FusedConv"}, {"fail_claim", "3"}})});
  ASSERT_TRUE(session);
  EXPECT_EQ(nxrt_test::CountPrefix(nxrt_test::MockLibrary::Get().CallLog(log), "fault claim 3"),
            1u);
  EXPECT_EQ(session->placements()[1].fused_into, "");
  EXPECT_TRUE(session->graph_rewrites().empty());
}

TEST(ConvFusion, PairSplitAcrossProvidersIsNotFused) {
  const std::string first = nxrt_test::TestLogId() + ".first";
  const std::string second = nxrt_test::TestLogId() + ".second";
  auto session = Create(ConvThenRelu(), {Mock(first, {{"claim", "Conv,FusedConv"}}),
                                         Mock(second, {{"claim", "Relu,FusedConv"}})});
  ASSERT_TRUE(session);
  EXPECT_EQ(FusedClaims(first, ""), 0u);
  EXPECT_EQ(FusedClaims(second, ""), 0u);
  EXPECT_EQ(session->placements()[1].fused_into, "");
}

TEST(ConvFusion, ConvOutputReadElsewhereOrRewritesOffIsNotFused) {
  const std::string log = nxrt_test::TestLogId();
  auto read_elsewhere = Create(ConvThenRelu(true), {Mock(log, {{"claim", "Conv,Relu,FusedConv"}})});
  ASSERT_TRUE(read_elsewhere);
  EXPECT_EQ(read_elsewhere->placements()[1].fused_into, "");
  auto rewrites_off =
      Create(ConvThenRelu(), {Mock(log, {{"claim", "Conv,Relu,FusedConv"}})}, false);
  ASSERT_TRUE(rewrites_off);
  EXPECT_EQ(rewrites_off->placements()[1].fused_into, "");
  EXPECT_EQ(FusedClaims(log, ""), 0u);
}

TEST(ConvFusion, ConvReluAndMaxPoolRunAsOneConvPool) {
  const std::string log = nxrt_test::TestLogId();
  auto session =
      Create(ConvThenPool(true), {Mock(log, {{"claim", "Conv,Relu,MaxPool,ConvPool,FusedConv"}})});
  ASSERT_TRUE(session);
  const auto& placements = session->placements();
  ASSERT_EQ(placements.size(), 3u);
  EXPECT_EQ(placements[1].fused_into, "conv");
  EXPECT_EQ(placements[2].fused_into, "conv");
  EXPECT_EQ(session->graph_rewrites(),
            (std::vector<std::string>{"Conv 'conv', Relu 'relu' and MaxPool 'y_MaxPool' fused as "
                                      "pkg.nxrt::ConvPool on mock#1"}));
  // The shorter fusion was never needed.
  EXPECT_EQ(FusedClaims(log, ""), 0u);
}

TEST(ConvFusion, ConvAndMaxPoolWithoutReluRunAsOneConvPool) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(ConvThenPool(false), {Mock(log, {{"claim", "Conv,MaxPool,ConvPool"}})});
  ASSERT_TRUE(session);
  EXPECT_EQ(session->placements()[1].fused_into, "conv");
  EXPECT_EQ(session->graph_rewrites(),
            (std::vector<std::string>{
                "Conv 'conv' and MaxPool 'y_MaxPool' fused as pkg.nxrt::ConvPool on mock#1"}));
}

TEST(ConvFusion, ADeclinedConvPoolFallsBackToFusedConv) {
  const std::string log = nxrt_test::TestLogId();
  auto session =
      Create(ConvThenPool(true), {Mock(log, {{"claim", "Conv,Relu,MaxPool,FusedConv"}})});
  ASSERT_TRUE(session);
  EXPECT_EQ(
      nxrt_test::CountPrefix(nxrt_test::MockLibrary::Get().CallLog(log), "claim ConvPool declined"),
      1u);
  EXPECT_EQ(FusedClaims(log, "claimed"), 1u);
  EXPECT_EQ(session->placements()[1].fused_into, "conv");
  EXPECT_EQ(session->placements()[2].fused_into, "");
}

TEST(ConvFusion, MaxPoolWithIndicesIsNotFused) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(ConvThenPool(true, true),
                        {Mock(log, {{"claim", "Conv,Relu,MaxPool,ConvPool,FusedConv"}})});
  ASSERT_TRUE(session);
  EXPECT_EQ(nxrt_test::CountPrefix(nxrt_test::MockLibrary::Get().CallLog(log), "claim ConvPool"),
            0u);
  EXPECT_EQ(session->placements()[1].fused_into, "conv");
  EXPECT_EQ(session->placements()[2].fused_into, "");
}

}  // namespace
