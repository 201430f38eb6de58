// The CPU EP's attention kernels where one-node test-case folders cannot
// look: a fixed-capacity GroupQueryAttention whose present outputs are bound
// to its past inputs (written in place, matching separate buffers), a kernel
// re-run on the same buffers with new seqlens_k and total_sequence_length
// values, a decode step agreeing with the prefill of the longer sequence, and
// the reasons the attention and rotary ops decline what they do not implement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attribute_builders.hpp"
#include "nxrt/graph/ir.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;
using nxrt::graph::Dim;

constexpr int64_t kHeads = 4;
constexpr int64_t kKvHeads = 2;
constexpr int64_t kDepth = 16;
constexpr int64_t kPositions = 32;

std::shared_ptr<nxrt::plugin_host::ExecutionProvider> CpuEp() {
  auto plugin =
      nxrt::plugin_host::Plugin::Load(std::filesystem::path(NXRT_BINARY_DIR) / "lib/libep_cpu.so");
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto ep = nxrt::plugin_host::ExecutionProvider::Create(plugin.value());
  EXPECT_TRUE(ep.ok()) << ep.status().ToString();
  return ep.value();
}

struct NodeInput {
  std::string name;  // empty: an absent optional input
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> dims;
};

// A graph of one node with the given inputs, attributes and output count.
struct OneNode {
  std::shared_ptr<nxrt::graph::Graph> graph = std::make_shared<nxrt::graph::Graph>();
  std::shared_ptr<const nxrt::plugin_host::NodeView> view;

  OneNode(const std::string& op, const std::string& domain, const std::vector<NodeInput>& inputs,
          std::vector<nxrt::graph::Attribute> attributes, size_t outputs) {
    graph->opset_imports[""] = 23;
    graph->opset_imports["com.microsoft"] = 1;
    nxrt::graph::Node node;
    node.op_type = op;
    node.domain = domain;
    node.name = op + "_node";
    node.attributes = std::move(attributes);
    for (const NodeInput& input : inputs) {
      if (input.name.empty()) {
        node.inputs.push_back(std::nullopt);
        continue;
      }
      nxrt::graph::Value v;
      v.name = input.name;
      v.dtype = input.dtype;
      nxrt::graph::Shape shape;
      for (int64_t d : input.dims) shape.push_back(Dim::Static(d));
      v.shape = shape;
      v.is_graph_input = true;
      node.inputs.push_back(graph->AddValue(std::move(v)));
    }
    for (size_t i = 0; i < outputs; ++i) {
      nxrt::graph::Value out;
      out.name = "out" + std::to_string(i);
      out.dtype = inputs[0].dtype;
      node.outputs.push_back(graph->AddValue(std::move(out)));
    }
    const auto id = graph->AddNode(std::move(node));
    view = std::make_shared<const nxrt::plugin_host::NodeView>(*graph, id);
  }
};

// A host tensor: float32 or int32 data with its dims.
struct HostTensor {
  std::vector<int64_t> dims;
  std::vector<float> f;
  std::vector<int32_t> i;

  nxrt_value Value() {
    nxrt_value v{};
    v.struct_size = sizeof(v);
    v.kind = NXRT_VALUE_TENSOR;
    const bool ints = !i.empty();
    v.tensor = nxrt_tensor{sizeof(nxrt_tensor),
                           ints ? NXRT_DTYPE_INT32 : NXRT_DTYPE_FLOAT32,
                           NXRT_MEMORY_HOST,
                           dims.size(),
                           dims.data(),
                           ints ? static_cast<void*>(i.data()) : static_cast<void*>(f.data()),
                           ints ? i.size() * sizeof(int32_t) : f.size() * sizeof(float)};
    return v;
  }
};

nxrt_value NoValue() {
  nxrt_value v{};
  v.struct_size = sizeof(v);
  v.kind = NXRT_VALUE_NONE;
  return v;
}

// Output buffers the kernel asks for, one per output index.
class HostOutputs : public nxrt::plugin_host::ComputeServices {
 public:
  nxrt::Status AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims,
                              nxrt_tensor* out) override {
    Slot& slot = slots_[index];
    slot.dims.assign(dims.begin(), dims.end());
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    slot.data.assign(count, -1.0f);
    *out = nxrt_tensor{sizeof(nxrt_tensor),  dtype,
                       NXRT_MEMORY_HOST,     slot.dims.size(),
                       slot.dims.data(),     slot.data.data(),
                       count * sizeof(float)};
    return nxrt::Status::Ok();
  }
  nxrt::Status AllocateSequenceOutput(size_t, size_t) override { return Refused(); }
  nxrt::Status AllocateSequenceElement(size_t, size_t, nxrt_dtype, std::span<const int64_t>,
                                       nxrt_tensor*) override {
    return Refused();
  }
  nxrt::Status SetOutputNone(size_t) override { return Refused(); }
  nxrt::Status SetStringElement(size_t, size_t, std::string_view) override { return Refused(); }
  nxrt::Status RunSubgraph(std::string_view, std::span<const nxrt_value>,
                           std::span<nxrt_value>) override {
    return Refused();
  }
  const std::vector<float>& data(size_t index) { return slots_[index].data; }

 private:
  struct Slot {
    std::vector<int64_t> dims;
    std::vector<float> data;
  };
  static nxrt::Status Refused() { return nxrt::Unsupported("not offered"); }
  Slot slots_[4];
};

std::vector<float> Random(size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = dist(gen);
  return values;
}

// The usual 10000-base rotary caches [kPositions, kDepth / 2].
std::pair<HostTensor, HostTensor> RotaryCaches() {
  HostTensor cos{{kPositions, kDepth / 2}, {}, {}}, sin{{kPositions, kDepth / 2}, {}, {}};
  for (int64_t p = 0; p < kPositions; ++p) {
    for (int64_t i = 0; i < kDepth / 2; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * i / kDepth);
      cos.f.push_back(static_cast<float>(std::cos(angle)));
      sin.f.push_back(static_cast<float>(std::sin(angle)));
    }
  }
  return {cos, sin};
}

std::vector<nxrt::graph::Attribute> GqaAttributes() {
  return {IntAttribute("num_heads", kHeads), IntAttribute("kv_num_heads", kKvHeads),
          IntAttribute("do_rotary", 1), IntAttribute("rotary_interleaved", 0)};
}

// One GroupQueryAttention call of `seq` new tokens over a past of `past`
// rows (0: no past inputs), with rotary embedding.
struct GqaCall {
  int64_t seq;
  int64_t past;
  HostTensor q, k, v, past_k, past_v, seqlens, total;
  std::unique_ptr<OneNode> node;
  std::unique_ptr<nxrt::plugin_host::Kernel> kernel;

  GqaCall(nxrt::plugin_host::ExecutionProvider& ep, int64_t seq_len, int64_t past_len)
      : seq(seq_len), past(past_len) {
    q.dims = {1, seq, kHeads * kDepth};
    k.dims = v.dims = {1, seq, kKvHeads * kDepth};
    past_k.dims = past_v.dims = {1, kKvHeads, past, kDepth};
    seqlens.dims = {1};
    total.dims = {1};
    const std::string past_name = past ? "past_key" : "";
    const std::string past_value = past ? "past_value" : "";
    node = std::make_unique<OneNode>(
        "GroupQueryAttention", "com.microsoft",
        std::vector<NodeInput>{{"query", DataType::kFloat32, q.dims},
                               {"key", DataType::kFloat32, k.dims},
                               {"value", DataType::kFloat32, v.dims},
                               {past_name, DataType::kFloat32, past_k.dims},
                               {past_value, DataType::kFloat32, past_v.dims},
                               {"seqlens_k", DataType::kInt32, {1}},
                               {"total_sequence_length", DataType::kInt32, {1}},
                               {"cos_cache", DataType::kFloat32, {kPositions, kDepth / 2}},
                               {"sin_cache", DataType::kFloat32, {kPositions, kDepth / 2}}},
        GqaAttributes(), 3);
    auto claim = ep.Claim(*node->view, 1);
    EXPECT_TRUE(claim.ok() && claim->claimed) << (claim.ok() ? claim->reason : "claim failed");
    std::vector<std::vector<int64_t>> dims{q.dims,
                                           k.dims,
                                           v.dims,
                                           past_k.dims,
                                           past_v.dims,
                                           {1},
                                           {1},
                                           {kPositions, kDepth / 2},
                                           {kPositions, kDepth / 2}};
    std::vector<nxrt_shape> shapes;
    for (size_t i = 0; i < dims.size(); ++i) {
      const bool absent = !past && (i == 3 || i == 4);
      shapes.push_back({sizeof(nxrt_shape),
                        i == 5 || i == 6 ? NXRT_DTYPE_INT32 : NXRT_DTYPE_FLOAT32,
                        absent ? 0 : dims[i].size(), absent ? nullptr : dims[i].data()});
    }
    auto made = ep.CreateKernel({}, node->view, shapes, 1);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    kernel = std::move(made.value());
    EXPECT_TRUE(kernel->capture_safe());
  }

  // Runs with `valid` rows valid after this call; outputs 1 and 2 are bound
  // to `present` when given, else allocated through `services`.
  void Run(HostOutputs& services, int32_t valid, int32_t total_length,
           std::pair<HostTensor*, HostTensor*> present = {nullptr, nullptr}) {
    seqlens.i = {valid - 1};
    total.i = {total_length};
    auto [cos, sin] = RotaryCaches();
    std::vector<nxrt_value> inputs{q.Value(),
                                   k.Value(),
                                   v.Value(),
                                   past ? past_k.Value() : NoValue(),
                                   past ? past_v.Value() : NoValue(),
                                   seqlens.Value(),
                                   total.Value(),
                                   cos.Value(),
                                   sin.Value()};
    std::vector<nxrt_value> outputs(3);
    for (auto& o : outputs) {
      o.struct_size = sizeof(nxrt_value);
      o.kind = NXRT_VALUE_TENSOR;
    }
    if (present.first) {
      outputs[1] = present.first->Value();
      outputs[2] = present.second->Value();
    }
    const auto status = kernel->Compute(services, inputs, outputs);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
};

// Row `row` of head `head` in a [1, kKvHeads, capacity, kDepth] cache.
const float* CacheRow(const std::vector<float>& cache, int64_t capacity, int64_t head,
                      int64_t row) {
  return cache.data() + (head * capacity + row) * kDepth;
}

TEST(CpuEpAttention, FixedCapacityInPlaceMatchesSeparateBuffers) {
  auto ep = CpuEp();
  constexpr int64_t kCapacity = 16;
  constexpr int32_t kPastRows = 5;
  constexpr float kUnused = 9.0f;  // rows past the valid ones
  std::vector<float> past_k(kKvHeads * kCapacity * kDepth, kUnused);
  std::vector<float> past_v = past_k;
  const auto fill_k = Random(past_k.size(), 1), fill_v = Random(past_v.size(), 2);
  for (int64_t h = 0; h < kKvHeads; ++h) {
    for (int64_t r = 0; r < kPastRows; ++r) {
      for (int64_t d = 0; d < kDepth; ++d) {
        const int64_t at = (h * kCapacity + r) * kDepth + d;
        past_k[at] = fill_k[at];
        past_v[at] = fill_v[at];
      }
    }
  }

  GqaCall separate(*ep, 1, kCapacity), shared(*ep, 1, kCapacity);
  for (GqaCall* call : {&separate, &shared}) {
    call->q.f = Random(kHeads * kDepth, 3);
    call->k.f = Random(kKvHeads * kDepth, 4);
    call->v.f = Random(kKvHeads * kDepth, 5);
    call->past_k.f = past_k;
    call->past_v.f = past_v;
  }
  HostOutputs separate_out, shared_out;
  separate.Run(separate_out, kPastRows + 1, kPastRows + 1);
  // Present bound to the past's own buffers, as the session does for a fixed
  // capacity cache.
  shared.Run(shared_out, kPastRows + 1, kPastRows + 1, {&shared.past_k, &shared.past_v});

  EXPECT_EQ(separate_out.data(0), shared_out.data(0));
  for (int64_t h = 0; h < kKvHeads; ++h) {
    for (int64_t r = 0; r < kCapacity; ++r) {
      for (int64_t d = 0; d < kDepth; ++d) {
        const float in_place_k = CacheRow(shared.past_k.f, kCapacity, h, r)[d];
        const float in_place_v = CacheRow(shared.past_v.f, kCapacity, h, r)[d];
        if (r <= kPastRows) {
          EXPECT_EQ(in_place_k, CacheRow(separate_out.data(1), kCapacity, h, r)[d]);
          EXPECT_EQ(in_place_v, CacheRow(separate_out.data(2), kCapacity, h, r)[d]);
        } else {
          // In place nothing beyond the new row moves; separate buffers
          // leave those rows zero, as ONNX Runtime does.
          EXPECT_EQ(in_place_k, kUnused);
          EXPECT_EQ(in_place_v, kUnused);
          EXPECT_EQ(CacheRow(separate_out.data(1), kCapacity, h, r)[d], 0.0f);
        }
        if (r < kPastRows) {
          EXPECT_EQ(in_place_k, CacheRow(past_k, kCapacity, h, r)[d]);
        }
      }
    }
  }
  // The value rows written in place are the new token's value (no rotary).
  for (int64_t h = 0; h < kKvHeads; ++h) {
    for (int64_t d = 0; d < kDepth; ++d) {
      EXPECT_EQ(CacheRow(shared.past_v.f, kCapacity, h, kPastRows)[d], shared.v.f[h * kDepth + d]);
    }
  }

  // The same kernel and buffers again, with new values written into the
  // seqlens_k and total_sequence_length inputs (a replayed step): it must
  // agree with a fresh kernel over a copy of the cache.
  GqaCall fresh(*ep, 1, kCapacity);
  fresh.past_k.f = shared.past_k.f;
  fresh.past_v.f = shared.past_v.f;
  for (GqaCall* call : {&fresh, &shared}) {
    call->q.f = Random(kHeads * kDepth, 6);
    call->k.f = Random(kKvHeads * kDepth, 7);
    call->v.f = Random(kKvHeads * kDepth, 8);
  }
  HostOutputs fresh_out, replay_out;
  fresh.Run(fresh_out, kPastRows + 2, kPastRows + 2);
  shared.Run(replay_out, kPastRows + 2, kPastRows + 2, {&shared.past_k, &shared.past_v});
  EXPECT_EQ(fresh_out.data(0), replay_out.data(0));
  for (int64_t h = 0; h < kKvHeads; ++h) {
    for (int64_t d = 0; d < kDepth; ++d) {
      EXPECT_EQ(CacheRow(shared.past_k.f, kCapacity, h, kPastRows + 1)[d],
                CacheRow(fresh_out.data(1), kCapacity, h, kPastRows + 1)[d]);
    }
  }
}

TEST(CpuEpAttention, DecodeStepMatchesLongerPrefill) {
  auto ep = CpuEp();
  constexpr int64_t kTokens = 6;
  const auto q = Random(kTokens * kHeads * kDepth, 11);
  const auto k = Random(kTokens * kKvHeads * kDepth, 12);
  const auto v = Random(kTokens * kKvHeads * kDepth, 13);
  auto first = [](const std::vector<float>& all, int64_t tokens, int64_t width) {
    return std::vector<float>(all.begin(), all.begin() + tokens * width);
  };

  GqaCall whole(*ep, kTokens, 0);
  whole.q.f = q, whole.k.f = k, whole.v.f = v;
  HostOutputs whole_out;
  whole.Run(whole_out, kTokens, kTokens);

  GqaCall prefix(*ep, kTokens - 1, 0);
  prefix.q.f = first(q, kTokens - 1, kHeads * kDepth);
  prefix.k.f = first(k, kTokens - 1, kKvHeads * kDepth);
  prefix.v.f = first(v, kTokens - 1, kKvHeads * kDepth);
  HostOutputs prefix_out;
  prefix.Run(prefix_out, kTokens - 1, kTokens - 1);

  GqaCall step(*ep, 1, kTokens - 1);
  step.q.f.assign(q.end() - kHeads * kDepth, q.end());
  step.k.f.assign(k.end() - kKvHeads * kDepth, k.end());
  step.v.f.assign(v.end() - kKvHeads * kDepth, v.end());
  step.past_k.f = prefix_out.data(1);
  step.past_v.f = prefix_out.data(2);
  HostOutputs step_out;
  step.Run(step_out, kTokens, kTokens);

  const auto& whole_y = whole_out.data(0);
  const auto& step_y = step_out.data(0);
  ASSERT_EQ(step_y.size(), static_cast<size_t>(kHeads * kDepth));
  for (int64_t i = 0; i < kHeads * kDepth; ++i) {
    EXPECT_NEAR(step_y[i], whole_y[(kTokens - 1) * kHeads * kDepth + i], 1e-5) << i;
  }
  // Causality: the shorter prefill's rows are the longer one's first rows.
  for (size_t i = 0; i < prefix_out.data(0).size(); ++i) {
    EXPECT_NEAR(prefix_out.data(0)[i], whole_y[i], 1e-5) << i;
  }
  ASSERT_EQ(step_out.data(1).size(), whole_out.data(1).size());
  for (size_t i = 0; i < whole_out.data(1).size(); ++i) {
    EXPECT_NEAR(step_out.data(1)[i], whole_out.data(1)[i], 1e-6) << i;
    EXPECT_NEAR(step_out.data(2)[i], whole_out.data(2)[i], 1e-6) << i;
  }
}

// The reason `ep` declines `node`, or "claimed".
std::string DeclineReason(nxrt::plugin_host::ExecutionProvider& ep, const OneNode& node,
                          int64_t opset) {
  auto claim = ep.Claim(*node.view, opset);
  EXPECT_TRUE(claim.ok());
  return claim->claimed ? "claimed" : claim->reason;
}

std::vector<NodeInput> GqaInputs(DataType dtype) {
  return {{"query", dtype, {1, 1, 64}},
          {"key", dtype, {1, 1, 32}},
          {"value", dtype, {1, 1, 32}},
          {"", dtype, {}},
          {"", dtype, {}},
          {"seqlens_k", DataType::kInt32, {1}},
          {"total", DataType::kInt32, {1}}};
}

TEST(CpuEpAttention, DeclinesWhatItDoesNotImplement) {
  auto ep = CpuEp();
  const std::vector<nxrt::graph::Attribute> heads{IntAttribute("num_heads", 4),
                                                  IntAttribute("kv_num_heads", 2)};
  EXPECT_EQ(DeclineReason(*ep,
                          OneNode("GroupQueryAttention", "com.microsoft",
                                  GqaInputs(DataType::kFloat32), heads, 3),
                          1),
            "claimed");

  const std::string bf16 = DeclineReason(
      *ep,
      OneNode("GroupQueryAttention", "com.microsoft", GqaInputs(DataType::kBfloat16), heads, 3), 1);
  EXPECT_NE(bf16.find("bfloat16"), std::string::npos) << bf16;

  auto with_scale = GqaInputs(DataType::kFloat32);
  with_scale.push_back({"cos", DataType::kFloat32, {8, 8}});
  with_scale.push_back({"sin", DataType::kFloat32, {8, 8}});
  with_scale.push_back({"position_ids", DataType::kInt64, {1, 1}});
  with_scale.push_back({"attention_bias", DataType::kFloat32, {1, 1, 1, 1}});
  with_scale.push_back({"", DataType::kFloat32, {}});
  with_scale.push_back({"k_scale", DataType::kFloat32, {1}});
  const std::string quantized =
      DeclineReason(*ep, OneNode("GroupQueryAttention", "com.microsoft", with_scale, heads, 3), 1);
  EXPECT_NE(quantized.find("k_scale"), std::string::npos) << quantized;

  auto rotary_attrs = heads;
  rotary_attrs.push_back(IntAttribute("do_rotary", 1));
  const std::string no_cache =
      DeclineReason(*ep,
                    OneNode("GroupQueryAttention", "com.microsoft", GqaInputs(DataType::kFloat32),
                            rotary_attrs, 3),
                    1);
  EXPECT_NE(no_cache.find("cos_cache"), std::string::npos) << no_cache;

  auto bidirectional = heads;
  bidirectional.push_back(IntAttribute("causal", 0));
  const std::string causal = DeclineReason(*ep,
                                           OneNode("GroupQueryAttention", "com.microsoft",
                                                   GqaInputs(DataType::kFloat32), bidirectional, 3),
                                           1);
  EXPECT_NE(causal.find("causal=0"), std::string::npos) << causal;

  const std::string one_output = DeclineReason(
      *ep, OneNode("GroupQueryAttention", "com.microsoft", GqaInputs(DataType::kFloat32), heads, 1),
      1);
  EXPECT_NE(one_output.find("present_key"), std::string::npos) << one_output;

  const std::string int_attention = DeclineReason(*ep,
                                                  OneNode("Attention", "",
                                                          {{"Q", DataType::kInt32, {1, 2, 3, 8}},
                                                           {"K", DataType::kInt32, {1, 2, 3, 8}},
                                                           {"V", DataType::kInt32, {1, 2, 3, 8}}},
                                                          {}, 1),
                                                  23);
  EXPECT_NE(int_attention.find("int32"), std::string::npos) << int_attention;

  const std::string packed_batching =
      DeclineReason(*ep,
                    OneNode("RotaryEmbedding", "com.microsoft",
                            {{"input", DataType::kFloat32, {1, 2, 16}},
                             {"position_ids", DataType::kInt64, {1, 2}},
                             {"cos", DataType::kFloat32, {8, 8}},
                             {"sin", DataType::kFloat32, {8, 8}}},
                            {IntAttribute("is_packed_batching", 1)}, 1),
                    1);
  EXPECT_NE(packed_batching.find("is_packed_batching"), std::string::npos) << packed_batching;
}

// softmax(q k^T / sqrt(depth)) v for one query row over `keys` rows, in
// double.
std::vector<double> ReferenceAttentionRow(const std::vector<float>& q, const std::vector<float>& k,
                                          const std::vector<float>& v, int64_t keys,
                                          int64_t depth) {
  std::vector<double> scores(static_cast<size_t>(keys));
  double max = -INFINITY;
  for (int64_t j = 0; j < keys; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < depth; ++d) dot += double(q[d]) * k[j * depth + d];
    scores[j] = dot / std::sqrt(double(depth));
    max = std::max(max, scores[j]);
  }
  double sum = 0;
  for (double& s : scores) sum += (s = std::exp(s - max));
  std::vector<double> out(static_cast<size_t>(depth), 0.0);
  for (int64_t j = 0; j < keys; ++j) {
    for (int64_t d = 0; d < depth; ++d) out[d] += scores[j] / sum * v[j * depth + d];
  }
  return out;
}

// The score row's softmax works in blocks of keys: every count of keys, the
// block's multiples and the rows around them, must give the exact softmax.
TEST(CpuEpAttention, EveryKeyCountMatchesAReference) {
  constexpr int64_t kRowDepth = 8;
  for (int64_t keys : {1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100, 257}) {
    const auto q = Random(kRowDepth, 21);
    // Scores spread over a wide range, so the max shift matters.
    auto k = Random(keys * kRowDepth, 22);
    for (float& x : k) x *= 8.0f;
    const auto v = Random(keys * kRowDepth, 23);
    TensorNode node;
    node.op = "Attention";
    node.opset = 23;
    node.inputs = {{"q", Values<float>({1, 1, 1, kRowDepth}, q)},
                   {"k", Values<float>({1, 1, keys, kRowDepth}, k)},
                   {"v", Values<float>({1, 1, keys, kRowDepth}, v)}};
    node.outputs = {DataType::kFloat32};
    auto outputs = RunTensorNode(node);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    const auto y = (*outputs)[0].values<float>();
    const auto expected = ReferenceAttentionRow(q, k, v, keys, kRowDepth);
    ASSERT_EQ(y.size(), expected.size());
    for (int64_t d = 0; d < kRowDepth; ++d) {
      EXPECT_NEAR(y[d], expected[d], 1e-5) << keys << " keys, element " << d;
    }
  }
}

// A prefill-sized head (48 query rows over 80 keys of depth 64) runs its
// two products on oneDNN's sgemm; each row must give the reference's values.
TEST(CpuEpAttention, APrefillSizedHeadMatchesAReference) {
  constexpr int64_t kHeadsHere = 2, kRowsHere = 48, kKeysHere = 80, kDepthHere = 64;
  const auto q = Random(kHeadsHere * kRowsHere * kDepthHere, 31);
  const auto k = Random(kHeadsHere * kKeysHere * kDepthHere, 32);
  const auto v = Random(kHeadsHere * kKeysHere * kDepthHere, 33);
  TensorNode node;
  node.op = "Attention";
  node.opset = 23;
  node.inputs = {{"q", Values<float>({1, kHeadsHere, kRowsHere, kDepthHere}, q)},
                 {"k", Values<float>({1, kHeadsHere, kKeysHere, kDepthHere}, k)},
                 {"v", Values<float>({1, kHeadsHere, kKeysHere, kDepthHere}, v)}};
  node.outputs = {DataType::kFloat32};
  auto outputs = RunTensorNode(node);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const auto y = (*outputs)[0].values<float>();
  ASSERT_EQ(y.size(), q.size());
  for (int64_t h = 0; h < kHeadsHere; ++h) {
    const std::vector<float> head_k(k.begin() + h * kKeysHere * kDepthHere,
                                    k.begin() + (h + 1) * kKeysHere * kDepthHere);
    const std::vector<float> head_v(v.begin() + h * kKeysHere * kDepthHere,
                                    v.begin() + (h + 1) * kKeysHere * kDepthHere);
    for (int64_t r = 0; r < kRowsHere; ++r) {
      const int64_t row = h * kRowsHere + r;
      const std::vector<float> head_q(q.begin() + row * kDepthHere,
                                      q.begin() + (row + 1) * kDepthHere);
      const auto expected = ReferenceAttentionRow(head_q, head_k, head_v, kKeysHere, kDepthHere);
      for (int64_t d = 0; d < kDepthHere; ++d) {
        ASSERT_NEAR(y[row * kDepthHere + d], expected[d], 1e-5)
            << "head " << h << ", row " << r << ", element " << d;
      }
    }
  }
}

// A past of another rank than [batch, kv_heads, past, head] is refused
// before its third dim is read.
TEST(CpuEpAttention, RefusesAPastThatIsNotRankFour) {
  TensorNode node;
  node.op = "Attention";
  node.opset = 23;
  const std::vector<float> row(12, 0.5f);
  node.inputs = {
      {"q", Values<float>({1, 3, 4}, row)},     {"k", Values<float>({1, 3, 4}, row)},
      {"v", Values<float>({1, 3, 4}, row)},     {"", {}},
      {"past_key", Values<float>({3, 4}, row)}, {"past_value", Values<float>({3, 4}, row)}};
  node.outputs = {DataType::kFloat32, DataType::kFloat32, DataType::kFloat32};
  node.attributes = {IntAttribute("q_num_heads", 1), IntAttribute("kv_num_heads", 1)};
  ExpectRefused(node, "past_key and past_value must be rank 4");
}

// K or V of another rank than Q is refused before Q's rank is used to read
// their dims.
TEST(CpuEpAttention, RefusesKAndVOfAnotherRankThanQ) {
  TensorNode node;
  node.op = "Attention";
  node.opset = 23;
  const std::vector<float> row(12, 0.5f);
  node.inputs = {{"q", Values<float>({1, 1, 3, 4}, row)},
                 {"k", Values<float>({3, 4}, row)},
                 {"v", Values<float>({3, 4}, row)}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "Q, K and V must all be rank 3 or all rank 4");
}

}  // namespace
}  // namespace nxrt_test
