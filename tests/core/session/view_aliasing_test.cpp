// A view op (here Identity) hands its output its input's own bytes when a
// node of the graph made that input: the kernel sees the two share memory
// (the mock logs "in-place"), runs still give the right values as the
// inputs change, a graph output reaches the caller as a copy of its own,
// and a caller's tensor is never shared.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;
using nxrt_test::Mock;
using nxrt_test::ModelBuilder;
using nxrt_test::ValuesOf;

std::unique_ptr<nxrt::Session> Create(nxrt::graph::Graph graph, const std::string& log) {
  nxrt::SessionOptions options;
  options.providers.push_back(Mock(log));
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), std::move(graph), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

TEST(ViewAliasing, AViewOfANodesOutputSharesItsBytes) {
  const std::string log = nxrt_test::TestLogId();
  // y = -(identity(a + b))
  auto session = Create(ModelBuilder()
                            .Input("a", {int64_t{4}})
                            .Input("b", {int64_t{4}})
                            .Node("Add", {"a", "b"}, "s")
                            .Node("Identity", {"s"}, "v")
                            .Node("Neg", {"v"}, "y")
                            .Output("y")
                            .Build(),
                        log);
  ASSERT_TRUE(session);
  for (int run = 0; run < 4; ++run) {
    const float k = static_cast<float>(run);
    std::vector<nxrt::NamedTensor> inputs{{"a", Floats({4}, {1 + k, -2, 3, -4 * k})},
                                          {"b", Floats({4}, {1, k, -5, 1})}};
    auto outputs = session->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ(ValuesOf((*outputs)[0]), (std::vector<float>{-(2 + k), 2 - k, 2, 4 * k - 1}))
        << "run " << run;
  }
  const nxrt_test::OpComputes computes = nxrt_test::CountComputes(log, "Identity");
  EXPECT_EQ(computes.all, 4u);
  EXPECT_EQ(computes.in_place, 4u);
}

TEST(ViewAliasing, ACallersTensorIsNeverShared) {
  const std::string log = nxrt_test::TestLogId();
  // v = identity(a) reads the caller's tensor.
  auto session = Create(ModelBuilder()
                            .Input("a", {int64_t{2}})
                            .Node("Identity", {"a"}, "v")
                            .Node("Neg", {"v"}, "y")
                            .Output("y")
                            .Build(),
                        log);
  ASSERT_TRUE(session);
  std::vector<nxrt::NamedTensor> inputs{{"a", Floats({2}, {1, -2})}};
  auto outputs = session->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(ValuesOf((*outputs)[0]), (std::vector<float>{-1, 2}));
  const nxrt_test::OpComputes computes = nxrt_test::CountComputes(log, "Identity");
  EXPECT_EQ(computes.all, 1u);
  EXPECT_EQ(computes.in_place, 0u);
}

TEST(ViewAliasing, AGraphOutputViewSharesAndTheCallerGetsItsOwnCopy) {
  const std::string log = nxrt_test::TestLogId();
  // w = identity(-a) is an output: the run's buffer is shared, the caller's
  // tensor is a copy a later run leaves alone.
  auto session = Create(ModelBuilder()
                            .Input("a", {int64_t{2}})
                            .Node("Neg", {"a"}, "s")
                            .Node("Identity", {"s"}, "w")
                            .Output("w")
                            .Build(),
                        log);
  ASSERT_TRUE(session);
  std::vector<nxrt::NamedTensor> first_inputs{{"a", Floats({2}, {1, -2})}};
  auto first = session->Run(first_inputs);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::vector<nxrt::NamedTensor> second_inputs{{"a", Floats({2}, {5, 7})}};
  auto second = session->Run(second_inputs);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(ValuesOf((*first)[0]), (std::vector<float>{-1, 2}));
  EXPECT_EQ(ValuesOf((*second)[0]), (std::vector<float>{-5, -7}));
  const nxrt_test::OpComputes computes = nxrt_test::CountComputes(log, "Identity");
  EXPECT_EQ(computes.all, 2u);
  EXPECT_EQ(computes.in_place, 2u);
}

}  // namespace
