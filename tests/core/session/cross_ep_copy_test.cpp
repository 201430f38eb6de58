// Values that cross from one EP's memory into another's. libep_mock_device.so
// is the mock with memory of its own: its kernels refuse any buffer outside
// that memory and its copy functions refuse the wrong direction, so these
// runs fail if the host forgets a transfer, makes it the wrong way, or
// replays a captured segment on stale copies.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt::DeviceGraphSlot;
using nxrt_test::Chain;
using nxrt_test::ChainExpected;
using nxrt_test::CountPrefix;
using nxrt_test::MockLibrary;

nxrt::ExecutionProviderSpec MockDevice(const std::string& log,
                                       std::vector<std::pair<std::string, std::string>> options) {
  options.emplace_back("log", log);
  return {"mock_device", std::move(options)};
}

nxrt::SessionOptions OnMockDevice(const std::string& log) {
  nxrt::SessionOptions options;
  options.providers.push_back(MockDevice(log, {}));
  return options;
}

// Past caches of BuildKvCacheModel's shape, with distinct values.
std::vector<float> KeyCache() {
  std::vector<float> key(nxrt_test::kCapacity * nxrt_test::kHeadSize);
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<float>(i);
  return key;
}
std::vector<float> ValueCache() {
  std::vector<float> value = KeyCache();
  for (float& v : value) v *= -2.0f;
  return value;
}

class CrossEpCopies : public ::testing::Test {
 protected:
  void SetUp() override { log_ = nxrt_test::TestLogId(); }

  void Create(nxrt::graph::Graph graph, nxrt::SessionOptions options) {
    auto session =
        nxrt::Session::Create(nxrt_test::TestEnvironment(), std::move(graph), std::move(options));
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
  }

  // Runs Chain with x of shape [1, 4], on `slot` when given, and checks y.
  void RunChain(const std::vector<float>& x, std::optional<DeviceGraphSlot> slot = std::nullopt) {
    std::vector<nxrt::NamedTensor> inputs{{"x", nxrt_test::Floats({1, 4}, x)}};
    nxrt::Status status =
        slot ? session_->Run(*slot, inputs, {}, outputs_) : session_->Run(inputs, {}, outputs_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(outputs_.size(), 1u);
    EXPECT_EQ(outputs_[0].memory(), nxrt::MemoryKind::kHost);
    EXPECT_EQ(nxrt_test::ValuesOf(outputs_[0]), ChainExpected(x));
  }

  std::vector<std::string> DeviceLog() const { return MockLibrary::Device().CallLog(log_); }

  std::string log_;
  std::unique_ptr<nxrt::Session> session_;
  std::vector<nxrt::Tensor> outputs_;
};

TEST_F(CrossEpCopies, ValuesMoveBetweenHostAndDeviceEpsThroughTheCopyFunctions) {
  // Add and Relu on the device EP, Mul between them on the host mock: x goes
  // in, s comes out, p goes back in and y comes out.
  nxrt::SessionOptions options;
  options.providers.push_back(MockDevice(log_, {{"claim", "Add,Relu"}}));
  options.providers.push_back(nxrt_test::Mock(log_ + ".host", {}));
  Create(Chain(), options);
  const std::vector<std::vector<float>> xs{{1, 2, 3, 4}, {-1, 0.5f, 3, -7}, {9, -9, 0, 2}};
  size_t to_device = 0;
  size_t to_host = 0;
  for (const auto& x : xs) {
    RunChain(x);
    const auto log = DeviceLog();
    EXPECT_GE(CountPrefix(log, "copy_to_device"), to_device + 2) << "x and p copied in";
    EXPECT_GE(CountPrefix(log, "copy_to_host"), to_host + 2) << "s and y copied out";
    to_device = CountPrefix(log, "copy_to_device");
    to_host = CountPrefix(log, "copy_to_host");
  }
}

TEST_F(CrossEpCopies, EveryReplayRefreshesTheCopiesItReads) {
  Create(Chain(), OnMockDevice(log_));
  const std::vector<std::vector<float>> xs{
      {1, 2, 3, 4}, {5, -6, 7, -8}, {-1, 0.5f, 3, 7}, {0, 1, 0, 1}};
  for (const auto& x : xs) RunChain(x, DeviceGraphSlot::kPrimary);
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, xs.size() - 1);
  EXPECT_EQ(CountPrefix(DeviceLog(), "replay"), xs.size() - 1);
}

TEST_F(CrossEpCopies, CopiesOfInputsAndConstantsMidChainStayInOneSegment) {
  // z and d are first read halfway along the chain; their copies run before
  // the segment computes, so the whole chain is one capture, and each
  // replay reads z's fresh copy.
  Create(nxrt_test::ModelBuilder()
             .Input("x", {int64_t{1}, int64_t{4}})
             .Input("z", {int64_t{1}, int64_t{4}})
             .Constant("c", {4}, {1, -1, 2, -2})
             .Constant("d", {4}, {0.5f, 0.25f, -3, 1})
             .Node("Add", {"x", "c"}, "s")
             .Node("Mul", {"s", "z"}, "p")
             .Node("Sub", {"p", "d"}, "q")
             .Node("Relu", {"q"}, "y")
             .Output("y")
             .Build(),
         OnMockDevice(log_));
  const std::vector<std::vector<float>> xs{
      {1, 2, 3, 4}, {5, -6, 7, -8}, {-1, 0.5f, 3, 7}, {0, 1, 0, 1}};
  for (size_t run = 0; run < xs.size(); ++run) {
    const std::vector<float>& x = xs[run];
    const std::vector<float> z{2, -1, static_cast<float>(run), 0.5f};
    std::vector<nxrt::NamedTensor> inputs{{"x", nxrt_test::Floats({1, 4}, x)},
                                          {"z", nxrt_test::Floats({1, 4}, z)}};
    nxrt::Status status = session_->Run(DeviceGraphSlot::kPrimary, inputs, {}, outputs_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    const float c[4] = {1, -1, 2, -2}, d[4] = {0.5f, 0.25f, -3, 1};
    std::vector<float> expected(4);
    for (size_t i = 0; i < 4; ++i) expected[i] = std::max(0.0f, (x[i] + c[i]) * z[i] - d[i]);
    EXPECT_EQ(nxrt_test::ValuesOf(outputs_[0]), expected) << "run " << run;
  }
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, xs.size() - 1);
}

TEST_F(CrossEpCopies, FixedCapacityKvIsWrittenBackFromTheEpsMemory) {
  // The mock's GroupQueryAttention adds one to the cache in place, in device
  // memory; the caller's past, in host memory, must see every step.
  nxrt::SessionOptions options = OnMockDevice(log_);
  options.fixed_capacity_kv = true;
  Create(nxrt_test::BuildKvCacheModel({}), options);
  std::vector<float> key = KeyCache(), value = ValueCache();
  auto inputs = nxrt_test::KvCacheInputs(key, value);
  for (int step = 1; step <= 3; ++step) {
    nxrt::Status status = session_->Run(inputs, {}, outputs_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    for (float& k : key) k += 1.0f;
    for (float& v : value) v += 1.0f;
    EXPECT_EQ(nxrt_test::ValuesOf(inputs[3].tensor), key) << "step " << step;
    EXPECT_EQ(nxrt_test::ValuesOf(inputs[4].tensor), value) << "step " << step;
    EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(1)), key) << "step " << step;
  }
}

TEST_F(CrossEpCopies, AKvCacheKeptInTheEpsMemoryIsCopiedInOnlyWhenBound) {
  // The mock's GroupQueryAttention adds one to the cache in place. With the
  // cache kept in device memory, the caller's past is copied in on the first
  // run and on binding another tensor, never copied back, and the presents
  // still show every step.
  nxrt::SessionOptions options = OnMockDevice(log_);
  options.fixed_capacity_kv = true;
  options.kv_in_ep_memory = true;
  Create(nxrt_test::BuildKvCacheModel({}), options);
  const size_t cache_bytes = nxrt_test::kCapacity * nxrt_test::kHeadSize * sizeof(float);
  const std::string cache_copy_in = "copy_to_device " + std::to_string(cache_bytes);
  std::vector<float> key = KeyCache(), value = ValueCache();
  auto inputs = nxrt_test::KvCacheInputs(key, value);
  std::vector<float> device_key = key;
  for (int step = 1; step <= 3; ++step) {
    nxrt::Status status = session_->Run(inputs, {}, outputs_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    for (float& k : device_key) k += 1.0f;
    EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(1)), device_key) << "step " << step;
    EXPECT_EQ(nxrt_test::ValuesOf(inputs[3].tensor), key) << "the caller's past is not written";
  }
  EXPECT_EQ(CountPrefix(DeviceLog(), cache_copy_in), 2u) << "key and value, once";
  EXPECT_EQ(CountPrefix(DeviceLog(), "copy_to_host " + std::to_string(cache_bytes)), 6u)
      << "the present outputs asked for, and no write-back";

  // Another past tensor starts the cache over from its contents.
  std::vector<float> fresh(key.size(), 10.0f);
  inputs[3].tensor = nxrt_test::Floats({1, 1, nxrt_test::kCapacity, nxrt_test::kHeadSize}, fresh);
  nxrt::Status status = session_->Run(inputs, {}, outputs_);
  ASSERT_TRUE(status.ok()) << status.ToString();
  for (float& k : fresh) k += 1.0f;
  EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(1)), fresh);
  EXPECT_EQ(CountPrefix(DeviceLog(), cache_copy_in), 3u) << "the new key only";
}

}  // namespace
