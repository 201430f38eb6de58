// A MatMul and the Add, activation and Add after it run as one pkg.nxrt
// MatMulAdd kernel only when the provider that placed them claims the fused
// node, each Add keeps the product's shape, and each Add's other operand is
// ready before the MatMul runs; the longest chain is offered first, then
// each shorter one. A Gemm of opset 7 or later and its Relu run as one
// com.microsoft FusedGemm.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Mock;
using nxrt_test::ModelBuilder;

const char* const kClaimAll = "MatMul,Add,Relu,MatMulAdd";

// x [N,2] -> MatMul(w) -> p -> Add(bias) -> s -> Relu -> r -> Add(x2) -> y.
nxrt::graph::Graph FullChain() {
  return ModelBuilder()
      .Input("x", {std::string("N"), int64_t{2}})
      .Input("x2", {std::string("N"), int64_t{3}})
      .Constant("w", {2, 3}, {1, 2, 3, 4, 5, 6})
      .Constant("bias", {3}, {1, -1, 2})
      .Node("MatMul", {"x", "w"}, "p", "matmul")
      .Node("Add", {"p", "bias"}, "s", "bias_add")
      .Node("Relu", {"s"}, "r", "relu")
      .Node("Add", {"r", "x2"}, "y", "residual")
      .Output("y")
      .Build();
}

std::unique_ptr<nxrt::Session> Create(nxrt::graph::Graph graph, const std::string& log,
                                      std::vector<std::pair<std::string, std::string>> options) {
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), std::move(graph),
                                       nxrt_test::MockOptions(log, std::move(options)));
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

size_t Offers(const std::string& log) {
  return nxrt_test::CountPrefix(nxrt_test::MockLibrary::Get().CallLog(log), "claim MatMulAdd");
}

TEST(MatMulFusion, TheWholeChainRunsAsOneNode) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(FullChain(), log, {{"claim", kClaimAll}});
  ASSERT_TRUE(session);
  EXPECT_EQ(session->graph_rewrites(),
            (std::vector<std::string>{"MatMul 'matmul', Add 'bias_add', Relu 'relu' and Add "
                                      "'residual' fused as pkg.nxrt::MatMulAdd on mock#1"}));
  const auto& placements = session->placements();
  ASSERT_EQ(placements.size(), 4u);
  EXPECT_EQ(placements[0].fused_into, "");
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(placements[i].fused_into, "matmul");
  EXPECT_EQ(Offers(log), 1u);
}

TEST(MatMulFusion, AFailedOfferIsFollowedByTheNextShorterChain) {
  const std::string log = nxrt_test::TestLogId();
  // Claims in order: the four nodes, then the fused offers, longest first.
  auto session = Create(FullChain(), log, {{"claim", kClaimAll}, {"fail_claim", "5"}});
  ASSERT_TRUE(session);
  EXPECT_EQ(session->graph_rewrites(),
            (std::vector<std::string>{"MatMul 'matmul', Add 'bias_add' and Relu 'relu' fused as "
                                      "pkg.nxrt::MatMulAdd on mock#1"}));
  EXPECT_EQ(session->placements()[3].fused_into, "");
  EXPECT_EQ(nxrt_test::CountPrefix(nxrt_test::MockLibrary::Get().CallLog(log), "fault claim 5"),
            1u);
  EXPECT_EQ(Offers(log), 1u);  // the failed offer logs its fault instead
}

TEST(MatMulFusion, ADeclinedFusedNodeLeavesTheChainAfterEveryOffer) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(FullChain(), log, {{"claim", "MatMul,Add,Relu"}});
  ASSERT_TRUE(session);
  EXPECT_TRUE(session->graph_rewrites().empty());
  EXPECT_EQ(Offers(log), 3u);  // with the residual, with the Relu, the MatMul and Add alone
}

TEST(MatMulFusion, AnAddThatWidensTheProductIsNotFused) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(ModelBuilder()
                            .Input("x", {int64_t{2}, int64_t{2}})
                            .Input("wide", {int64_t{4}, int64_t{2}, int64_t{3}})
                            .Constant("w", {2, 3}, {1, 2, 3, 4, 5, 6})
                            .Node("MatMul", {"x", "w"}, "p", "matmul")
                            .Node("Add", {"p", "wide"}, "y", "add")
                            .Output("y")
                            .Build(),
                        log, {{"claim", kClaimAll}});
  ASSERT_TRUE(session);
  EXPECT_TRUE(session->graph_rewrites().empty());
  EXPECT_EQ(Offers(log), 0u);
}

TEST(MatMulFusion, AnOperandMadeAfterTheMatMulOrTheProductItselfIsNotFused) {
  const std::string log = nxrt_test::TestLogId();
  auto later = Create(ModelBuilder()
                          .Input("x", {int64_t{2}, int64_t{2}})
                          .Input("z", {int64_t{2}, int64_t{3}})
                          .Constant("w", {2, 3}, {1, 2, 3, 4, 5, 6})
                          .Node("MatMul", {"x", "w"}, "p", "matmul")
                          .Node("Relu", {"z"}, "later", "relu")
                          .Node("Add", {"p", "later"}, "y", "add")
                          .Output("y")
                          .Build(),
                      log, {{"claim", kClaimAll}});
  ASSERT_TRUE(later);
  EXPECT_TRUE(later->graph_rewrites().empty());
  auto doubled = Create(ModelBuilder()
                            .Input("x", {int64_t{2}, int64_t{2}})
                            .Constant("w", {2, 3}, {1, 2, 3, 4, 5, 6})
                            .Node("MatMul", {"x", "w"}, "p", "matmul")
                            .Node("Add", {"p", "p"}, "y", "add")
                            .Output("y")
                            .Build(),
                        log, {{"claim", kClaimAll}});
  ASSERT_TRUE(doubled);
  EXPECT_TRUE(doubled->graph_rewrites().empty());
  EXPECT_EQ(Offers(log), 0u);
}

TEST(MatMulFusion, RewritesOffOrAProductReadElsewhereIsNotFused) {
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options = nxrt_test::MockOptions(log, {{"claim", kClaimAll}});
  options.rewrite_graph = false;
  auto off = nxrt::Session::Create(nxrt_test::TestEnvironment(), FullChain(), options);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_TRUE((*off)->graph_rewrites().empty());
  nxrt::graph::Graph read_elsewhere = FullChain();
  read_elsewhere.outputs.push_back(read_elsewhere.FindValue("p").value());
  auto session = Create(std::move(read_elsewhere), log, {{"claim", kClaimAll}});
  ASSERT_TRUE(session);
  EXPECT_TRUE(session->graph_rewrites().empty());
  EXPECT_EQ(Offers(log), 0u);
}

// x [2,2] -> Gemm(w, c) -> p -> Relu -> y, at default-domain `opset`.
nxrt::graph::Graph GemmRelu(int64_t opset) {
  return ModelBuilder(opset)
      .Input("x", {int64_t{2}, int64_t{2}})
      .Constant("w", {2, 3}, {1, 2, 3, 4, 5, 6})
      .Constant("c", {2, 3}, {1, -1, 2, 0, 0, 0})
      .Node("Gemm", {"x", "w", "c"}, "p", "gemm")
      .Node("Relu", {"p"}, "y", "relu")
      .Output("y")
      .Build();
}

TEST(GemmFusion, AGemmAndItsReluRunAsOneFusedGemm) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(GemmRelu(13), log, {{"claim", "Gemm,Relu,FusedGemm"}});
  ASSERT_TRUE(session);
  EXPECT_EQ(session->graph_rewrites(),
            (std::vector<std::string>{
                "Gemm 'gemm' and Relu 'relu' fused as com.microsoft::FusedGemm on mock#1"}));
  EXPECT_EQ(session->placements()[1].fused_into, "gemm");
}

TEST(GemmFusion, AGemmBeforeOpset7IsNotFused) {
  const std::string log = nxrt_test::TestLogId();
  auto session = Create(GemmRelu(6), log, {{"claim", "Gemm,Relu,FusedGemm"}});
  ASSERT_TRUE(session);
  EXPECT_TRUE(session->graph_rewrites().empty());
  EXPECT_EQ(nxrt_test::CountPrefix(nxrt_test::MockLibrary::Get().CallLog(log), "claim FusedGemm"),
            0u);
}

}  // namespace
