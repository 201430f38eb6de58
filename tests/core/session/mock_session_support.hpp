// Helpers for tests that run sessions on the mock EP: models built directly
// in the IR, an Environment that finds the build's plugins, float tensors,
// and the mock's call log read back through its exported functions.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "mock_api.h"
#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {

// A dim: a number, or a symbol name.
using Dim = std::variant<int64_t, std::string>;

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    graph_.model_path = "test.onnx";
    graph_.name = "test";
    graph_.opset_imports[""] = opset;
    graph_.weights = std::make_shared<nxrt::graph::WeightStore>();
  }

  ModelBuilder& Input(const std::string& name, const std::vector<Dim>& dims,
                      nxrt::graph::DataType dtype = nxrt::graph::DataType::kFloat32) {
    nxrt::graph::Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = Shape(dims);
    v.is_graph_input = true;
    graph_.inputs.push_back(graph_.AddValue(std::move(v)));
    return *this;
  }

  ModelBuilder& Constant(const std::string& name, std::vector<int64_t> dims,
                         const std::vector<float>& values) {
    std::vector<std::byte> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    nxrt::graph::Value v;
    v.name = name;
    v.dtype = nxrt::graph::DataType::kFloat32;
    nxrt::graph::Shape shape;
    for (int64_t d : dims) shape.push_back(nxrt::graph::Dim::Static(d));
    v.shape = shape;
    v.initializer =
        graph_.weights->AddOwned(nxrt::graph::DataType::kFloat32, dims, std::move(bytes));
    graph_.AddValue(std::move(v));
    return *this;
  }

  // A node of the default domain with one output.
  ModelBuilder& Node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::string& output, const std::string& name = "") {
    nxrt::graph::Node node;
    node.op_type = op;
    node.name = name.empty() ? output + "_" + op : name;
    for (const std::string& input : inputs) node.inputs.push_back(graph_.FindValue(input).value());
    nxrt::graph::Value out;
    out.name = output;
    node.outputs.push_back(graph_.AddValue(std::move(out)));
    graph_.AddNode(std::move(node));
    return *this;
  }

  // A node of `domain` with any number of outputs; "" names an absent input
  // or output.
  ModelBuilder& NodeOf(const std::string& domain, const std::string& op,
                       const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs,
                       const std::vector<std::pair<std::string, int64_t>>& int_attributes = {}) {
    if (!domain.empty()) graph_.opset_imports.try_emplace(domain, 1);
    nxrt::graph::Node node;
    node.op_type = op;
    node.domain = domain;
    node.name = outputs.front() + "_" + op;
    for (const auto& [attr_name, value] : int_attributes) {
      nxrt::graph::Attribute attribute;
      attribute.name = attr_name;
      attribute.type = nxrt::graph::AttributeType::kInt;
      attribute.i = value;
      node.attributes.push_back(std::move(attribute));
    }
    for (const std::string& input : inputs) {
      node.inputs.push_back(input.empty() ? std::nullopt
                                          : std::optional(graph_.FindValue(input).value()));
    }
    for (const std::string& output : outputs) {
      if (output.empty()) {
        node.outputs.push_back(std::nullopt);
        continue;
      }
      nxrt::graph::Value out;
      out.name = output;
      node.outputs.push_back(graph_.AddValue(std::move(out)));
    }
    graph_.AddNode(std::move(node));
    return *this;
  }

  // Declares a node output's type, as a model's value_info does.
  ModelBuilder& Declare(const std::string& name, nxrt::graph::DataType dtype,
                        const std::vector<Dim>& dims) {
    nxrt::graph::Value& value = graph_.value(graph_.FindValue(name).value());
    value.dtype = dtype;
    value.shape = Shape(dims);
    return *this;
  }

  ModelBuilder& Output(const std::string& name) {
    graph_.outputs.push_back(graph_.FindValue(name).value());
    return *this;
  }

  nxrt::graph::Graph Build() { return std::move(graph_); }

 private:
  nxrt::graph::Shape Shape(const std::vector<Dim>& dims) {
    nxrt::graph::Shape shape;
    for (const Dim& d : dims) {
      if (const auto* n = std::get_if<int64_t>(&d)) {
        shape.push_back(nxrt::graph::Dim::Static(*n));
      } else {
        shape.push_back(nxrt::graph::Dim::Symbolic(graph_.DeclareSymbol(std::get<std::string>(d))));
      }
    }
    return shape;
  }

  nxrt::graph::Graph graph_;
};

inline std::shared_ptr<nxrt::Environment> TestEnvironment() {
  nxrt::EnvironmentOptions options;
  options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  auto env = nxrt::Environment::Create(options);
  EXPECT_TRUE(env.ok()) << env.status().ToString();
  return env.value();
}

// A mock EP entry logging under `log` with `options` added.
inline nxrt::ExecutionProviderSpec Mock(
    const std::string& log, std::vector<std::pair<std::string, std::string>> options = {}) {
  options.emplace_back("log", log);
  return {"mock", std::move(options)};
}

inline nxrt::SessionOptions MockOptions(
    const std::string& log, std::vector<std::pair<std::string, std::string>> options = {}) {
  nxrt::SessionOptions session_options;
  session_options.providers.push_back(Mock(log, std::move(options)));
  return session_options;
}

inline nxrt::Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = nxrt::Tensor::FromValues<float>(std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

inline std::vector<float> ValuesOf(const nxrt::Tensor& t) {
  auto span = t.values<float>();
  return {span.begin(), span.end()};
}

// y = Relu((x + c) * x), c = [1, -1, 2, -2] broadcast over rows of x [N, 4]:
// three nodes the mock computes for real.
inline nxrt::graph::Graph Chain() {
  return ModelBuilder()
      .Input("x", {std::string("N"), int64_t{4}})
      .Constant("c", {4}, {1, -1, 2, -2})
      .Node("Add", {"x", "c"}, "s")
      .Node("Mul", {"s", "x"}, "p")
      .Node("Relu", {"p"}, "y")
      .Output("y")
      .Build();
}

// A session of Chain() on `options`; null, and the test failed, when it
// cannot be made.
inline std::unique_ptr<nxrt::Session> ChainSession(nxrt::SessionOptions options) {
  auto session = nxrt::Session::Create(TestEnvironment(), Chain(), std::move(options));
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

// Chain's y for `x`, worked out here rather than by a session.
inline std::vector<float> ChainExpected(const std::vector<float>& x) {
  const float c[4] = {1, -1, 2, -2};
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = std::max(0.0f, (x[i] + c[i % 4]) * x[i]);
  return y;
}

// A KV cache model for the mock, whose GroupQueryAttention sets present =
// past + 1: com.microsoft GroupQueryAttention (2 heads, 1 KV head of size 4)
// over a past cache [1, 1, cap, 4], with outputs attended, present_key,
// present_value (the attention's presents, or Identity views of them when
// asked) and, when asked, key_seen = Identity(past_key) after it.
inline constexpr int64_t kCapacity = 3;
inline constexpr int64_t kHeadSize = 4;

struct KvCacheModel {
  // The present outputs are declared on the past's sequence symbol, the
  // capacity form; otherwise they grow to past + new.
  bool present_at_capacity = true;
  nxrt::graph::DataType past_key_dtype = nxrt::graph::DataType::kFloat32;
  bool past_key_read_elsewhere = false;
  bool presents_through_identity = false;
};

inline nxrt::graph::Graph BuildKvCacheModel(const KvCacheModel& model) {
  using nxrt::graph::DataType;
  const std::string axis = model.present_at_capacity ? "cap" : "past";
  const std::vector<Dim> cache{int64_t{1}, int64_t{1}, axis, kHeadSize};
  const std::string key_written = model.presents_through_identity ? "key_written" : "present_key";
  const std::string value_written =
      model.presents_through_identity ? "value_written" : "present_value";
  ModelBuilder builder;
  builder.Input("query", {int64_t{1}, int64_t{1}, int64_t{8}})
      .Input("key", {int64_t{1}, int64_t{1}, kHeadSize})
      .Input("value", {int64_t{1}, int64_t{1}, kHeadSize})
      .Input("past_key", cache, model.past_key_dtype)
      .Input("past_value", cache)
      .Input("seqlens_k", {int64_t{1}}, DataType::kInt32)
      .Input("total_sequence_length", {}, DataType::kInt32)
      .NodeOf(
          "com.microsoft", "GroupQueryAttention",
          {"query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"},
          {"attended", key_written, value_written}, {{"num_heads", 2}, {"kv_num_heads", 1}});
  if (model.present_at_capacity) {
    builder.Declare(key_written, DataType::kFloat32, cache)
        .Declare(value_written, DataType::kFloat32, cache);
  }
  if (model.presents_through_identity) {
    builder.Node("Identity", {key_written}, "present_key")
        .Node("Identity", {value_written}, "present_value");
  }
  builder.Output("attended").Output("present_key").Output("present_value");
  if (model.past_key_read_elsewhere) {
    builder.Node("Identity", {"past_key"}, "key_seen").Output("key_seen");
  }
  return builder.Build();
}

// Inputs of BuildKvCacheModel: zeros, and the given float32 caches of
// kCapacity x kHeadSize values.
inline std::vector<nxrt::NamedTensor> KvCacheInputs(const std::vector<float>& past_key,
                                                    const std::vector<float>& past_value) {
  auto zeros = [](nxrt::DataType dtype, std::vector<int64_t> shape) {
    auto t = nxrt::Tensor::Zeros(dtype, std::move(shape));
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return std::move(t).value();
  };
  const std::vector<int64_t> cache{1, 1, kCapacity, kHeadSize};
  std::vector<nxrt::NamedTensor> inputs;
  inputs.push_back({"query", zeros(nxrt::DataType::kFloat32, {1, 1, 8})});
  inputs.push_back({"key", zeros(nxrt::DataType::kFloat32, {1, 1, kHeadSize})});
  inputs.push_back({"value", zeros(nxrt::DataType::kFloat32, {1, 1, kHeadSize})});
  inputs.push_back({"past_key", Floats(cache, past_key)});
  inputs.push_back({"past_value", Floats(cache, past_value)});
  inputs.push_back({"seqlens_k", zeros(nxrt::DataType::kInt32, {1})});
  inputs.push_back({"total_sequence_length", zeros(nxrt::DataType::kInt32, {})});
  return inputs;
}

// The mock's exported test functions, from the library the session loaded:
// libep_mock.so, or libep_mock_device.so for the mock with memory of its own.
class MockLibrary {
 public:
  static MockLibrary& Get() {
    static MockLibrary library("libep_mock.so");
    return library;
  }
  static MockLibrary& Device() {
    static MockLibrary library("libep_mock_device.so");
    return library;
  }
  std::vector<std::string> CallLog(const std::string& log_id) const {
    const size_t size = call_log_(log_id.c_str(), nullptr, 0);
    std::string text(size + 1, '\0');
    call_log_(log_id.c_str(), text.data(), text.size());
    text.resize(size);
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = text.find('\n', start);
      lines.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return lines;
  }
  void Clear(const std::string& log_id) const { clear_(log_id.c_str()); }
  int64_t Live(const char* kind) const { return live_(kind); }

 private:
  explicit MockLibrary(const std::string& file) {
    handle_ = dlopen((std::string(NXRT_BINARY_DIR "/lib/") + file).c_str(), RTLD_NOW);
    EXPECT_NE(handle_, nullptr) << dlerror();
    call_log_ = reinterpret_cast<nxrt_mock_call_log_fn>(dlsym(handle_, NXRT_MOCK_CALL_LOG_SYMBOL));
    clear_ = reinterpret_cast<nxrt_mock_clear_call_log_fn>(
        dlsym(handle_, NXRT_MOCK_CLEAR_CALL_LOG_SYMBOL));
    live_ = reinterpret_cast<nxrt_mock_live_count_fn>(dlsym(handle_, NXRT_MOCK_LIVE_COUNT_SYMBOL));
  }
  void* handle_ = nullptr;
  nxrt_mock_call_log_fn call_log_ = nullptr;
  nxrt_mock_clear_call_log_fn clear_ = nullptr;
  nxrt_mock_live_count_fn live_ = nullptr;
};

// How many lines of `lines` start with `prefix`.
inline size_t CountPrefix(const std::vector<std::string>& lines, const std::string& prefix) {
  size_t n = 0;
  for (const std::string& line : lines) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// Computes of one op's mock kernels, and how many of them wrote in place
// (an output over an input's bytes). The log names a kernel's op when it is
// made ("create_kernel Identity k3 ...") and only its tag when it runs
// ("compute k3", "compute k3 in-place").
struct OpComputes {
  size_t all = 0;
  size_t in_place = 0;
};

inline OpComputes CountComputes(const std::string& log, const std::string& op) {
  const std::vector<std::string> lines = MockLibrary::Get().CallLog(log);
  const std::string prefix = "create_kernel " + op + " ";
  std::vector<std::string> tags;
  for (const std::string& line : lines) {
    if (line.starts_with(prefix)) {
      tags.push_back(line.substr(prefix.size(), line.find(' ', prefix.size()) - prefix.size()));
    }
  }
  OpComputes counts;
  for (const std::string& line : lines) {
    for (const std::string& tag : tags) {
      counts.all += line == "compute " + tag || line == "compute " + tag + " in-place";
      counts.in_place += line == "compute " + tag + " in-place";
    }
  }
  return counts;
}

// The name of the running test, for a call log of its own.
inline std::string TestLogId() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

}  // namespace nxrt_test
