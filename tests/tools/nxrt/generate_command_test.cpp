// `nxrt generate`: the decode loop on a small decoder written here (its
// greedy tokens and logits worked out by hand in the test), the JSON report,
// the step logits files, stopping at --max-len and at a --stop token,
// sampling (top-k, top-p), --time-limit and the one-line errors; then the generated decoder models
// in both KV cache forms, which must pick the same greedy tokens (they share their weights), and
// the trace --profile writes of the fixed form's steps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

#include "model_files.hpp"
#include "nxrt_process.hpp"
#include "trace_file.hpp"

namespace nxrt_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The small decoder's vocabulary, which is also its width.
constexpr int64_t kVocab = 5;

float Embedding(int64_t token, int64_t column) {
  return static_cast<float>((token * 3 + column * 7) % 11 - 5) * 0.25f;
}

onnx::ValueInfoProto* AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values,
                               const std::string& name, onnx::TensorProto::DataType dtype,
                               const std::vector<DimSpec>& dims) {
  onnx::ValueInfoProto* info = values->Add();
  SetFloatTensorType(info, name, dims);
  info->mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
  return info;
}

onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& op,
                         const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(output);
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(output);
  return node;
}

void AddIntAttribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void AddInitializer(onnx::GraphProto* graph, const std::string& name, std::vector<int64_t> dims,
                    const std::vector<float>& floats, const std::vector<int64_t>& ints = {}) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  for (int64_t d : dims) tensor->add_dims(d);
  if (ints.empty()) {
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    for (float f : floats) tensor->add_float_data(f);
  } else {
    tensor->set_data_type(onnx::TensorProto::INT64);
    for (int64_t i : ints) tensor->add_int64_data(i);
  }
}

// How a small decoder names and shapes its inputs and outputs.
struct DecoderForm {
  int64_t capacity = 0;  // a static cache capacity; 0 for a growing cache
  // transformers' dynamo names (past_key_values.layers.0.keys ->
  // cache.layers.0.keys) and position ids added to every logit, instead of
  // the ONNX Runtime GenAI names.
  bool transformers = false;
  bool symbolic_batch = false;
  std::string extra_input;  // a float input no role fits, when set
};

// A one-layer decoder with one KV head as wide as the vocabulary. Each
// token's key and value are its embedding row; the presents are the pasts
// with the new rows appended (capacity 0), or the pasts unchanged at a
// static capacity (enough to load, not to decode). The logits of each
// position are its embedding plus the sum of the keys cached, plus its
// position id in the transformers form.
void WriteSmallDecoder(const std::filesystem::path& file, const DecoderForm& form = {}) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("small_decoder");
  const DimSpec cache = form.capacity > 0 ? DimSpec(form.capacity) : DimSpec("past");
  const DimSpec present = form.capacity > 0 ? DimSpec(form.capacity) : DimSpec("total");
  const DimSpec batch = form.symbolic_batch ? DimSpec("batch") : DimSpec(1);
  const auto past_name = [&](const std::string& part) {
    return form.transformers ? "past_key_values.layers.0." + part + "s"
                             : "past_key_values.0." + part;
  };
  const auto present_name = [&](const std::string& part) {
    return form.transformers ? "cache.layers.0." + part + "s" : "present.0." + part;
  };
  AddValue(graph->mutable_input(), "input_ids", onnx::TensorProto::INT64, {batch, "seq"});
  AddValue(graph->mutable_input(), "attention_mask", onnx::TensorProto::INT64, {batch, "total"});
  if (form.transformers) {
    AddValue(graph->mutable_input(), "position_ids", onnx::TensorProto::INT64, {batch, "seq"});
  }
  for (const char* part : {"key", "value"}) {
    AddValue(graph->mutable_input(), past_name(part), onnx::TensorProto::FLOAT,
             {batch, 1, cache, kVocab});
  }
  if (!form.extra_input.empty()) {
    AddValue(graph->mutable_input(), form.extra_input, onnx::TensorProto::FLOAT,
             {batch, "seq", kVocab});
  }
  AddValue(graph->mutable_output(), "logits", onnx::TensorProto::FLOAT, {batch, "seq", kVocab});
  for (const char* part : {"key", "value"}) {
    AddValue(graph->mutable_output(), present_name(part), onnx::TensorProto::FLOAT,
             {batch, 1, present, kVocab});
  }
  std::vector<float> embedding;
  for (int64_t t = 0; t < kVocab; ++t) {
    for (int64_t c = 0; c < kVocab; ++c) embedding.push_back(Embedding(t, c));
  }
  AddInitializer(graph, "embedding", {kVocab, kVocab}, embedding);
  AddInitializer(graph, "axis_1", {1}, {}, {1});
  AddInitializer(graph, "axis_2", {1}, {}, {2});
  AddIntAttribute(AddNode(graph, "Gather", {"embedding", "input_ids"}, "x"), "axis", 0);
  if (form.capacity > 0) {
    AddNode(graph, "Identity", {past_name("key")}, present_name("key"));
    AddNode(graph, "Identity", {past_name("value")}, present_name("value"));
    AddNode(graph, "Identity", {"x"}, "logits");
  } else {
    AddNode(graph, "Unsqueeze", {"x", "axis_1"}, "rows");
    for (const char* part : {"key", "value"}) {
      AddIntAttribute(AddNode(graph, "Concat", {past_name(part), "rows"}, present_name(part)),
                      "axis", 2);
    }
    AddIntAttribute(AddNode(graph, "ReduceSum", {present_name("key"), "axis_2"}, "key_sum"),
                    "keepdims", 0);
    if (form.transformers) {
      AddNode(graph, "Add", {"x", "key_sum"}, "cached");
      AddInitializer(graph, "axis_last", {1}, {}, {-1});
      AddNode(graph, "Unsqueeze", {"position_ids", "axis_last"}, "position_column");
      AddIntAttribute(AddNode(graph, "Cast", {"position_column"}, "position_shift"), "to",
                      onnx::TensorProto::FLOAT);
      AddNode(graph, "Add", {"cached", "position_shift"}, "logits");
    } else {
      AddNode(graph, "Add", {"x", "key_sum"}, "logits");
    }
  }
  std::ofstream out(file, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out)) << file;
}

struct HandDecode {
  std::vector<int64_t> tokens;
  std::vector<std::vector<float>> logits;  // last position, per run
};

// The small decoder's greedy decode, worked out directly: every run's
// tokens join the cached sum, and the last one's embedding plus that sum are
// its logits.
HandDecode DecodeByHand(const std::vector<int64_t>& prompt, int steps) {
  HandDecode decode;
  std::vector<float> key_sum(kVocab, 0.0f);
  std::vector<int64_t> fed = prompt;
  for (int run = 0; run <= steps; ++run) {
    for (int64_t token : fed) {
      for (int64_t c = 0; c < kVocab; ++c) key_sum[c] += Embedding(token, c);
    }
    std::vector<float> logits(kVocab);
    for (int64_t c = 0; c < kVocab; ++c) logits[c] = Embedding(fed.back(), c) + key_sum[c];
    const int64_t next = std::max_element(logits.begin(), logits.end()) - logits.begin();
    decode.tokens.push_back(next);
    decode.logits.push_back(logits);
    fed = {next};
  }
  return decode;
}

std::string JsonText(const std::string& json, const std::string& key) {
  std::smatch match;
  const std::regex pattern("\"" + key + "\":(\\[[^\\]]*\\]|\\{[^}]*\\}|[^,}]+)");
  if (!std::regex_search(json, match, pattern)) return "";
  return match[1];
}

double JsonNumber(const std::string& json, const std::string& key) {
  const std::string text = JsonText(json, key);
  return text.empty() ? -1 : std::stod(text);
}

std::vector<double> JsonNumbers(const std::string& json, const std::string& key) {
  std::string text = JsonText(json, key);
  std::vector<double> numbers;
  if (text.size() < 2) return numbers;
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text.substr(1, text.size() - 2));
  for (double value; in >> value;) numbers.push_back(value);
  return numbers;
}

std::vector<int64_t> JsonTokens(const std::string& json, const std::string& key) {
  std::vector<int64_t> tokens;
  for (double value : JsonNumbers(json, key)) tokens.push_back(static_cast<int64_t>(value));
  return tokens;
}

// A batch's rows of ids under `key`: an array of arrays of integers.
std::vector<std::vector<int64_t>> JsonRows(const std::string& json, const std::string& key) {
  std::smatch match;
  std::vector<std::vector<int64_t>> rows;
  if (!std::regex_search(json, match, std::regex("\"" + key + "\":\\[((\\[[0-9,]*\\],?)*)\\]"))) {
    return rows;
  }
  const std::string inner = match[1];
  const std::regex row_pattern("\\[([0-9,]*)\\]");
  for (auto it = std::sregex_iterator(inner.begin(), inner.end(), row_pattern);
       it != std::sregex_iterator(); ++it) {
    rows.push_back(JsonTokens("\"r\":[" + (*it)[1].str() + "]", "r"));
  }
  return rows;
}

// The last-position logits `nxrt generate --output-dir` wrote for `run`.
std::vector<float> ReadStepLogits(const std::filesystem::path& out_dir, int run) {
  char name[32];
  std::snprintf(name, sizeof name, "step_%03d.pb", run);
  onnx::TensorProto tensor;
  std::ifstream in(out_dir / name, std::ios::binary);
  EXPECT_TRUE(tensor.ParseFromIstream(&in)) << out_dir / name;
  EXPECT_EQ(tensor.name(), "logits");
  EXPECT_EQ(std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end()),
            (std::vector<int64_t>{1, kVocab}));
  std::vector<float> logits(kVocab);
  if (tensor.raw_data().size() != sizeof(float) * kVocab) {
    ADD_FAILURE() << name << " holds " << tensor.raw_data().size() << " bytes";
    return logits;
  }
  std::memcpy(logits.data(), tensor.raw_data().data(), tensor.raw_data().size());
  return logits;
}

// The fewest likeliest tokens of softmax(logits / temperature) whose
// probabilities sum to at least top_p.
std::vector<int64_t> Nucleus(const std::vector<float>& logits, double temperature, double top_p) {
  std::vector<int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  std::vector<double> weights;
  double total = 0;
  for (int64_t id : order) {
    weights.push_back(std::exp((logits[id] - logits[order[0]]) / temperature));
    total += weights.back();
  }
  double mass = 0;
  size_t kept = 0;
  while (kept < order.size() && mass < top_p * total) mass += weights[kept++];
  order.resize(std::max<size_t>(kept, 1));
  return order;
}

void ExpectOneLineError(const ProcessResult& result) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<std::string> lines = Lines(result.err);
  ASSERT_EQ(lines.size(), 1u) << result.err;
  EXPECT_THAT(lines[0], StartsWith("nxrt: error: "));
}

class GenerateCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteSmallDecoder(model_);
    DecoderForm fixed;
    fixed.capacity = 8;
    WriteSmallDecoder(fixed_model_, fixed);
  }

  ProcessResult Generate(std::vector<std::string> args) {
    args.insert(args.begin(), "generate");
    return RunNxrt(args, scratch_.path());
  }

  ScratchFolder scratch_{"generate"};
  std::filesystem::path model_ = scratch_.path() / "small_decoder.onnx";
  std::filesystem::path fixed_model_ = scratch_.path() / "small_decoder_fixed.onnx";
};

TEST_F(GenerateCommandTest, GreedyTokensAreTheModelsByHand) {
  const ProcessResult result =
      Generate({model_.string(), "--prompt", "1,4,2", "--steps", "6", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(JsonTokens(result.out, "prompt"), (std::vector<int64_t>{1, 4, 2}));
  EXPECT_EQ(JsonTokens(result.out, "tokens"), DecodeByHand({1, 4, 2}, 6).tokens);
}

TEST_F(GenerateCommandTest, JsonReportIsOneConsistentObject) {
  const ProcessResult result =
      Generate({model_.string(), "--prompt-tokens", "4", "--steps", "5", "--seed", "3", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_EQ(Lines(result.out).size(), 1u) << result.out;
  EXPECT_THAT(result.out, StartsWith("{\"model\":"));
  EXPECT_EQ(JsonText(result.out, "kv"), "\"growing\"");
  const std::vector<int64_t> prompt = JsonTokens(result.out, "prompt");
  ASSERT_EQ(prompt.size(), 4u);
  for (int64_t token : prompt) EXPECT_TRUE(token >= 0 && token < kVocab) << token;
  EXPECT_EQ(JsonTokens(result.out, "tokens"), DecodeByHand(prompt, 5).tokens);
  EXPECT_EQ(JsonNumber(result.out, "steps"), 5);
  const std::vector<double> step_us = JsonNumbers(result.out, "step_us");
  ASSERT_EQ(step_us.size(), 5u);
  const double min_us = *std::min_element(step_us.begin(), step_us.end());
  const double max_us = *std::max_element(step_us.begin(), step_us.end());
  EXPECT_EQ(JsonNumber(result.out, "min_us"), min_us);
  EXPECT_EQ(JsonNumber(result.out, "max_us"), max_us);
  EXPECT_GE(JsonNumber(result.out, "median_us"), min_us);
  EXPECT_GE(JsonNumber(result.out, "p90_us"), JsonNumber(result.out, "median_us"));
  EXPECT_GT(JsonNumber(result.out, "prefill_us"), 0);
  double total_us = 0;
  for (double us : step_us) total_us += us;
  EXPECT_NEAR(JsonNumber(result.out, "tokens_per_s"), 5 * 1e6 / total_us, 1e-3 * 5e6 / total_us);
  // axis_1 and axis_2, 8 bytes each; a step gathers rows of the embedding.
  EXPECT_EQ(JsonNumber(result.out, "weight_bytes_per_step"), 16);
  EXPECT_EQ(JsonText(result.out, "stop_reason"), "\"steps\"");
  // Every node's CPU kernel serves any shape of its ranks, the Concats and
  // the ReduceSum that see a longer cache every run among them: each of the
  // 6 nodes misses once, at the prompt, and nothing is evicted.
  EXPECT_EQ(JsonNumber(result.out, "misses"), 6);
  EXPECT_EQ(JsonNumber(result.out, "evictions"), 0);
  EXPECT_THAT(result.out, HasSubstr("\"device_graphs\":{\"captures\":"));
  EXPECT_THAT(result.out, HasSubstr("\"eager_fallbacks\":{\"warming-up\":"));
  // A process that loaded a model and its plugin has held more than a MiB.
  EXPECT_GT(JsonNumber(result.out, "peak_rss_kib"), 1024);
  // The same seed draws the same prompt.
  const ProcessResult again =
      Generate({model_.string(), "--prompt-tokens", "4", "--steps", "5", "--seed", "3", "--json"});
  EXPECT_EQ(JsonTokens(again.out, "prompt"), prompt);
}

TEST_F(GenerateCommandTest, TextReportNamesTheNumbers) {
  const ProcessResult result = Generate({model_.string(), "--prompt", "0,3", "--steps", "2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = Lines(result.out);
  ASSERT_EQ(lines.size(), 9u) << result.out;
  EXPECT_THAT(lines[0], HasSubstr("(kv growing)"));
  EXPECT_EQ(lines[1],
            "inputs: ids 'input_ids', mask 'attention_mask'; 2 KV pasts ('past_key_values.0.key' "
            "-> 'present.0.key' along axis 2, ...); logits 'logits'");
  EXPECT_EQ(lines[2], "prompt (2): 0 3");
  EXPECT_THAT(lines[3], StartsWith("generated (3): "));
  EXPECT_THAT(lines[4], ::testing::MatchesRegex(
                            "prefill [0-9.]+ us; 2 decode steps: median [0-9.]+ us, p90 .*"));
  EXPECT_THAT(lines[5], ::testing::MatchesRegex("weights streamed per step: 0\\.00 MiB, [0-9.]+ "
                                                "GB/s at the median step"));
  EXPECT_THAT(lines[6], StartsWith("kernel cache: "));
  EXPECT_THAT(lines[7], StartsWith("device graphs: "));
  EXPECT_THAT(lines[8], ::testing::MatchesRegex("peak memory: [0-9]+\\.[0-9] MiB resident"));
}

TEST_F(GenerateCommandTest, OutputDirHoldsEveryRunsLastLogits) {
  const auto out_dir = scratch_.path() / "steps";
  const ProcessResult result = Generate(
      {model_.string(), "--prompt", "3,3,0", "--steps", "3", "--output-dir", out_dir.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const HandDecode expected = DecodeByHand({3, 3, 0}, 3);
  for (int run = 0; run <= 3; ++run) {
    EXPECT_EQ(ReadStepLogits(out_dir, run), expected.logits[run]) << "run " << run;
  }
  EXPECT_FALSE(std::filesystem::exists(out_dir / "step_004.pb"));
}

TEST_F(GenerateCommandTest, StopsAtMaxLenWithANote) {
  // Three prompt tokens and one from the prefill; two steps fill six.
  const ProcessResult result =
      Generate({model_.string(), "--prompt", "1,2,3", "--steps", "10", "--max-len", "6", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(JsonNumber(result.out, "steps"), 2);
  EXPECT_EQ(JsonNumber(result.out, "requested_steps"), 10);
  EXPECT_EQ(JsonText(result.out, "stop_reason"), "\"max_len\"");
  EXPECT_EQ(JsonTokens(result.out, "tokens"), DecodeByHand({1, 2, 3}, 2).tokens);
  EXPECT_EQ(result.err, "nxrt: stopped at --max-len 6 after 2 of 10 decode steps\n");
}

TEST_F(GenerateCommandTest, StopsAtAStopTokenWithANote) {
  const HandDecode greedy = DecodeByHand({1, 2, 3}, 10);
  // The first token after the prefill's that did not come before it.
  size_t at = 1;
  while (at < greedy.tokens.size() && std::find(greedy.tokens.begin(), greedy.tokens.begin() + at,
                                                greedy.tokens[at]) != greedy.tokens.begin() + at) {
    ++at;
  }
  ASSERT_LT(at, greedy.tokens.size());
  const std::string stop = std::to_string(greedy.tokens[at]);
  const ProcessResult result = Generate(
      {model_.string(), "--prompt", "1,2,3", "--steps", "10", "--stop", "4," + stop, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(JsonTokens(result.out, "tokens"),
            std::vector<int64_t>(greedy.tokens.begin(), greedy.tokens.begin() + at + 1));
  EXPECT_EQ(JsonNumber(result.out, "steps"), static_cast<double>(at));
  EXPECT_EQ(JsonText(result.out, "stop_reason"), "\"stop_token\"");
  EXPECT_EQ(result.err, "nxrt: stopped at stop token " + stop + " after " + std::to_string(at) +
                            " of 10 decode steps\n");

  // A stop token the prefill gives ends generation before any step.
  const ProcessResult at_prefill = Generate({model_.string(), "--prompt", "1,2,3", "--steps", "10",
                                             "--stop", std::to_string(greedy.tokens[0]), "--json"});
  ASSERT_EQ(at_prefill.exit_code, 0) << at_prefill.err;
  EXPECT_EQ(JsonTokens(at_prefill.out, "tokens"), std::vector<int64_t>{greedy.tokens[0]});
  EXPECT_EQ(JsonNumber(at_prefill.out, "steps"), 0);
}

TEST_F(GenerateCommandTest, TopPDrawsOnlyFromTheNucleus) {
  constexpr double kTemperature = 1.5, kTopP = 0.5;
  size_t narrowed = 0;
  for (const char* seed : {"1", "2", "3", "4"}) {
    const auto out_dir = scratch_.path() / (std::string("nucleus_") + seed);
    const ProcessResult result =
        Generate({model_.string(), "--prompt", "1", "--steps", "12", "--temperature", "1.5",
                  "--top-p", "0.5", "--seed", seed, "--output-dir", out_dir.string(), "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::vector<int64_t> tokens = JsonTokens(result.out, "tokens");
    ASSERT_EQ(tokens.size(), 13u);
    for (int run = 0; run <= 12; ++run) {
      const std::vector<int64_t> nucleus =
          Nucleus(ReadStepLogits(out_dir, run), kTemperature, kTopP);
      narrowed += nucleus.size() < static_cast<size_t>(kVocab) ? 1 : 0;
      EXPECT_NE(std::find(nucleus.begin(), nucleus.end(), tokens[run]), nucleus.end())
          << "seed " << seed << ", run " << run << ": token " << tokens[run];
    }
  }
  EXPECT_GT(narrowed, 0u) << "top-p 0.5 never narrowed the draw";
  // A top-p that keeps only the likeliest token samples greedily.
  const ProcessResult likeliest =
      Generate({model_.string(), "--prompt", "1", "--steps", "12", "--temperature", "1.5",
                "--top-p", "1e-9", "--seed", "1", "--json"});
  ASSERT_EQ(likeliest.exit_code, 0) << likeliest.err;
  EXPECT_EQ(JsonTokens(likeliest.out, "tokens"), DecodeByHand({1}, 12).tokens);
}

TEST_F(GenerateCommandTest, TopPOutOfRangeAndAnUnknownStopTokenAreOneLineErrors) {
  for (const char* top_p : {"0", "1.5", "-1", "nan"}) {
    const ProcessResult result = Generate({model_.string(), "--top-p", top_p});
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, HasSubstr("--top-p")) << top_p;
  }
  const ProcessResult result = Generate({model_.string(), "--stop", "2,9"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("--stop '2,9': '9' is not a token id"));
}

TEST_F(GenerateCommandTest, SamplingIsDeterministicPerSeed) {
  const auto tokens = [&](const std::string& seed, const std::string& top_k) {
    const ProcessResult result =
        Generate({model_.string(), "--prompt", "1", "--steps", "12", "--temperature", "2",
                  "--top-k", top_k, "--seed", seed, "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return JsonTokens(result.out, "tokens");
  };
  EXPECT_EQ(tokens("5", "3"), tokens("5", "3"));
  // With one candidate, sampling is greedy.
  EXPECT_EQ(tokens("5", "1"), DecodeByHand({1}, 12).tokens);
  // Different seeds give different draws over 13 tokens at a high temperature.
  EXPECT_NE(tokens("5", "0"), tokens("6", "0"));
}

TEST_F(GenerateCommandTest, ModelWithoutDecoderIoIsAOneLineError) {
  const auto add_relu = scratch_.path() / "add_relu.onnx";
  WriteAddReluModel(add_relu, {2});
  const ProcessResult result = Generate({add_relu.string()});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("model '" + add_relu.string() + "' is not a decoder"));
  EXPECT_THAT(result.err, HasSubstr("no graph output extends a graph input as a KV cache does"));
  EXPECT_THAT(result.err, HasSubstr("input 'a' is none of token ids"));
  EXPECT_THAT(result.err, HasSubstr("no integer input of rank 2 carries the token ids"));
  EXPECT_THAT(result.err, HasSubstr("no float output of rank 3 carries the logits"));
}

TEST_F(GenerateCommandTest, TransformersNamesAndPositionIdsAreFedByRole) {
  const auto model = scratch_.path() / "transformers_decoder.onnx";
  DecoderForm form;
  form.transformers = true;
  WriteSmallDecoder(model, form);
  const auto out_dir = scratch_.path() / "transformers_steps";
  const ProcessResult result = Generate({model.string(), "--prompt", "2,0,4", "--steps", "3",
                                         "--output-dir", out_dir.string(), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\"position_ids\":\"position_ids\""));
  EXPECT_THAT(result.out, HasSubstr("\"past\":\"past_key_values.layers.0.keys\","
                                    "\"present\":\"cache.layers.0.keys\",\"past_axis\":2"));
  // Each logit carries the position of its token: the prompt's last is at
  // 2, then every step one further.
  const HandDecode expected = DecodeByHand({2, 0, 4}, 3);
  EXPECT_EQ(JsonTokens(result.out, "tokens"), expected.tokens);
  for (int run = 0; run <= 3; ++run) {
    std::vector<float> shifted = expected.logits[run];
    for (float& logit : shifted) logit += static_cast<float>(2 + run);
    EXPECT_EQ(ReadStepLogits(out_dir, run), shifted) << "run " << run;
  }
}

TEST_F(GenerateCommandTest, InspectShowsTheRolesGenerateFeeds) {
  const auto model = scratch_.path() / "inspected_decoder.onnx";
  DecoderForm form;
  form.transformers = true;
  form.extra_input = "encoder_hidden_states";
  WriteSmallDecoder(model, form);
  const ProcessResult text = RunNxrt({"inspect", model.string()}, scratch_.path());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("decoder: ids 'input_ids', mask 'attention_mask', positions "
                                  "'position_ids'; 2 KV pasts ('past_key_values.layers.0.keys' "
                                  "-> 'cache.layers.0.keys' along axis 2, ...); logits 'logits'\n"
                                  "  generate cannot drive it: input 'encoder_hidden_states' is "
                                  "none of"));
  const ProcessResult json = RunNxrt({"inspect", model.string(), "--json"}, scratch_.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("{\"past\":\"past_key_values.layers.0.values\",\"present\":"
                                  "\"cache.layers.0.values\",\"past_axis\":2,\"present_axis\":2,"
                                  "\"traced\":true}"));
}

TEST_F(GenerateCommandTest, BatchRowsAreLeftPaddedAndDecodedApart) {
  // The small decoder ignores the mask, so a padded row decodes as its
  // prompt behind the padding ids (0); the positions skip the padding.
  const auto model = scratch_.path() / "batched_decoder.onnx";
  DecoderForm form;
  form.transformers = true;
  form.symbolic_batch = true;
  WriteSmallDecoder(model, form);
  const ProcessResult result =
      Generate({model.string(), "--prompt", "1,4,2;3", "--steps", "4", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(JsonNumber(result.out, "batch"), 2);
  EXPECT_EQ(JsonRows(result.out, "prompt"), (std::vector<std::vector<int64_t>>{{1, 4, 2}, {3}}));
  EXPECT_EQ(JsonRows(result.out, "tokens"),
            (std::vector<std::vector<int64_t>>{DecodeByHand({1, 4, 2}, 4).tokens,
                                               DecodeByHand({0, 0, 3}, 4).tokens}));
}

TEST_F(GenerateCommandTest, BatchOfAStaticBatchModelIsAOneLineError) {
  const ProcessResult result = Generate({model_.string(), "--batch", "2"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("takes a batch of exactly 1 rows, not 2"));
}

TEST_F(GenerateCommandTest, InputNoRoleFitsIsNamedInOneLine) {
  const auto model = scratch_.path() / "cross_attention_decoder.onnx";
  DecoderForm form;
  form.extra_input = "encoder_hidden_states";
  WriteSmallDecoder(model, form);
  const ProcessResult result = Generate({model.string()});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("input 'encoder_hidden_states' is none of token ids"));
}

TEST_F(GenerateCommandTest, FixedFormOnAGrowingCacheIsAOneLineError) {
  const ProcessResult result = Generate({model_.string(), "--kv", "fixed"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("--kv fixed"));
  EXPECT_THAT(result.err, HasSubstr("static capacity"));
}

TEST_F(GenerateCommandTest, GrowingFormOnAFixedCacheIsAOneLineError) {
  const ProcessResult result = Generate({fixed_model_.string()});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("static capacity of 8 tokens; run it with --kv fixed"));
}

TEST_F(GenerateCommandTest, MaxLenAboveCapacityIsAOneLineError) {
  const ProcessResult result = Generate({fixed_model_.string(), "--kv", "fixed", "--max-len", "9"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("--max-len 9 exceeds the KV cache capacity"));
  EXPECT_THAT(result.err, HasSubstr("at most 8"));
}

TEST_F(GenerateCommandTest, PromptFillingMaxLenIsAOneLineError) {
  const ProcessResult result = Generate({model_.string(), "--prompt", "1,2", "--max-len", "2"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("leaves no room"));
}

TEST_F(GenerateCommandTest, BadPromptIsAOneLineError) {
  for (const char* prompt : {"1,x,3", "1,,2", "", "5", "-1"}) {
    const ProcessResult result = Generate({model_.string(), "--prompt", prompt});
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, HasSubstr("is not a token id")) << prompt;
    EXPECT_THAT(result.err, HasSubstr("[0, 5)")) << prompt;
  }
}

TEST_F(GenerateCommandTest, TimeLimitStopsARunInOneLine) {
  const ProcessResult result =
      Generate({model_.string(), "--prompt", "1,4,2", "--steps", "6", "--time-limit", "1e-9"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("deadline passed"));
  EXPECT_THAT(result.err, HasSubstr("raise --time-limit"));
  EXPECT_EQ(Generate({model_.string(), "--prompt", "1,4,2", "--steps", "6", "--time-limit", "60"})
                .exit_code,
            0);
}

TEST_F(GenerateCommandTest, BadFlagsAreOneLineUsageErrors) {
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--kv", "paged"},
                                                {"--prompt", "1", "--prompt-tokens", "2"},
                                                {"--steps", "many"},
                                                {"--time-limit", "-1"}}) {
    std::vector<std::string> args = {model_.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult result = Generate(args);
    EXPECT_EQ(result.exit_code, 2) << flags[0];
    EXPECT_THAT(Lines(result.err), ::testing::ElementsAre(StartsWith("nxrt: error: ")));
  }
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--steps", "-1"},
                                                {"--temperature", "-0.5"},
                                                {"--top-k", "-2"},
                                                {"--prompt-tokens", "0"}}) {
    std::vector<std::string> args = {model_.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    ExpectOneLineError(Generate(args));
  }
}

// The generated decoders: the bundled default with a growing cache, and the
// same weights at a fixed capacity of 256.
class GenerateDecoderModelTest : public GenerateCommandTest {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(decoder_) || !std::filesystem::exists(fixed_decoder_)) {
      GTEST_SKIP() << "no generated decoder models in " << models_
                   << "; build the 'models' target (needs the .venv of scripts/setup-deps)";
    }
  }

  std::filesystem::path models_ = std::filesystem::path(NXRT_BINARY_DIR) / "models";
  std::filesystem::path decoder_ = models_ / "decoder.onnx";
  std::filesystem::path fixed_decoder_ = models_ / "decoder_fixed_kv256.onnx";
};

TEST_F(GenerateDecoderModelTest, GrowingAndFixedCachesPickTheSameTokens) {
  const ProcessResult growing =
      Generate({decoder_.string(), "--prompt-tokens", "8", "--steps", "12", "--json"});
  ASSERT_EQ(growing.exit_code, 0) << growing.err;
  const ProcessResult fixed = Generate({fixed_decoder_.string(), "--kv", "fixed", "--prompt-tokens",
                                        "8", "--steps", "12", "--json"});
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(JsonTokens(growing.out, "prompt"), JsonTokens(fixed.out, "prompt"));
  const std::vector<int64_t> tokens = JsonTokens(growing.out, "tokens");
  EXPECT_EQ(tokens.size(), 13u);
  EXPECT_EQ(JsonTokens(fixed.out, "tokens"), tokens);
  EXPECT_EQ(JsonText(fixed.out, "kv"), "\"fixed\"");
  EXPECT_EQ(JsonNumber(fixed.out, "max_len"), 256);
}

TEST_F(GenerateDecoderModelTest, FixedCacheStepsReplayOneCapture) {
  const auto run = [&](const std::string& steps) {
    const ProcessResult result = Generate({fixed_decoder_.string(), "--kv", "fixed",
                                           "--prompt-tokens", "8", "--steps", steps, "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  };
  const std::string few = run("4");
  const std::string many = run("16");
  EXPECT_EQ(JsonNumber(many, "steps"), 16);
  // Every step runs at one set of shapes: the kernels made for the first
  // step serve the rest, so more steps add no misses and evict nothing.
  EXPECT_GT(JsonNumber(few, "misses"), 0);
  EXPECT_EQ(JsonNumber(many, "misses"), JsonNumber(few, "misses"));
  EXPECT_EQ(JsonNumber(many, "evictions"), 0);
  // The bound tensors never move or change shape: the whole step is captured
  // once warm and replayed from then on, never falling back or resetting.
  EXPECT_EQ(JsonNumber(many, "captures"), 1);
  EXPECT_EQ(JsonNumber(many, "replays"), 15);
  EXPECT_EQ(JsonNumber(many, "shape-changed"), 0);
  EXPECT_EQ(JsonNumber(many, "address-changed"), 0);
  EXPECT_EQ(JsonNumber(many, "epoch-changed"), 0);
  EXPECT_EQ(JsonNumber(many, "resets"), 0);
}

TEST_F(GenerateDecoderModelTest, GrowingCacheStepsKeepTheirSegmentsCaptured) {
  // The attention ops see a longer cache every step and run eagerly, their
  // buffers outgrowing themselves now and then; the segments around them
  // bind none of that memory, so each is captured once and replayed after.
  const ProcessResult result =
      Generate({decoder_.string(), "--prompt-tokens", "8", "--steps", "24", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const double captures = JsonNumber(result.out, "captures");
  EXPECT_GT(captures, 0);
  EXPECT_EQ(JsonNumber(result.out, "resets"), 0);
  // Each segment warms up at the first step, is captured at the second, and
  // replays at the other 22.
  EXPECT_EQ(JsonNumber(result.out, "warming-up"), captures);
  EXPECT_EQ(JsonNumber(result.out, "replays"), 23 * captures);
}

TEST_F(GenerateDecoderModelTest, SpeculationKeepsGreedyTokensInFewerRuns) {
  // A prompt that repeats itself, so prompt lookup drafts from the start.
  const std::vector<std::string> common = {"--prompt", "5,6,7,8,9,5,6,7,8,9,5,6,7", "--steps", "40",
                                           "--json"};
  for (const auto& [model, kv] : {std::pair{decoder_, "growing"}, {fixed_decoder_, "fixed"}}) {
    std::vector<std::string> plain_args = {model.string(), "--kv", kv};
    plain_args.insert(plain_args.end(), common.begin(), common.end());
    const ProcessResult plain = Generate(plain_args);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    plain_args.insert(plain_args.end(), {"--speculate", "ngram:4"});
    const ProcessResult speculative = Generate(plain_args);
    ASSERT_EQ(speculative.exit_code, 0) << speculative.err;
    EXPECT_EQ(JsonTokens(speculative.out, "tokens"), JsonTokens(plain.out, "tokens")) << kv;
    EXPECT_EQ(JsonNumber(speculative.out, "steps"), 40) << kv;
    // Every run gives one token and each draft token it keeps.
    const double runs = JsonNumber(speculative.out, "runs");
    EXPECT_EQ(runs + JsonNumber(speculative.out, "accepted"), 40) << kv;
    EXPECT_GT(JsonNumber(speculative.out, "verify_runs"), 0) << kv;
    EXPECT_GT(JsonNumber(speculative.out, "accepted"), 0) << kv;
    EXPECT_LT(runs, 40) << kv;
    // The Verify slot's captures leave the Primary slot's alone.
    EXPECT_THAT(speculative.out, HasSubstr("\"primary\":{\"captures\":"));
    const std::string primary = JsonText(speculative.out, "primary");
    EXPECT_EQ(JsonNumber(primary, "resets"), 0) << kv << " " << primary;
  }
}

TEST_F(GenerateCommandTest, SpeculationNeedsNgramGreedyAndOnePrompt) {
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--speculate", "draft:4"},
                                                {"--speculate", "ngram:0"},
                                                {"--speculate", "ngram:4", "--temperature", "0.7"},
                                                {"--speculate", "ngram:4", "--prompt", "1,2;3"}}) {
    std::vector<std::string> args = {model_.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult result = Generate(args);
    ExpectOneLineError(result);
    EXPECT_THAT(result.err, HasSubstr("--speculate")) << flags[1];
  }
}

// The profile shows the fixed form's step as one segment: the prefill's
// nodes one by one, then per step a single event, which warms up, is
// captured, and replays from then on.
TEST_F(GenerateDecoderModelTest, ProfileShowsEachFixedStepAsOneSegment) {
  const auto trace = std::filesystem::temp_directory_path() /
                     ("nxrt_generate_profile_" + std::to_string(getpid()) + ".json");
  const ProcessResult result =
      Generate({fixed_decoder_.string(), "--kv", "fixed", "--prompt-tokens", "8", "--steps", "6",
                "--profile", trace.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("profile: "));
  const std::vector<TraceEvent> events = ReadTrace(trace);
  std::filesystem::remove(trace);
  std::vector<std::string> segment_steps;
  size_t prefill_nodes = 0;
  for (const TraceEvent& event : events) {
    if (event.category == "node") {
      EXPECT_TRUE(segment_steps.empty()) << event.name << " dispatched after the prefill";
      ++prefill_nodes;
      continue;
    }
    segment_steps.push_back(event.category);
    EXPECT_EQ(static_cast<size_t>(event.nodes), prefill_nodes) << "a step's segment";
  }
  EXPECT_GT(prefill_nodes, 20u);
  EXPECT_EQ(segment_steps, (std::vector<std::string>{"eager segment", "capture", "replay", "replay",
                                                     "replay", "replay"}));
}

TEST_F(GenerateDecoderModelTest, FixedFormNeedsAFixedCapacityModel) {
  const ProcessResult result = Generate({decoder_.string(), "--kv", "fixed"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("decoder_fixed_kv256.onnx"));
}

TEST_F(GenerateDecoderModelTest, MaxLenAboveTheFixedCapacityIsAOneLineError) {
  const ProcessResult result =
      Generate({fixed_decoder_.string(), "--kv", "fixed", "--max-len", "300"});
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("at most 256"));
}

}  // namespace
}  // namespace nxrt_test
