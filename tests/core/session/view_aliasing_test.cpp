// A view op (here Identity) hands its output its input's own bytes when a
// node of the graph made that input: the kernel sees the two share memory
// (the mock logs "in-place"), runs still give the right values as the
// inputs change, and a caller's tensor or a graph output is never shared.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;
using nxrt_test::Mock;
using nxrt_test::ModelBuilder;
using nxrt_test::ValuesOf;

// Computes of the Identity kernels, and how many of them ran in place. The
// log names a kernel's op when it is made ("create_kernel Identity k3 ...")
// and only its tag when it runs ("compute k3").
struct IdentityComputes {
  size_t all = 0;
  size_t in_place = 0;
};

IdentityComputes CountIdentityComputes(const std::string& log) {
  const std::vector<std::string> lines = nxrt_test::MockLibrary::Get().CallLog(log);
  std::vector<std::string> tags;
  for (const std::string& line : lines) {
    const std::string prefix = "create_kernel Identity ";
    if (line.starts_with(prefix)) {
      tags.push_back(line.substr(prefix.size(), line.find(' ', prefix.size()) - prefix.size()));
    }
  }
  IdentityComputes counts;
  for (const std::string& line : lines) {
    for (const std::string& tag : tags) {
      counts.all += line == "compute " + tag || line == "compute " + tag + " in-place";
      counts.in_place += line == "compute " + tag + " in-place";
    }
  }
  return counts;
}

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
  const IdentityComputes computes = CountIdentityComputes(log);
  EXPECT_EQ(computes.all, 4u);
  EXPECT_EQ(computes.in_place, 4u);
}

TEST(ViewAliasing, CallersTensorsAndGraphOutputsKeepTheirOwnBytes) {
  const std::string log = nxrt_test::TestLogId();
  // v = identity(a) reads the caller's tensor; w = identity(s) is an output.
  auto session = Create(ModelBuilder()
                            .Input("a", {int64_t{2}})
                            .Node("Identity", {"a"}, "v")
                            .Node("Neg", {"v"}, "s")
                            .Node("Identity", {"s"}, "w")
                            .Output("w")
                            .Build(),
                        log);
  ASSERT_TRUE(session);
  std::vector<nxrt::NamedTensor> inputs{{"a", Floats({2}, {1, -2})}};
  auto outputs = session->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(ValuesOf((*outputs)[0]), (std::vector<float>{-1, 2}));
  const IdentityComputes computes = CountIdentityComputes(log);
  EXPECT_EQ(computes.all, 2u);
  EXPECT_EQ(computes.in_place, 0u);
}

}  // namespace
