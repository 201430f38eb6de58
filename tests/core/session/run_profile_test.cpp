// RunOptions::profile on the mock EP: one event per dispatched node, in
// order, naming the op, the EP and the input dims, timed in sequence; a
// captured segment adds one event per run saying whether it warmed up, was
// captured or replayed; a run without a profile records nothing anywhere.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "session/mock_session_support.hpp"

namespace {

using nxrt::ProfileEvent;

class RunProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = nxrt_test::TestLogId();
    session_ = nxrt_test::ChainSession(nxrt_test::MockOptions(log_));
    ASSERT_NE(session_, nullptr);
  }

  void Run(std::optional<nxrt::DeviceGraphSlot> slot, nxrt::RunProfile* profile) {
    // Borrowed, so the bound address repeats and a segment can capture.
    std::vector<nxrt::NamedTensor> inputs{
        {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {2, 4}, x_.data(),
                                   x_.size() * sizeof(float))}};
    nxrt::RunOptions options;
    options.profile = profile;
    std::vector<nxrt::Tensor> outputs;
    const nxrt::Status status = slot ? session_->Run(*slot, inputs, {}, outputs, options)
                                     : session_->Run(inputs, {}, outputs, options);
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(nxrt_test::ValuesOf(outputs[0]), nxrt_test::ChainExpected(x_));
  }

  std::vector<float> x_{1, -2, 3, -4, 0.5f, 6, -7, 8};
  std::string log_;
  std::unique_ptr<nxrt::Session> session_;
};

void ExpectChainNodes(const std::vector<ProfileEvent>& events, size_t first) {
  const std::vector<std::string> ops{"Add", "Mul", "Relu"};
  const std::vector<std::string> names{"s_Add", "p_Mul", "y_Relu"};
  const std::vector<std::string> shapes{"[2,4] [4]", "[2,4] [2,4]", "[2,4]"};
  ASSERT_GE(events.size(), first + ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const ProfileEvent& event = events[first + i];
    EXPECT_EQ(event.kind, ProfileEvent::Kind::kNode);
    EXPECT_EQ(event.op_type, ops[i]);
    EXPECT_EQ(event.node, names[i]);
    EXPECT_EQ(event.provider, "mock#1");
    EXPECT_EQ(event.input_shapes, shapes[i]);
    EXPECT_EQ(event.depth, 0u);
    EXPECT_EQ(event.nodes, 1u);
    EXPECT_GE(event.duration.count(), 0);
    if (i > 0) {
      const ProfileEvent& before = events[first + i - 1];
      EXPECT_GE(event.start, before.start + before.duration) << "events overlap at " << i;
    }
  }
}

TEST_F(RunProfileTest, EachDispatchedNodeAddsOneEventInOrder) {
  nxrt::RunProfile profile;
  Run(std::nullopt, &profile);
  ASSERT_EQ(profile.events.size(), 3u);
  ExpectChainNodes(profile.events, 0);
  // The second run dispatches settled nodes, and appends as many events.
  Run(std::nullopt, &profile);
  ASSERT_EQ(profile.events.size(), 6u);
  ExpectChainNodes(profile.events, 3);
  EXPECT_GE(profile.events[3].start, profile.events[2].start + profile.events[2].duration);
}

TEST_F(RunProfileTest, ARunWithoutAProfileRecordsNothing) {
  nxrt::RunProfile profile;
  Run(std::nullopt, &profile);
  Run(std::nullopt, nullptr);
  Run(nxrt::DeviceGraphSlot::kPrimary, nullptr);
  EXPECT_EQ(profile.events.size(), 3u);
}

TEST_F(RunProfileTest, ASegmentAddsOneEventSayingWhatItsRunDid) {
  nxrt::RunProfile profile;
  for (int run = 0; run < 4; ++run) Run(nxrt::DeviceGraphSlot::kPrimary, &profile);
  const std::vector<ProfileEvent::Kind> kinds{
      ProfileEvent::Kind::kEagerSegment, ProfileEvent::Kind::kCapture, ProfileEvent::Kind::kReplay,
      ProfileEvent::Kind::kReplay};
  ASSERT_EQ(profile.events.size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    const ProfileEvent& event = profile.events[i];
    EXPECT_EQ(event.kind, kinds[i])
        << "run " << i << ": " << nxrt::ProfileEventKindName(event.kind);
    EXPECT_EQ(event.nodes, 3u);
    EXPECT_EQ(event.op_type, "Add");  // the segment's first node
    EXPECT_EQ(event.provider, "mock#1");
    EXPECT_TRUE(event.input_shapes.empty());
  }
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, 3u);
}

}  // namespace
