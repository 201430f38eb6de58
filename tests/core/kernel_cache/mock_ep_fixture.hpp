// What the kernel-cache tests share: a mock EP with its own call log, graphs
// built by hand around one or two nodes, and a device-graph resetter that
// resets the mock's real captured graphs.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/device_graph_resetter.hpp"
#include "kernel_cache/kernel_cache.hpp"
#include "mock_api.h"
#include "nxrt/graph/ir.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/node_view.hpp"
#include "plugin_host/plugin.hpp"

namespace kernel_cache_test {

using nxrt::kernel_cache::InputShape;

inline std::filesystem::path MockPluginPath() {
  return std::filesystem::path(NXRT_BINARY_DIR) / "lib" / "libep_mock.so";
}

// The mock's exported test functions, from the library the host loaded.
class MockLibrary {
 public:
  static MockLibrary& Get() {
    static MockLibrary library;
    return library;
  }
  std::string CallLog(const std::string& log_id) const {
    const size_t size = call_log_(log_id.c_str(), nullptr, 0);
    std::string text(size + 1, '\0');
    call_log_(log_id.c_str(), text.data(), text.size());
    text.resize(size);
    return text;
  }
  int64_t LiveCount(const char* kind) const { return live_count_(kind); }

 private:
  MockLibrary() {
    // Kept open for the whole test program, so the mock's log outlives every
    // plugin reference a test drops.
    handle_ = dlopen(MockPluginPath().c_str(), RTLD_NOW);
    if (handle_ == nullptr) throw std::runtime_error(std::string("cannot open mock: ") + dlerror());
    call_log_ = reinterpret_cast<nxrt_mock_call_log_fn>(dlsym(handle_, NXRT_MOCK_CALL_LOG_SYMBOL));
    live_count_ =
        reinterpret_cast<nxrt_mock_live_count_fn>(dlsym(handle_, NXRT_MOCK_LIVE_COUNT_SYMBOL));
    if (call_log_ == nullptr || live_count_ == nullptr) {
      throw std::runtime_error("libep_mock.so lacks its test functions");
    }
  }
  void* handle_ = nullptr;
  nxrt_mock_call_log_fn call_log_ = nullptr;
  nxrt_mock_live_count_fn live_count_ = nullptr;
};

// A mock EP instance with a call log of its own.
struct MockEp {
  std::shared_ptr<nxrt::plugin_host::ExecutionProvider> provider;
  std::string log_id;

  std::vector<std::string> Calls() const {
    std::vector<std::string> lines;
    std::istringstream stream(MockLibrary::Get().CallLog(log_id));
    for (std::string line; std::getline(stream, line);) lines.push_back(line);
    return lines;
  }
  // Calls starting with `prefix`.
  std::vector<std::string> CallsStartingWith(const std::string& prefix) const {
    std::vector<std::string> matching;
    for (const std::string& call : Calls()) {
      if (call.rfind(prefix, 0) == 0) matching.push_back(call);
    }
    return matching;
  }
  // Index of the first call equal to `entry`, or -1.
  std::ptrdiff_t IndexOf(const std::string& entry) const {
    const std::vector<std::string> calls = Calls();
    auto found = std::find(calls.begin(), calls.end(), entry);
    return found == calls.end() ? -1 : found - calls.begin();
  }
};

inline std::string UniqueLogId() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info ? info->name() : "log") + "_" + std::to_string(counter.fetch_add(1));
}

// Loads libep_mock.so and makes an EP with `options` (see the mock's
// mock_config.hpp) and a fresh call log.
inline MockEp MakeMockEp(nxrt::plugin_host::ProviderOptions options = {}) {
  auto plugin = nxrt::plugin_host::Plugin::Load(MockPluginPath());
  if (!plugin.ok()) throw std::runtime_error(plugin.status().ToString());
  MockEp ep;
  ep.log_id = UniqueLogId();
  options.emplace_back("log", ep.log_id);
  auto provider = nxrt::plugin_host::ExecutionProvider::Create(*plugin, std::move(options));
  if (!provider.ok()) throw std::runtime_error(provider.status().ToString());
  ep.provider = *provider;
  MockLibrary::Get();
  return ep;
}

// A graph of float32 nodes made by hand: each node reads a graph input of
// shape [batch, 3] and, when asked, a [3] initializer.
class TestGraph {
 public:
  TestGraph() : graph_(std::make_shared<nxrt::graph::Graph>()) {
    graph_->model_path = "hand_made.onnx";
    graph_->opset_imports[""] = 17;
  }

  nxrt::graph::NodeId AddNode(const std::string& op, const std::string& name, bool with_initializer,
                              bool with_absent_input = false) {
    nxrt::graph::Graph& g = *graph_;
    nxrt::graph::Node node;
    node.op_type = op;
    node.name = name;
    nxrt::graph::Value x;
    x.name = name + "_x";
    x.dtype = nxrt::graph::DataType::kFloat32;
    x.shape = nxrt::graph::Shape{nxrt::graph::Dim::Symbolic(g.DeclareSymbol("batch")),
                                 nxrt::graph::Dim::Static(3)};
    x.is_graph_input = true;
    node.inputs.push_back(g.AddValue(std::move(x)));
    if (with_initializer) {
      const float weights[3] = {1.0f, 2.0f, 3.0f};
      std::vector<std::byte> bytes(sizeof(weights));
      std::memcpy(bytes.data(), weights, sizeof(weights));
      nxrt::graph::Value w;
      w.name = name + "_w";
      w.dtype = nxrt::graph::DataType::kFloat32;
      w.shape = nxrt::graph::Shape{nxrt::graph::Dim::Static(3)};
      w.initializer = g.weights->AddOwned(nxrt::graph::DataType::kFloat32, {3}, std::move(bytes));
      node.inputs.push_back(g.AddValue(std::move(w)));
    }
    if (with_absent_input) node.inputs.push_back(std::nullopt);
    nxrt::graph::Value y;
    y.name = name + "_y";
    y.dtype = nxrt::graph::DataType::kFloat32;
    y.shape = nxrt::graph::Shape{nxrt::graph::Dim::Symbolic(g.DeclareSymbol("batch")),
                                 nxrt::graph::Dim::Static(3)};
    node.outputs.push_back(g.AddValue(std::move(y)));
    const nxrt::graph::NodeId id = g.AddNode(std::move(node));
    views_.push_back(std::make_shared<const nxrt::plugin_host::NodeView>(g, id));
    return id;
  }

  nxrt::graph::Graph& graph() { return *graph_; }
  std::shared_ptr<const nxrt::plugin_host::NodeView> View(nxrt::graph::NodeId id) const {
    return views_.at(id.index);
  }

 private:
  std::shared_ptr<nxrt::graph::Graph> graph_;
  std::vector<std::shared_ptr<const nxrt::plugin_host::NodeView>> views_;
};

// Shapes of a node reading x [batch, 3] and w [3].
inline std::vector<InputShape> XwShapes(int64_t batch) {
  return {InputShape{{batch, 3}, false}, InputShape{{3}, false}};
}

// Cache options with a per-node bound of `variants`.
inline nxrt::kernel_cache::KernelCacheOptions Bound(size_t variants) {
  nxrt::kernel_cache::KernelCacheOptions options;
  options.variants_per_node = variants;
  return options;
}

inline nxrt::kernel_cache::KernelRequest Request(const TestGraph& graph, nxrt::graph::NodeId node,
                                                 const MockEp& ep,
                                                 const std::vector<InputShape>& shapes,
                                                 bool capture_seq_independent = false) {
  nxrt::kernel_cache::KernelRequest request;
  request.node = graph.View(node);
  request.provider = ep.provider.get();
  request.input_shapes = shapes;
  request.opset = 17;
  request.capture_seq_independent = capture_seq_independent;
  request.artifact = {1, 1};
  return request;
}

// The executor's part in eviction: resets the device graphs it holds in its
// Primary and Verify slots on the EP that captured them, each of which ran
// every kernel, and records the kernels named.
class SlotResetter : public nxrt::kernel_cache::DeviceGraphResetter {
 public:
  nxrt::Status ResetCapturesOf(std::span<const void* const> kernels) override {
    calls.fetch_add(1);
    {
      std::lock_guard lock(named_mutex);
      named.insert(named.end(), kernels.begin(), kernels.end());
    }
    if (!fail_with.ok()) return fail_with;
    for (std::optional<nxrt_graph_token>* slot : {&primary, &verify}) {
      if (!*slot) continue;
      const nxrt_graph_token token = **slot;
      slot->reset();
      NXRT_RETURN_IF_ERROR(provider->Reset(token));
    }
    return nxrt::Status::Ok();
  }

  nxrt::plugin_host::ExecutionProvider* provider = nullptr;
  std::optional<nxrt_graph_token> primary;
  std::optional<nxrt_graph_token> verify;
  nxrt::Status fail_with;
  std::atomic<int> calls{0};
  std::mutex named_mutex;
  std::vector<const void*> named;  // the kernels of every call, in order
};

}  // namespace kernel_cache_test
