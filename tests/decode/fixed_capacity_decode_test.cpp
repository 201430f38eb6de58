// The fixed-capacity decoder on the CPU EP with SessionOptions::
// fixed_capacity_kv: the caller passes the same past tensors at every step
// and the run appends to them in place. A second session without the option
// writes the presents to buffers of its own, which its caller copies back
// into the pasts; both must give the same logits and the same caches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "session/mock_session_support.hpp"

namespace {

constexpr int64_t kLayers = 4;
constexpr int64_t kKvHeads = 2;
constexpr int64_t kCapacity = 256;
constexpr int64_t kHeadSize = 32;
constexpr int64_t kVocabulary = 512;
constexpr int64_t kPromptLength = 5;
constexpr int kDecodeSteps = 6;

const char* const kDecoder = NXRT_BINARY_DIR "/models/decoder_fixed_kv256.onnx";

// One caller's decode state: input_ids, the capacity-wide attention mask
// and the past tensors, which stay the same objects from step to step.
class FixedFeeds {
 public:
  FixedFeeds() {
    inputs_.push_back({"input_ids", nxrt::Tensor()});
    inputs_.push_back({"attention_mask", Zeros(nxrt::DataType::kInt64, {1, kCapacity})});
    for (int64_t i = 0; i < 2 * kLayers; ++i) {
      inputs_.push_back({"past_key_values." + std::to_string(i / 2) + (i % 2 ? ".value" : ".key"),
                         Zeros(nxrt::DataType::kFloat32, {1, kKvHeads, kCapacity, kHeadSize})});
    }
  }

  std::vector<nxrt::NamedTensor>& Bind(const std::vector<int64_t>& tokens) {
    auto ids = nxrt::Tensor::FromValues<int64_t>({1, static_cast<int64_t>(tokens.size())}, tokens);
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    inputs_[0].tensor = std::move(ids).value();
    auto mask = inputs_[1].tensor.mutable_values<int64_t>();
    std::fill_n(mask.begin() + length_, tokens.size(), 1);
    length_ += static_cast<int64_t>(tokens.size());
    return inputs_;
  }

  nxrt::Tensor& past(size_t index) { return inputs_[2 + index].tensor; }

 private:
  static nxrt::Tensor Zeros(nxrt::DataType dtype, std::vector<int64_t> shape) {
    auto t = nxrt::Tensor::Zeros(dtype, std::move(shape));
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return std::move(t).value();
  }

  std::vector<nxrt::NamedTensor> inputs_;
  int64_t length_ = 0;
};

std::unique_ptr<nxrt::Session> Open(bool fixed_capacity_kv) {
  nxrt::SessionOptions options;
  options.providers.push_back({"cpu", {}});
  options.fixed_capacity_kv = fixed_capacity_kv;
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), kDecoder, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

std::vector<float> FloatsOf(const nxrt::Tensor& t) {
  const auto values = t.values<float>();
  return {values.begin(), values.end()};
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-5f * (1.0f + std::fabs(expected[i])))
        << what << " element " << i;
  }
}

TEST(FixedCapacityDecode, InPlaceCacheMatchesCopiedPresentsStepByStep) {
  if (!std::filesystem::exists(kDecoder)) {
    GTEST_SKIP() << kDecoder << " is missing; build the models target";
  }
  std::unique_ptr<nxrt::Session> in_place = Open(true);
  std::unique_ptr<nxrt::Session> copied = Open(false);
  ASSERT_TRUE(in_place && copied);
  FixedFeeds in_place_feeds;
  FixedFeeds copied_feeds;
  std::vector<nxrt::Tensor> in_place_out;
  std::vector<nxrt::Tensor> copied_out;
  const std::vector<std::string> logits_only{"logits"};

  std::vector<int64_t> tokens(kPromptLength);
  for (int64_t i = 0; i < kPromptLength; ++i) tokens[i] = (11 * i + 3) % kVocabulary;
  for (int step = 0; step <= kDecodeSteps; ++step) {
    const std::string what = "step " + std::to_string(step);
    // The prefill runs eagerly, decode steps on the Primary slot.
    nxrt::Status status =
        step == 0 ? in_place->Run(in_place_feeds.Bind(tokens), logits_only, in_place_out)
                  : in_place->Run(nxrt::DeviceGraphSlot::kPrimary, in_place_feeds.Bind(tokens),
                                  logits_only, in_place_out);
    ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
    status = copied->Run(copied_feeds.Bind(tokens), {}, copied_out);
    ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
    ASSERT_EQ(copied_out.size(), 1u + 2 * kLayers);
    ASSERT_NO_FATAL_FAILURE(
        ExpectNear(FloatsOf(in_place_out[0]), FloatsOf(copied_out[0]), what + " logits"));
    for (size_t k = 0; k < 2 * kLayers; ++k) {
      // The in-place caller's past is the present the other session returned.
      ASSERT_NO_FATAL_FAILURE(ExpectNear(FloatsOf(in_place_feeds.past(k)),
                                         FloatsOf(copied_out[1 + k]),
                                         what + " cache " + std::to_string(k)));
      copied_feeds.past(k) = std::move(copied_out[1 + k]);
    }
    const auto logits = copied_out[0].values<float>();
    const auto last = logits.end() - kVocabulary;
    tokens = {std::max_element(last, logits.end()) - last};
  }
}

}  // namespace
