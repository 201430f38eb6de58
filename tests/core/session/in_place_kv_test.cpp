// With SessionOptions::fixed_capacity_kv, a present KV output bound at its
// past input's dims and dtype is written into the caller's past tensor. The
// mock's GroupQueryAttention sets present = past + 1 (reading each element
// before writing it), so the caller's tensor shows whether the write landed
// there: one more per run when aliased, unchanged when not.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt::DataType;
using nxrt::DeviceGraphSlot;
using nxrt::EagerFallbackReason;
using nxrt_test::kCapacity;
using nxrt_test::kHeadSize;
using nxrt_test::KvCacheModel;

constexpr size_t kPresentKey = 1;
constexpr size_t kPresentValue = 2;

std::vector<float> CacheValues(float start) {
  std::vector<float> values(kCapacity * kHeadSize);
  for (size_t i = 0; i < values.size(); ++i) values[i] = start + 0.5f * static_cast<float>(i);
  return values;
}

std::vector<float> Plus(std::vector<float> values, float n) {
  for (float& v : values) v += n;
  return values;
}

class InPlaceKv : public ::testing::Test {
 protected:
  void Create(const KvCacheModel& model, bool fixed_capacity_kv) {
    log_ = nxrt_test::TestLogId();
    nxrt::SessionOptions options = nxrt_test::MockOptions(log_);
    options.fixed_capacity_kv = fixed_capacity_kv;
    auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(),
                                         nxrt_test::BuildKvCacheModel(model), options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
    inputs_ = nxrt_test::KvCacheInputs(key_, value_);
  }

  void Run(std::optional<DeviceGraphSlot> slot = std::nullopt) {
    nxrt::Status status =
        slot ? session_->Run(*slot, inputs_, {}, outputs_) : session_->Run(inputs_, {}, outputs_);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  nxrt::Tensor& Past(size_t index) { return inputs_[3 + index].tensor; }

  // Runs `steps` times; each run adds one to the caller's past tensors, and
  // the present outputs asked for are copies of the updated cache.
  void ExpectEachStepUpdatesThePast(int steps) {
    for (int step = 1; step <= steps; ++step) {
      Run();
      EXPECT_EQ(nxrt_test::ValuesOf(Past(0)), Plus(key_, step)) << "step " << step;
      EXPECT_EQ(nxrt_test::ValuesOf(Past(1)), Plus(value_, step)) << "step " << step;
      EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(kPresentKey)), Plus(key_, step));
      EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(kPresentValue)), Plus(value_, step));
    }
  }

  const std::vector<float> key_ = CacheValues(1.0f);
  const std::vector<float> value_ = CacheValues(-4.0f);
  std::string log_;
  std::unique_ptr<nxrt::Session> session_;
  std::vector<nxrt::NamedTensor> inputs_;
  std::vector<nxrt::Tensor> outputs_;
};

TEST_F(InPlaceKv, FixedCapacityWritesThePresentIntoTheCallersPast) {
  Create({}, true);
  ExpectEachStepUpdatesThePast(3);
}

TEST_F(InPlaceKv, IdentityViewsOfTheUpdatedCacheCopyNothing) {
  Create({.presents_through_identity = true}, true);
  ExpectEachStepUpdatesThePast(3);
  const nxrt_test::OpComputes views = nxrt_test::CountComputes(log_, "Identity");
  EXPECT_EQ(views.all, 6u);
  EXPECT_EQ(views.in_place, 6u) << "each view reads the caller's updated past in place";
}

TEST_F(InPlaceKv, WithoutFixedCapacityThePastIsOnlyRead) {
  Create({}, false);
  for (int step = 1; step <= 2; ++step) {
    Run();
    EXPECT_EQ(nxrt_test::ValuesOf(Past(0)), key_);
    EXPECT_EQ(nxrt_test::ValuesOf(Past(1)), value_);
    EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(kPresentKey)), Plus(key_, 1));
    EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(kPresentValue)), Plus(value_, 1));
  }
}

TEST_F(InPlaceKv, AGrowingPresentGetsItsOwnBuffer) {
  Create({.present_at_capacity = false}, true);
  Run();
  EXPECT_EQ(nxrt_test::ValuesOf(Past(0)), key_);
  EXPECT_EQ(nxrt_test::ValuesOf(Past(1)), value_);
  // One new position after the past ones, left zero by the mock.
  const std::vector<int64_t> grown{1, 1, kCapacity + 1, kHeadSize};
  ASSERT_EQ(outputs_.at(kPresentKey).shape(), grown);
  std::vector<float> key = Plus(key_, 1);
  key.resize(key.size() + kHeadSize, 0.0f);
  EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(kPresentKey)), key);
}

TEST_F(InPlaceKv, ADtypeMismatchGetsItsOwnBuffer) {
  // The model leaves past_key's type open and declares float32 presents.
  Create({.past_key_dtype = DataType::kUndefined}, true);
  const std::vector<double> key(key_.begin(), key_.end());
  auto past_key = nxrt::Tensor::FromValues<double>({1, 1, kCapacity, kHeadSize}, key);
  ASSERT_TRUE(past_key.ok()) << past_key.status().ToString();
  Past(0) = std::move(past_key).value();
  Run();
  const auto kept = Past(0).values<double>();
  EXPECT_EQ(std::vector<double>(kept.begin(), kept.end()), key);
  EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(kPresentKey)), Plus(key_, 1));
  // The value cache matches and is still updated in place.
  EXPECT_EQ(nxrt_test::ValuesOf(Past(1)), Plus(value_, 1));
}

TEST_F(InPlaceKv, APastThatAnotherNodeReadsIsNotAliased) {
  Create({.past_key_read_elsewhere = true}, true);
  Run();
  EXPECT_EQ(nxrt_test::ValuesOf(Past(0)), key_);
  ASSERT_EQ(outputs_.size(), 4u);
  EXPECT_EQ(nxrt_test::ValuesOf(outputs_[3]), key_) << "Identity runs after the attention";
  EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(kPresentKey)), Plus(key_, 1));
  EXPECT_EQ(nxrt_test::ValuesOf(Past(1)), Plus(value_, 1));
}

TEST_F(InPlaceKv, CapturedReplaysUpdateTheCacheStepAfterStep) {
  Create({}, true);
  ASSERT_EQ(session_->placements().size(), 1u);
  ASSERT_TRUE(session_->placements()[0].capture_eligible);
  Run(DeviceGraphSlot::kPrimary);  // warm-up, eager
  Run(DeviceGraphSlot::kPrimary);  // captured, then replayed
  ASSERT_EQ(session_->device_graph_counters().captures, 1u);
  auto& mock = nxrt_test::MockLibrary::Get();
  mock.Clear(log_);
  constexpr int kSteps = 6;
  for (int step = 3; step <= 2 + kSteps; ++step) {
    Run(DeviceGraphSlot::kPrimary);
    EXPECT_EQ(nxrt_test::ValuesOf(Past(0)), Plus(key_, step)) << "step " << step;
    EXPECT_EQ(nxrt_test::ValuesOf(Past(1)), Plus(value_, step)) << "step " << step;
  }
  const nxrt::DeviceGraphCounters counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, 1u + kSteps);
  EXPECT_EQ(counters.resets, 0u);
  EXPECT_EQ(counters.fallbacks(EagerFallbackReason::kAddressChanged), 0u);
  const auto calls = mock.CallLog(log_);
  EXPECT_EQ(nxrt_test::CountPrefix(calls, "replay"), static_cast<size_t>(kSteps));
  EXPECT_EQ(nxrt_test::CountPrefix(calls, "compute"), 0u);
}

TEST(InPlaceKvAcrossEps, ASegmentReadingAPresentFollowsThePastTensorOfEachRun) {
  // The CPU EP fuses the MatMul and Add making the query into one kernel, so
  // plan positions trail node ids; GroupQueryAttention runs on the mock and
  // writes its present into the caller's past; the Neg reading that present
  // starts the CPU EP's next segment. Binding another past tensor moves the
  // present, and that segment's capture must follow it, not replay on the
  // tensor it was captured with.
  using nxrt_test::Dim;
  using nxrt_test::ModelBuilder;
  const std::vector<Dim> cache{int64_t{1}, int64_t{1}, std::string("cap"), kHeadSize};
  ModelBuilder builder;
  builder.Input("x", {int64_t{1}, int64_t{1}, int64_t{4}})
      .Constant("w", {4, 8}, std::vector<float>(32, 0.25f))
      .Input("r", {int64_t{1}, int64_t{1}, int64_t{8}})
      .Input("key", {int64_t{1}, int64_t{1}, kHeadSize})
      .Input("value", {int64_t{1}, int64_t{1}, kHeadSize})
      .Input("past_key", cache)
      .Input("past_value", cache)
      .Input("seqlens_k", {int64_t{1}}, nxrt::graph::DataType::kInt32)
      .Input("total_sequence_length", {}, nxrt::graph::DataType::kInt32)
      .Node("MatMul", {"x", "w"}, "xw")
      .Node("Add", {"xw", "r"}, "query")
      .NodeOf(
          "com.microsoft", "GroupQueryAttention",
          {"query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"},
          {"attended", "present_key", "present_value"}, {{"num_heads", 2}, {"kv_num_heads", 1}})
      .Declare("present_key", nxrt::graph::DataType::kFloat32, cache)
      .Declare("present_value", nxrt::graph::DataType::kFloat32, cache)
      .Node("Neg", {"present_key"}, "negated_key")
      .Output("present_value")
      .Output("negated_key");
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options;
  options.providers.push_back(nxrt_test::Mock(log, {{"claim", "GroupQueryAttention"}}));
  options.providers.push_back({"cpu", {}});
  options.fixed_capacity_kv = true;
  auto created = nxrt::Session::Create(nxrt_test::TestEnvironment(), builder.Build(), options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  nxrt::Session& session = **created;
  ASSERT_EQ(session.graph_rewrites().size(), 1u) << "MatMul and Add run as one kernel";

  std::vector<nxrt::NamedTensor> inputs = nxrt_test::KvCacheInputs(CacheValues(1), CacheValues(-4));
  inputs[0] = {"x", nxrt_test::Floats({1, 1, 4}, {1, 2, 3, 4})};
  inputs.push_back({"r", nxrt_test::Floats({1, 1, 8}, std::vector<float>(8, 1.0f))});
  std::vector<nxrt::Tensor> outputs;
  auto run_and_check = [&](const std::string& when) {
    const std::vector<float> before = nxrt_test::ValuesOf(inputs[3].tensor);
    nxrt::Status status = session.Run(DeviceGraphSlot::kPrimary, inputs, {}, outputs);
    ASSERT_TRUE(status.ok()) << status.ToString();
    std::vector<float> negated = Plus(before, 1);
    for (float& v : negated) v = -v;
    EXPECT_EQ(nxrt_test::ValuesOf(outputs.at(1)), negated) << when;
  };
  for (int run = 1; run <= 3; ++run) run_and_check("first past, run " + std::to_string(run));
  ASSERT_GE(session.device_graph_counters().captures, 1u);
  inputs[3].tensor = nxrt_test::Floats({1, 1, kCapacity, kHeadSize}, CacheValues(100));
  for (int run = 1; run <= 3; ++run) run_and_check("second past, run " + std::to_string(run));
}

}  // namespace
