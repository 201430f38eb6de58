// Values whose lifetimes never overlap share buffers: a chain holds two
// intermediate buffers however long it is, a value read further on keeps its
// own bytes until then, and a shared buffer that grows under one value
// leaves every other value that uses it right in later runs, also in a
// device-graph segment, whose nodes are all bound before any computes.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;
using nxrt_test::Mock;
using nxrt_test::ModelBuilder;
using nxrt_test::ValuesOf;

std::unique_ptr<nxrt::Session> Create(nxrt::graph::Graph graph) {
  nxrt::SessionOptions options;
  options.providers.push_back(Mock(nxrt_test::TestLogId()));
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), std::move(graph), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

TEST(ValueBufferSharing, AChainHoldsTwoIntermediateBuffers) {
  constexpr int64_t kCount = 1024;
  constexpr size_t kBytes = kCount * sizeof(float);
  // Six Negs, so y = x: five intermediates and the output.
  ModelBuilder builder;
  builder.Input("x", {kCount}).Node("Neg", {"x"}, "v1");
  for (int i = 2; i <= 5; ++i) {
    builder.Node("Neg", {"v" + std::to_string(i - 1)}, "v" + std::to_string(i));
  }
  auto session = Create(builder.Node("Neg", {"v5"}, "y").Output("y").Build());
  ASSERT_TRUE(session);
  std::vector<float> x(kCount);
  for (int64_t i = 0; i < kCount; ++i) x[i] = static_cast<float>(i) - 500.0f;
  std::vector<nxrt::NamedTensor> inputs{{"x", Floats({kCount}, x)}};
  auto outputs = session->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(ValuesOf((*outputs)[0]), x);
  // Two buffers take turns among the five intermediates; the output keeps
  // its own, and the caller's x is read where it is.
  EXPECT_EQ(session->value_buffer_bytes(), 3 * kBytes);
}

TEST(ValueBufferSharing, AValueReadFurtherOnKeepsItsBytes) {
  // y = s + -(-(-s)) with s = a + b: s must survive the three Negs.
  auto session = Create(ModelBuilder()
                            .Input("a", {int64_t{3}})
                            .Input("b", {int64_t{3}})
                            .Node("Add", {"a", "b"}, "s")
                            .Node("Neg", {"s"}, "t")
                            .Node("Neg", {"t"}, "u")
                            .Node("Neg", {"u"}, "w")
                            .Node("Add", {"s", "w"}, "y")
                            .Output("y")
                            .Build());
  ASSERT_TRUE(session);
  for (int run = 0; run < 3; ++run) {
    const float k = static_cast<float>(run);
    std::vector<nxrt::NamedTensor> inputs{{"a", Floats({3}, {1 + k, 2, 3})},
                                          {"b", Floats({3}, {4, 5 * k, 6})}};
    auto outputs = session->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    // s + (-s) is zero only when s kept its own bytes.
    EXPECT_EQ(ValuesOf((*outputs)[0]), (std::vector<float>{0, 0, 0})) << "run " << run;
  }
}

// x [kWidth] and w [kRows, kWidth] through a = first(x), b = a + w, c = -b
// and y = -c, so y = w + a row by row. c is larger than a and takes a's
// buffer once a is dead, growing it during the first run.
constexpr int64_t kWidth = 64 * 1024, kRows = 2;

nxrt::graph::Graph GrowingChain(const std::string& first) {
  return ModelBuilder()
      .Input("x", {kWidth})
      .Input("w", {kRows, kWidth})
      .Node(first, {"x"}, "a")
      .Node("Add", {"a", "w"}, "b")
      .Node("Neg", {"b"}, "c")
      .Node("Neg", {"c"}, "y")
      .Output("y")
      .Build();
}

// Runs GrowingChain four times with new values in x and w (x never
// negative, so Relu(x) = x = -Neg(x)), on `slot` when given, and checks y.
// The inputs stay at one address, so a slot's segments are captured.
void RunGrowingChain(nxrt::Session& session, const std::string& first,
                     std::optional<nxrt::DeviceGraphSlot> slot) {
  std::vector<float> w(kRows * kWidth), x(kWidth);
  std::vector<nxrt::NamedTensor> inputs{
      {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {kWidth}, x.data(),
                                 x.size() * sizeof(float))},
      {"w", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {kRows, kWidth}, w.data(),
                                 w.size() * sizeof(float))}};
  const float sign = first == "Neg" ? -1.0f : 1.0f;
  std::vector<nxrt::Tensor> outputs;
  for (int run = 0; run < 4; ++run) {
    const float k = static_cast<float>(run);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 1000) * 0.5f - k;
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) + k;
    nxrt::Status status =
        slot ? session.Run(*slot, inputs, {}, outputs) : session.Run(inputs, {}, outputs);
    ASSERT_TRUE(status.ok()) << status.ToString();
    std::vector<float> expected(w.size());
    for (size_t i = 0; i < w.size(); ++i) expected[i] = w[i] + sign * x[i % kWidth];
    EXPECT_EQ(ValuesOf(outputs[0]), expected) << "run " << run;
  }
}

TEST(ValueBufferSharing, ABufferGrownForALaterValueLeavesAnEarlierOneRight) {
  // Later runs at the same shapes must write a into the grown buffer, not
  // the one freed (a buffer this large goes back to the system when freed,
  // so a write there faults).
  auto session = Create(GrowingChain("Neg"));
  ASSERT_TRUE(session);
  RunGrowingChain(*session, "Neg", std::nullopt);
}

TEST(ValueBufferSharing, ASegmentPreparedWholeSeesTheBufferItsLaterValuesGrew) {
  // On a device-graph slot a segment's nodes are all bound before any
  // computes, so c growing a's buffer must not leave a's node bound to the
  // freed one, neither in the first run nor in the capture and replays.
  auto session = Create(GrowingChain("Neg"));
  ASSERT_TRUE(session);
  RunGrowingChain(*session, "Neg", nxrt::DeviceGraphSlot::kPrimary);
  EXPECT_GE(session->device_graph_counters().replays, 1u);
}

TEST(ValueBufferSharing, AValueMadeBeforeASegmentKeepsItsBytesUntilTheSegmentReadsIt) {
  // a comes from the first EP's segment and is read last by the second's
  // Add; c, made later in that segment, must not take a's buffer, which it
  // would grow (and free) while the segment is bound, before Add reads a.
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options;
  options.providers.push_back(Mock(log + ".first", {{"claim", "Relu"}}));
  options.providers.push_back(Mock(log + ".second"));
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), GrowingChain("Relu"), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  RunGrowingChain(**session, "Relu", nxrt::DeviceGraphSlot::kPrimary);
  EXPECT_GE((*session)->device_graph_counters().replays, 2u);
}

}  // namespace
