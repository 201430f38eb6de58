// Decoding prompts of 200 different lengths in one session of the bundled
// decoder keeps the kernel cache within its per-node bound, and no kernel an
// eviction destroys is still recorded in a captured device graph: the mock EP
// (Add and Mul, capture-safe, with device graphs) logs its captures, resets
// and kernel destructions, and the log must show every graph that recorded a
// kernel reset before that kernel goes.
//
// Each prompt's decode steps touch the decode-shaped kernels last, so the
// least recently used variants evicted during the prompts are prefill ones
// no capture recorded; and each growing-cache step makes new attention
// kernel variants, whose evictions reset every capture within the step
// anyway. So the test ends with a decode step repeated at known shapes,
// whose captures stay live, and a few prefills that push out the decode
// kernels those captures recorded: only the cache's reset before evicting
// can reset them in time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "session/mock_session_support.hpp"

namespace {

constexpr size_t kVariantsPerNode = 4;
constexpr int64_t kPromptLengths = 200;
constexpr int kDecodeSteps = 2;
constexpr int64_t kLateDecodeLength = 8;
constexpr int64_t kLayers = 4;
constexpr int64_t kKvHeads = 2;
constexpr int64_t kHeadSize = 32;
constexpr int64_t kVocabulary = 512;

const char* const kDecoder = NXRT_BINARY_DIR "/models/decoder.onnx";

nxrt::Tensor Int64s(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  auto t = nxrt::Tensor::FromValues<int64_t>(std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

std::string PastName(int64_t layer, bool key) {
  return "past_key_values." + std::to_string(layer) + (key ? ".key" : ".value");
}

// The decoder's inputs for `tokens` after `past` cached positions, the
// caches taken from `caches` (key, value per layer).
std::vector<nxrt::NamedTensor> DecoderInputs(const std::vector<int64_t>& tokens, int64_t past,
                                             std::vector<nxrt::Tensor> caches) {
  const int64_t count = static_cast<int64_t>(tokens.size());
  std::vector<nxrt::NamedTensor> inputs;
  inputs.push_back({"input_ids", Int64s({1, count}, tokens)});
  inputs.push_back(
      {"attention_mask", Int64s({1, past + count}, std::vector<int64_t>(past + count, 1))});
  for (int64_t i = 0; i < 2 * kLayers; ++i) {
    inputs.push_back({PastName(i / 2, i % 2 == 0), std::move(caches[i])});
  }
  return inputs;
}

std::vector<nxrt::Tensor> EmptyCaches() {
  std::vector<nxrt::Tensor> caches;
  for (int64_t i = 0; i < 2 * kLayers; ++i) {
    auto t = nxrt::Tensor::Zeros(nxrt::DataType::kFloat32, {1, kKvHeads, 0, kHeadSize});
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    caches.push_back(std::move(t).value());
  }
  return caches;
}

// The most likely next token after the last position of `logits`.
int64_t NextToken(const nxrt::Tensor& logits) {
  const auto values = logits.values<float>();
  const auto last = values.end() - kVocabulary;
  return std::max_element(last, values.end()) - last;
}

struct CaptureAudit {
  size_t captures = 0;
  size_t evicted_kernels = 0;
  size_t evicted_after_recording = 0;  // destroyed kernels a capture had recorded
  std::vector<std::string> violations;
};

// Walks the mock's call log: between begin_capture and end_capture the
// recorded kernels belong to the token end_capture names, until "reset t"
// drops it. A kernel destroyed while the session lives was evicted; no live
// token may still hold it.
CaptureAudit Audit(const std::vector<std::string>& calls) {
  CaptureAudit audit;
  std::map<std::string, std::set<std::string>> live;  // token -> recorded kernels
  std::set<std::string> pending;
  std::set<std::string> ever_recorded;
  for (const std::string& line : calls) {
    const size_t space = line.find(' ');
    const std::string call = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (call == "begin_capture") {
      pending.clear();
    } else if (call == "record") {
      pending.insert(rest);
      ever_recorded.insert(rest);
    } else if (call == "end_capture") {
      // "end_capture primary t7 calls=3"
      const size_t token = rest.find(" t") + 1;
      live[rest.substr(token, rest.find(' ', token) - token)] = pending;
      ++audit.captures;
    } else if (call == "reset") {
      live.erase(rest);
    } else if (call == "destroy_kernel") {
      ++audit.evicted_kernels;
      audit.evicted_after_recording += ever_recorded.count(rest);
      for (const auto& [token, kernels] : live) {
        if (kernels.contains(rest)) {
          audit.violations.push_back("kernel " + rest + " destroyed while graph " + token +
                                     " that recorded it was not reset");
        }
      }
    }
  }
  return audit;
}

TEST(DecodeKernelCache, TheAuditFlagsAKernelDestroyedWhileAGraphHoldsIt) {
  const CaptureAudit audit = Audit(
      {"begin_capture primary", "record k3", "record k4", "end_capture primary t9 calls=2",
       "replay t9", "destroy_kernel k5", "destroy_kernel k4", "reset t9", "destroy_kernel k3"});
  EXPECT_EQ(audit.captures, 1u);
  EXPECT_EQ(audit.evicted_kernels, 3u);
  EXPECT_EQ(audit.evicted_after_recording, 2u);
  ASSERT_EQ(audit.violations.size(), 1u);
  EXPECT_NE(audit.violations[0].find("k4"), std::string::npos) << audit.violations[0];
}

// An eager prefill of a prompt of `length` tokens from an empty cache, then
// `steps` greedy decode steps on the Primary slot, the presents fed back as
// the pasts. `inputs` ends with the last run's inputs.
void DecodePrompt(nxrt::Session& session, int64_t length, int steps,
                  std::vector<nxrt::NamedTensor>& inputs, std::vector<nxrt::Tensor>& outputs) {
  std::vector<int64_t> prompt(length);
  for (int64_t i = 0; i < length; ++i) prompt[i] = (7 * i + length) % kVocabulary;
  inputs = DecoderInputs(prompt, 0, EmptyCaches());
  nxrt::Status status = session.Run(inputs, {}, outputs);
  ASSERT_TRUE(status.ok()) << "prefill of " << length << ": " << status.ToString();
  int64_t past = length;
  for (int step = 0; step < steps; ++step) {
    ASSERT_EQ(outputs.size(), 1u + 2 * kLayers);
    const std::vector<int64_t> present_shape{1, kKvHeads, past, kHeadSize};
    ASSERT_EQ(outputs[1].shape(), present_shape) << "after " << length << "+" << step;
    const int64_t token = NextToken(outputs[0]);
    std::vector<nxrt::Tensor> presents(std::make_move_iterator(outputs.begin() + 1),
                                       std::make_move_iterator(outputs.end()));
    inputs = DecoderInputs({token}, past, std::move(presents));
    status = session.Run(nxrt::DeviceGraphSlot::kPrimary, inputs, {}, outputs);
    ASSERT_TRUE(status.ok()) << "decode step " << step << " of prompt " << length << ": "
                             << status.ToString();
    ++past;
  }
  const auto logits = outputs[0].values<float>();
  ASSERT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }))
      << "prompt " << length;
}

TEST(DecodeKernelCache, TwoHundredPromptLengthsStayBoundedAndResetBeforeEviction) {
  if (!std::filesystem::exists(kDecoder)) {
    GTEST_SKIP() << kDecoder << " is missing; build the models target";
  }
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options;
  options.providers.push_back(nxrt_test::Mock(log, {{"claim", "Add,Mul"}}));
  options.providers.push_back({"cpu", {}});
  options.kernel_cache_variants_per_node = kVariantsPerNode;
  auto created = nxrt::Session::Create(nxrt_test::TestEnvironment(), kDecoder, options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  nxrt::Session& session = **created;
  const size_t nodes = session.placements().size();
  size_t on_mock = 0;
  for (const nxrt::NodePlacement& placement : session.placements()) {
    on_mock += placement.provider.rfind("mock", 0) == 0 ? 1 : 0;
  }
  ASSERT_EQ(on_mock, 16u) << "the mock claims the 8 Add and 8 Mul nodes";
  auto& mock = nxrt_test::MockLibrary::Get();
  mock.Clear(log);

  std::vector<nxrt::NamedTensor> inputs;
  std::vector<nxrt::Tensor> outputs;
  for (int64_t length = 1; length <= kPromptLengths; ++length) {
    ASSERT_NO_FATAL_FAILURE(DecodePrompt(session, length, kDecodeSteps, inputs, outputs));
    ASSERT_LE(session.kernel_cache_stats().entries, kVariantsPerNode * nodes)
        << "after prompt " << length;
  }
  // A decode step repeated at shapes the cache and the grown buffers already
  // hold evicts and reallocates nothing, so its captures outlive the run;
  // then prefills of new lengths, with no decode between them, evict the
  // decode kernels those captures recorded.
  ASSERT_NO_FATAL_FAILURE(DecodePrompt(session, kLateDecodeLength, 1, inputs, outputs));
  for (int repeat = 0; repeat < 2; ++repeat) {
    nxrt::Status status = session.Run(nxrt::DeviceGraphSlot::kPrimary, inputs, {}, outputs);
    ASSERT_TRUE(status.ok()) << "repeated decode step: " << status.ToString();
  }
  ASSERT_GT(mock.Live("graph"), 0) << "the repeated decode step's captures are live";
  for (int64_t length = 2; length < 2 + static_cast<int64_t>(kVariantsPerNode); ++length) {
    inputs = DecoderInputs(std::vector<int64_t>(length, 1), 0, EmptyCaches());
    nxrt::Status status = session.Run(inputs, {}, outputs);
    ASSERT_TRUE(status.ok()) << "late prefill of " << length << ": " << status.ToString();
    ASSERT_LE(session.kernel_cache_stats().entries, kVariantsPerNode * nodes);
  }

  const nxrt::KernelCacheStats stats = session.kernel_cache_stats();
  EXPECT_GT(stats.evictions, 0u);
  const nxrt::DeviceGraphCounters counters = session.device_graph_counters();
  EXPECT_GT(counters.captures, 0u);
  EXPECT_GT(counters.resets, 0u);

  const CaptureAudit audit = Audit(mock.CallLog(log));
  EXPECT_GT(audit.captures, 0u);
  EXPECT_GT(audit.evicted_kernels, 0u) << "evictions must destroy mock kernels too";
  EXPECT_GT(audit.evicted_after_recording, 0u) << "the late prefills evict recorded kernels";
  for (const std::string& violation : audit.violations) ADD_FAILURE() << violation;
  RecordProperty("evictions", static_cast<int>(stats.evictions));
  RecordProperty("captures", static_cast<int>(audit.captures));
  RecordProperty("evicted_mock_kernels", static_cast<int>(audit.evicted_kernels));
  RecordProperty("evicted_after_recording", static_cast<int>(audit.evicted_after_recording));
}

}  // namespace
