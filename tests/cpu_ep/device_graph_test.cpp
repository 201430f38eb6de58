// Device graphs on the CPU EP. Through the EP: a capture records compute
// calls instead of running them, a replay runs them on the recorded buffers
// (whose contents may change in place), slots hold separate recordings, and
// tokens that were reset, never issued or outlived their kernel are refused.
// Through a session on a chain of elementwise ops and a MatMul: replayed
// results equal eager ones and a reference computed here, a new input shape
// runs eagerly and recaptures, and device_graphs=0 never captures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "no_compute_services.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"
#include "plugin_host/compute_context.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"
#include "plugin_host/plugin_status.hpp"

namespace nxrt_test {
namespace {

using nxrt::StatusCode;
using nxrt::graph::DataType;
using nxrt::graph::Dim;
using nxrt::plugin_host::ExecutionProvider;

std::shared_ptr<nxrt::plugin_host::Plugin> CpuPlugin() {
  auto plugin =
      nxrt::plugin_host::Plugin::Load(std::filesystem::path(NXRT_BINARY_DIR) / "lib/libep_cpu.so");
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  return plugin.value();
}

nxrt_value FloatValue(std::vector<float>& data, const std::vector<int64_t>& dims) {
  nxrt_value v{};
  v.struct_size = sizeof(v);
  v.kind = NXRT_VALUE_TENSOR;
  v.tensor =
      nxrt_tensor{sizeof(nxrt_tensor), NXRT_DTYPE_FLOAT32, NXRT_MEMORY_HOST,           dims.size(),
                  dims.data(),         data.data(),        data.size() * sizeof(float)};
  return v;
}

// One float Add node over two [4] inputs, and a kernel of it.
class AddKernel {
 public:
  explicit AddKernel(const std::shared_ptr<ExecutionProvider>& ep) {
    graph_->opset_imports[""] = 17;
    nxrt::graph::Node node;
    node.op_type = "Add";
    node.name = "add";
    for (const char* name : {"a", "b"}) {
      nxrt::graph::Value v;
      v.name = name;
      v.dtype = DataType::kFloat32;
      v.shape = nxrt::graph::Shape{Dim::Static(4)};
      v.is_graph_input = true;
      node.inputs.push_back(graph_->AddValue(std::move(v)));
    }
    nxrt::graph::Value out;
    out.name = "y";
    out.dtype = DataType::kFloat32;
    node.outputs.push_back(graph_->AddValue(std::move(out)));
    const auto id = graph_->AddNode(std::move(node));
    auto view = std::make_shared<const nxrt::plugin_host::NodeView>(*graph_, id);
    const std::vector<nxrt_shape> shapes(
        2, nxrt_shape{sizeof(nxrt_shape), NXRT_DTYPE_FLOAT32, 1, kDims.data()});
    auto kernel = ep->CreateKernel({}, view, shapes, 17);
    EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
    kernel_ = std::move(kernel).value();
  }

  // Computes y = a + b into preallocated y. The dims handed to the kernel
  // are scrambled right after the call, as the host's may be.
  nxrt::Status Compute(std::vector<float>& a, std::vector<float>& b, std::vector<float>& y) {
    std::vector<int64_t> dims_a = kDims, dims_b = kDims, dims_y = kDims;
    std::vector<nxrt_value> inputs{FloatValue(a, dims_a), FloatValue(b, dims_b)};
    std::vector<nxrt_value> outputs{FloatValue(y, dims_y)};
    NoServices services;
    nxrt::Status status = kernel_->Compute(services, inputs, outputs);
    dims_a[0] = dims_b[0] = dims_y[0] = -7;
    return status;
  }
  void Destroy() { kernel_.reset(); }

 private:
  static inline const std::vector<int64_t> kDims{4};
  std::shared_ptr<nxrt::graph::Graph> graph_ = std::make_shared<nxrt::graph::Graph>();
  std::unique_ptr<nxrt::plugin_host::Kernel> kernel_;
};

std::shared_ptr<ExecutionProvider> CpuEp(nxrt::plugin_host::ProviderOptions options = {}) {
  auto ep = ExecutionProvider::Create(CpuPlugin(), std::move(options));
  EXPECT_TRUE(ep.ok()) << ep.status().ToString();
  return ep.value();
}

// The EP's own answer to a replay or reset, bypassing the host's token check.
nxrt::Status PluginReplay(const ExecutionProvider& ep, nxrt_graph_token token) {
  return nxrt::plugin_host::TakeStatus(ep.plugin().replay_fn()(ep.handle(), token));
}
nxrt::Status PluginReset(const ExecutionProvider& ep, nxrt_graph_token token) {
  return nxrt::plugin_host::TakeStatus(ep.plugin().reset_fn()(ep.handle(), token));
}

TEST(CpuEpDeviceGraphs, CaptureRecordsAndReplayRunsOnTheRecordedBuffers) {
  auto ep = CpuEp();
  ASSERT_TRUE(ep->has_device_graphs());
  AddKernel add(ep);
  std::vector<float> a{1, 2, 3, 4}, b{10, 20, 30, 40}, y(4, -1.0f);

  ASSERT_TRUE(ep->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(add.Compute(a, b, y).ok());
  EXPECT_EQ(y, std::vector<float>(4, -1.0f)) << "a captured call is recorded, not run";
  auto token = ep->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_NE(*token, 0u);

  ASSERT_TRUE(ep->Replay(*token).ok());
  EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 44}));
  a = {-1, 0.5f, 100, 7};
  ASSERT_TRUE(ep->Replay(*token).ok());
  EXPECT_EQ(y, (std::vector<float>{9, 20.5f, 130, 47}));

  // Outside a capture the kernel computes again.
  std::vector<float> fresh(4, 0.0f);
  ASSERT_TRUE(add.Compute(a, a, fresh).ok());
  EXPECT_EQ(fresh, (std::vector<float>{-2, 1, 200, 14}));

  ASSERT_TRUE(ep->Reset(*token).ok());
  const nxrt::Status replayed = PluginReplay(*ep, *token);
  EXPECT_EQ(replayed.code(), StatusCode::kInvalidArgument) << replayed.ToString();
  EXPECT_NE(replayed.message().find("reset"), std::string::npos) << replayed.ToString();
  EXPECT_EQ(PluginReset(*ep, *token).code(), StatusCode::kInvalidArgument);
}

TEST(CpuEpDeviceGraphs, RefusesTokensItNeverIssued) {
  auto ep = CpuEp();
  auto other = CpuEp();
  AddKernel add(other);
  std::vector<float> a{1, 2, 3, 4}, b{1, 1, 1, 1}, y(4);
  ASSERT_TRUE(other->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(add.Compute(a, b, y).ok());
  auto foreign = other->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(foreign.ok());

  for (nxrt_graph_token token : {nxrt_graph_token{0}, nxrt_graph_token{12345}, *foreign}) {
    EXPECT_EQ(PluginReplay(*ep, token).code(), StatusCode::kInvalidArgument) << token;
    EXPECT_EQ(PluginReset(*ep, token).code(), StatusCode::kInvalidArgument) << token;
  }
  EXPECT_TRUE(other->Reset(*foreign).ok());
}

TEST(CpuEpDeviceGraphs, SlotsHoldSeparateRecordings) {
  auto ep = CpuEp();
  AddKernel add(ep);
  std::vector<float> a{1, 2, 3, 4}, b{1, 1, 1, 1}, y_primary(4, 0.0f);
  std::vector<float> c{5, 5, 5, 5}, y_verify(4, 0.0f);
  ASSERT_TRUE(ep->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(add.Compute(a, b, y_primary).ok());
  auto primary = ep->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(primary.ok());
  ASSERT_TRUE(ep->BeginCapture(NXRT_GRAPH_SLOT_VERIFY).ok());
  ASSERT_TRUE(add.Compute(a, c, y_verify).ok());
  auto verify = ep->EndCapture(NXRT_GRAPH_SLOT_VERIFY);
  ASSERT_TRUE(verify.ok());
  EXPECT_NE(*primary, *verify);

  ASSERT_TRUE(ep->Replay(*verify).ok());
  EXPECT_EQ(y_verify, (std::vector<float>{6, 7, 8, 9}));
  EXPECT_EQ(y_primary, std::vector<float>(4, 0.0f));
  ASSERT_TRUE(ep->Replay(*primary).ok());
  EXPECT_EQ(y_primary, (std::vector<float>{2, 3, 4, 5}));

  // Dropping one leaves the other intact.
  ASSERT_TRUE(ep->Reset(*primary).ok());
  c = {0, 0, 0, 1};
  ASSERT_TRUE(ep->Replay(*verify).ok());
  EXPECT_EQ(y_verify, (std::vector<float>{1, 2, 3, 5}));
  ASSERT_TRUE(ep->Reset(*verify).ok());
}

TEST(CpuEpDeviceGraphs, CaptureStateErrorsAreRefused) {
  auto ep = CpuEp();
  EXPECT_EQ(ep->EndCapture(NXRT_GRAPH_SLOT_PRIMARY).status().code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(ep->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  EXPECT_EQ(ep->BeginCapture(NXRT_GRAPH_SLOT_VERIFY).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ep->EndCapture(NXRT_GRAPH_SLOT_VERIFY).status().code(),
            StatusCode::kFailedPrecondition);
  auto empty = ep->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(ep->Replay(*empty).ok());
  EXPECT_TRUE(ep->Reset(*empty).ok());
}

TEST(CpuEpDeviceGraphs, RecordingWhoseKernelWasDestroyedRefusesToReplay) {
  auto ep = CpuEp();
  AddKernel add(ep);
  std::vector<float> a{1, 2, 3, 4}, b{1, 1, 1, 1}, y(4, 0.0f);
  ASSERT_TRUE(ep->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(add.Compute(a, b, y).ok());
  auto token = ep->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok());
  add.Destroy();
  const nxrt::Status replayed = ep->Replay(*token);
  EXPECT_EQ(replayed.code(), StatusCode::kFailedPrecondition) << replayed.ToString();
  EXPECT_EQ(y, std::vector<float>(4, 0.0f));
  EXPECT_TRUE(ep->Reset(*token).ok());
}

TEST(CpuEpDeviceGraphs, OptionTurnsCaptureOffAndRefusesOtherValues) {
  auto plugin = CpuPlugin();
  auto off = ExecutionProvider::Create(plugin, {{"device_graphs", "0"}});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE((*off)->has_device_graphs());
  auto on = ExecutionProvider::Create(plugin, {{"device_graphs", "1"}});
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE((*on)->has_device_graphs());
  for (const char* bad : {"2", "yes", "", "01"}) {
    auto refused = ExecutionProvider::Create(plugin, {{"device_graphs", bad}});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("device_graphs"), std::string::npos)
        << refused.status().ToString();
  }
}

// ---- through a session ---------------------------------------------------------

// y = MatMul(Relu((x + c) * x), w) for x [N, 4], c [4], w [4, 3].
const std::vector<float> kC{1, -1, 2, -2};
const std::vector<float> kW{0.5f, -1, 2, 1, 0.25f, -0.5f, -2, 1, 0, 3, -0.75f, 1.5f};

nxrt::graph::Graph ChainModel() {
  nxrt::graph::Graph g;
  g.model_path = "chain.onnx";
  g.name = "chain";
  g.opset_imports[""] = 17;
  g.weights = std::make_shared<nxrt::graph::WeightStore>();
  // Intermediate values get no shape: shape inference finds it.
  auto add_value = [&](const std::string& name, std::optional<nxrt::graph::Shape> shape) {
    nxrt::graph::Value v;
    v.name = name;
    v.dtype = DataType::kFloat32;
    v.shape = std::move(shape);
    return g.AddValue(std::move(v));
  };
  auto add_constant = [&](const std::string& name, std::vector<int64_t> dims,
                          const std::vector<float>& values) {
    nxrt::graph::Shape shape;
    for (int64_t d : dims) shape.push_back(Dim::Static(d));
    const auto id = add_value(name, shape);
    std::vector<std::byte> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    g.value(id).initializer = g.weights->AddOwned(DataType::kFloat32, dims, std::move(bytes));
    return id;
  };
  const auto x =
      add_value("x", nxrt::graph::Shape{Dim::Symbolic(g.DeclareSymbol("N")), Dim::Static(4)});
  g.value(x).is_graph_input = true;
  g.inputs.push_back(x);
  const auto c = add_constant("c", {4}, kC);
  const auto w = add_constant("w", {4, 3}, kW);
  auto node = [&](const std::string& op, std::vector<nxrt::graph::ValueId> inputs,
                  const std::string& output) {
    nxrt::graph::Node n;
    n.op_type = op;
    n.name = output + "_" + op;
    for (auto input : inputs) n.inputs.push_back(input);
    const auto out = add_value(output, std::nullopt);
    n.outputs.push_back(out);
    g.AddNode(std::move(n));
    return out;
  };
  const auto s = node("Add", {x, c}, "s");
  const auto p = node("Mul", {s, x}, "p");
  const auto r = node("Relu", {p}, "r");
  g.outputs.push_back(node("MatMul", {r, w}, "y"));
  return g;
}

// The model's result computed here in double.
std::vector<float> Reference(const std::vector<float>& x) {
  const size_t rows = x.size() / 4;
  std::vector<float> y(rows * 3);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < 3; ++j) {
      double sum = 0;
      for (size_t k = 0; k < 4; ++k) {
        const double xv = x[i * 4 + k];
        sum += std::max(0.0, (xv + kC[k]) * xv) * kW[k * 3 + j];
      }
      y[i * 3 + j] = static_cast<float>(sum);
    }
  }
  return y;
}

class CpuSessionDeviceGraphs : public ::testing::Test {
 protected:
  void Create(nxrt::plugin_host::ProviderOptions cpu_options = {}) {
    nxrt::EnvironmentOptions environment_options;
    environment_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
    auto environment = nxrt::Environment::Create(environment_options);
    ASSERT_TRUE(environment.ok()) << environment.status().ToString();
    nxrt::SessionOptions options;
    options.providers = {{"cpu", std::move(cpu_options)}};
    auto session = nxrt::Session::Create(*environment, ChainModel(), options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
  }

  static std::vector<nxrt::NamedTensor> Bind(std::vector<float>& x) {
    const int64_t rows = static_cast<int64_t>(x.size() / 4);
    return {{"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {rows, 4}, x.data(),
                                       x.size() * sizeof(float))}};
  }

  // Runs on `slot` with x bound in place; the output values.
  std::vector<float> RunOn(nxrt::DeviceGraphSlot slot, std::vector<float>& x) {
    const auto inputs = Bind(x);
    const nxrt::Status status = session_->Run(slot, inputs, {}, outputs_);
    EXPECT_TRUE(status.ok()) << status.ToString();
    if (!status.ok() || outputs_.size() != 1) return {};
    auto values = outputs_[0].values<float>();
    return {values.begin(), values.end()};
  }

  std::vector<float> RunEagerly(std::vector<float>& x) {
    auto outputs = session_->Run(Bind(x));
    EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
    if (!outputs.ok()) return {};
    auto values = (*outputs)[0].values<float>();
    return {values.begin(), values.end()};
  }

  static void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], 1e-4 * (1 + std::abs(expected[i]))) << i;
    }
  }

  std::unique_ptr<nxrt::Session> session_;
  std::vector<nxrt::Tensor> outputs_;
};

TEST_F(CpuSessionDeviceGraphs, ReplayEqualsEagerAndFollowsInputsChangedInPlace) {
  Create();
  std::vector<float> x{1, 2, -3, 4, 0.5f, -0.25f, 3, -1};
  const std::vector<float> eager = RunEagerly(x);
  ExpectNear(eager, Reference(x));

  EXPECT_EQ(RunOn(nxrt::DeviceGraphSlot::kPrimary, x), eager);  // warm-up, eager
  EXPECT_EQ(session_->device_graph_counters().captures, 0u);
  EXPECT_EQ(RunOn(nxrt::DeviceGraphSlot::kPrimary, x), eager);  // captured, then replayed
  EXPECT_EQ(RunOn(nxrt::DeviceGraphSlot::kPrimary, x), eager);  // replayed
  auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, 2u);

  for (int step = 0; step < 4; ++step) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.75f * static_cast<float>(i) - step;
    ExpectNear(RunOn(nxrt::DeviceGraphSlot::kPrimary, x), Reference(x));
  }
  counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, 6u);
  EXPECT_EQ(RunOn(nxrt::DeviceGraphSlot::kPrimary, x), RunEagerly(x));
}

TEST_F(CpuSessionDeviceGraphs, NewInputShapeRunsEagerlyThenRecaptures) {
  Create();
  std::vector<float> two{1, 2, 3, 4, -1, -2, -3, -4};
  RunOn(nxrt::DeviceGraphSlot::kPrimary, two);
  RunOn(nxrt::DeviceGraphSlot::kPrimary, two);
  ASSERT_EQ(session_->device_graph_counters().captures, 1u);

  std::vector<float> three{0.5f, 1, 1.5f, 2, 2.5f, 3, -0.5f, -1, -1.5f, 7, 8, 9};
  ExpectNear(RunOn(nxrt::DeviceGraphSlot::kPrimary, three), Reference(three));
  auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u) << "a new shape runs eagerly first";
  EXPECT_EQ(counters.fallbacks(nxrt::EagerFallbackReason::kShapeChanged), 1u);
  ExpectNear(RunOn(nxrt::DeviceGraphSlot::kPrimary, three), Reference(three));
  counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 2u);
  three[4] = -6;
  ExpectNear(RunOn(nxrt::DeviceGraphSlot::kPrimary, three), Reference(three));
  EXPECT_EQ(session_->device_graph_counters().captures, 2u);
}

TEST_F(CpuSessionDeviceGraphs, PrimaryAndVerifySlotsKeepTheirOwnCaptures) {
  Create();
  std::vector<float> one{1, -2, 3, -4};
  std::vector<float> three{0, 1, 2, 3, 4, 5, 6, 7, -8, -9, -10, -11};
  for (int i = 0; i < 3; ++i) {
    ExpectNear(RunOn(nxrt::DeviceGraphSlot::kPrimary, one), Reference(one));
    ExpectNear(RunOn(nxrt::DeviceGraphSlot::kVerify, three), Reference(three));
  }
  const auto settled = session_->device_graph_counters();
  EXPECT_EQ(settled.captures, 2u);
  for (int i = 0; i < 4; ++i) {
    one[0] = static_cast<float>(i);
    three[5] = static_cast<float>(-i);
    ExpectNear(RunOn(nxrt::DeviceGraphSlot::kPrimary, one), Reference(one));
    ExpectNear(RunOn(nxrt::DeviceGraphSlot::kVerify, three), Reference(three));
  }
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 2u);
  EXPECT_EQ(counters.replays, settled.replays + 8);
}

TEST_F(CpuSessionDeviceGraphs, DeviceGraphsOffNeverCaptures) {
  Create({{"device_graphs", "0"}});
  std::vector<float> x{1, 2, 3, 4};
  for (int i = 0; i < 3; ++i) ExpectNear(RunOn(nxrt::DeviceGraphSlot::kPrimary, x), Reference(x));
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures + counters.replays, 0u);
}

TEST_F(CpuSessionDeviceGraphs, BadOptionValueFailsSessionCreation) {
  nxrt::EnvironmentOptions environment_options;
  environment_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  auto environment = nxrt::Environment::Create(environment_options);
  ASSERT_TRUE(environment.ok());
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"device_graphs", "maybe"}}}};
  auto session = nxrt::Session::Create(*environment, ChainModel(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("device_graphs"), std::string::npos)
      << session.status().ToString();
}

}  // namespace
}  // namespace nxrt_test
