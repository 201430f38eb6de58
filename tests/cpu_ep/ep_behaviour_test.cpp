// The CPU EP's contract beyond op results: option checking, honest declines,
// capture-safety statements, constant-B packing shared between shape
// variants of a MatMul, and the OpenBLAS worker pool following `threads`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "nxrt/graph/ir.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;
using nxrt::graph::Dim;

std::shared_ptr<nxrt::plugin_host::Plugin> CpuPlugin() {
  auto plugin =
      nxrt::plugin_host::Plugin::Load(std::filesystem::path(NXRT_BINARY_DIR) / "lib/libep_cpu.so");
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  return plugin.value();
}

std::shared_ptr<nxrt::plugin_host::ExecutionProvider> CpuEp() {
  auto ep = nxrt::plugin_host::ExecutionProvider::Create(CpuPlugin());
  EXPECT_TRUE(ep.ok()) << ep.status().ToString();
  return ep.value();
}

struct TestInput {
  DataType dtype;
  std::vector<int64_t> dims;
  std::vector<float> constant;  // float32 initializer data when not empty
};

// A graph of one node over the given inputs, with one output.
struct OneNode {
  std::shared_ptr<nxrt::graph::Graph> graph = std::make_shared<nxrt::graph::Graph>();
  std::shared_ptr<const nxrt::plugin_host::NodeView> view;

  OneNode(const std::string& op, const std::string& domain, const std::vector<TestInput>& inputs) {
    graph->opset_imports[""] = 17;
    nxrt::graph::Node node;
    node.op_type = op;
    node.domain = domain;
    node.name = op + "_node";
    for (size_t i = 0; i < inputs.size(); ++i) {
      nxrt::graph::Value v;
      v.name = "in" + std::to_string(i);
      v.dtype = inputs[i].dtype;
      nxrt::graph::Shape shape;
      for (int64_t d : inputs[i].dims) shape.push_back(Dim::Static(d));
      v.shape = shape;
      if (!inputs[i].constant.empty()) {
        std::vector<std::byte> bytes(inputs[i].constant.size() * sizeof(float));
        std::memcpy(bytes.data(), inputs[i].constant.data(), bytes.size());
        v.initializer = graph->weights->AddOwned(inputs[i].dtype, inputs[i].dims, bytes);
      } else {
        v.is_graph_input = true;
      }
      node.inputs.push_back(graph->AddValue(std::move(v)));
    }
    nxrt::graph::Value out;
    out.name = "out";
    out.dtype = inputs.empty() ? DataType::kFloat32 : inputs[0].dtype;
    node.outputs.push_back(graph->AddValue(std::move(out)));
    const auto id = graph->AddNode(std::move(node));
    view = std::make_shared<const nxrt::plugin_host::NodeView>(*graph, id);
  }
};

TEST(CpuEpBehaviour, RefusesBadOptions) {
  auto plugin = CpuPlugin();
  auto zero = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"threads", "0"}});
  EXPECT_FALSE(zero.ok());
  auto unknown = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"thread", "2"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("thread"), std::string::npos);
  auto two = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"threads", "2"}});
  EXPECT_TRUE(two.ok()) << two.status().ToString();
}

// Threads of this process, from /proc.
int ThreadCount() {
  int count = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

// Exit code 0 when the OpenBLAS workers follow the EPs' `threads`, else the
// number of the first check that failed.
[[noreturn]] void CheckBlasWorkersFollowThreads() {
  const int before_load = ThreadCount();
  auto plugin = CpuPlugin();
  auto one = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"threads", "1"}});
  if (!one.ok()) std::_Exit(2);
  // No idle worker left spinning beside a single-threaded EP.
  if (ThreadCount() != before_load) std::_Exit(3);
  auto three = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"threads", "3"}});
  if (!three.ok()) std::_Exit(4);
  // The largest request wins: three threads need two workers.
  if (ThreadCount() < before_load + 2) std::_Exit(5);
  std::_Exit(0);
}

TEST(CpuEpBehaviour, BlasWorkersFollowTheLargestThreadsOption) {
  // The pool's state is per process: check it in a fresh one.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CheckBlasWorkersFollowThreads(), testing::ExitedWithCode(0), "");
}

TEST(CpuEpBehaviour, DeclinesWithReasons) {
  auto ep = CpuEp();
  OneNode complex_add("Add", "",
                      {{DataType::kComplex64, {2}, {}}, {DataType::kComplex64, {2}, {}}});
  auto add = ep->Claim(*complex_add.view, 17);
  ASSERT_TRUE(add.ok());
  EXPECT_FALSE(add->claimed);
  EXPECT_NE(add->reason.find("complex64"), std::string::npos) << add->reason;

  OneNode other_domain("LinearRegressor", "ai.onnx.ml", {{DataType::kFloat32, {2}, {}}});
  auto regressor = ep->Claim(*other_domain.view, 1);
  ASSERT_TRUE(regressor.ok());
  EXPECT_FALSE(regressor->claimed);
  EXPECT_NE(regressor->reason.find("ai.onnx.ml"), std::string::npos) << regressor->reason;

  OneNode unknown("NoSuchOp", "", {{DataType::kFloat32, {2}, {}}});
  auto none = ep->Claim(*unknown.view, 17);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->claimed);
  EXPECT_NE(none->reason.find("NoSuchOp"), std::string::npos) << none->reason;

  OneNode float_add("Add", "", {{DataType::kFloat32, {2}, {}}, {DataType::kFloat32, {2}, {}}});
  auto claimed = ep->Claim(*float_add.view, 17);
  ASSERT_TRUE(claimed.ok());
  EXPECT_TRUE(claimed->claimed) << claimed->reason;
}

std::vector<nxrt_shape> Shapes(const std::vector<std::vector<int64_t>>& dims) {
  std::vector<nxrt_shape> shapes;
  for (const auto& d : dims) {
    shapes.push_back({sizeof(nxrt_shape), NXRT_DTYPE_FLOAT32, d.size(), d.data()});
  }
  return shapes;
}

TEST(CpuEpBehaviour, StatesCaptureSafety) {
  auto ep = CpuEp();
  OneNode add("Add", "", {{DataType::kFloat32, {4}, {}}, {DataType::kFloat32, {4}, {}}});
  const std::vector<std::vector<int64_t>> dims{{4}, {4}};
  auto add_kernel = ep->CreateKernel({}, add.view, Shapes(dims), 17);
  ASSERT_TRUE(add_kernel.ok()) << add_kernel.status().ToString();
  EXPECT_TRUE((*add_kernel)->capture_safe());

  OneNode nonzero("NonZero", "", {{DataType::kFloat32, {4}, {}}});
  const std::vector<std::vector<int64_t>> one{{4}};
  auto nonzero_kernel = ep->CreateKernel({}, nonzero.view, Shapes(one), 17);
  ASSERT_TRUE(nonzero_kernel.ok()) << nonzero_kernel.status().ToString();
  EXPECT_FALSE((*nonzero_kernel)->capture_safe());

  // Running a body or building a sequence goes through the host.
  for (const char* op : {"If", "SequenceLength", "SplitToSequence"}) {
    OneNode node(op, "", {{DataType::kFloat32, {4}, {}}});
    auto kernel = ep->CreateKernel({}, node.view, Shapes(one), 17);
    ASSERT_TRUE(kernel.ok()) << op << ": " << kernel.status().ToString();
    EXPECT_FALSE((*kernel)->capture_safe()) << op;
  }
}

// Output buffers for MatMul runs.
class FloatOutputs : public nxrt::plugin_host::ComputeServices {
 public:
  nxrt::Status AllocateOutput(size_t, nxrt_dtype dtype, std::span<const int64_t> dims,
                              nxrt_tensor* out) override {
    dims_.assign(dims.begin(), dims.end());
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    data.assign(count, -1.0f);
    *out = nxrt_tensor{sizeof(nxrt_tensor), dtype,       NXRT_MEMORY_HOST,           dims_.size(),
                       dims_.data(),        data.data(), data.size() * sizeof(float)};
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
  std::vector<float> data;

 private:
  static nxrt::Status Refused() { return nxrt::Unsupported("not offered"); }
  std::vector<int64_t> dims_;
};

nxrt_value FloatValue(std::vector<float>& data, const std::vector<int64_t>& dims) {
  nxrt_value v{};
  v.struct_size = sizeof(v);
  v.kind = NXRT_VALUE_TENSOR;
  v.tensor =
      nxrt_tensor{sizeof(nxrt_tensor), NXRT_DTYPE_FLOAT32, NXRT_MEMORY_HOST,           dims.size(),
                  dims.data(),         data.data(),        data.size() * sizeof(float)};
  return v;
}

TEST(CpuEpBehaviour, ShapeVariantAdoptsPackedConstantB) {
  auto ep = CpuEp();
  const std::vector<float> b{1, 2, 3, 4, 5, 6};  // [3, 2]
  OneNode matmul("MatMul", "", {{DataType::kFloat32, {2, 3}, {}}, {DataType::kFloat32, {3, 2}, b}});
  const std::vector<std::vector<int64_t>> first_dims{{2, 3}, {3, 2}};
  auto first = ep->CreateKernel({}, matmul.view, Shapes(first_dims), 17);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  (*first)->SetConstantInputs(std::vector<bool>{false, true});
  const std::vector<int64_t> b_dims{3, 2};
  const nxrt_constant_input constant{
      sizeof(nxrt_constant_input), 1, NXRT_DTYPE_FLOAT32, 2, b_dims.data(), b.data(),
      b.size() * sizeof(float)};
  ASSERT_TRUE((*first)->PrepareConstantInputs({&constant, 1}).ok());
  auto state = (*first)->ShareableConstantState();
  ASSERT_TRUE(static_cast<bool>(state));

  const std::vector<std::vector<int64_t>> second_dims{{4, 3}, {3, 2}};
  auto second = ep->CreateKernel({}, matmul.view, Shapes(second_dims), 17);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  (*second)->SetConstantInputs(std::vector<bool>{false, true});
  auto adopted = (*second)->AdoptShareableConstantState(state);
  ASSERT_TRUE(adopted.ok());
  EXPECT_TRUE(*adopted);

  // The adopted packing is what the variant multiplies by, whatever B buffer
  // the call passes.
  std::vector<float> a{1, 0, 2, -1, 3, 0.5f, 2, 2, 2, 0, 0, 1};
  const std::vector<int64_t> a_dims{4, 3};
  std::vector<float> stale_b(6, 0.0f);
  std::vector<nxrt_value> inputs{FloatValue(a, a_dims), FloatValue(stale_b, b_dims)};
  std::vector<nxrt_value> outputs(1);
  outputs[0].struct_size = sizeof(nxrt_value);
  outputs[0].kind = NXRT_VALUE_TENSOR;
  FloatOutputs services;
  ASSERT_TRUE((*second)->Compute(services, inputs, outputs).ok());
  ASSERT_EQ(services.data.size(), 8u);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      float expected = 0;
      for (int k = 0; k < 3; ++k) expected += a[i * 3 + k] * b[k * 2 + j];
      EXPECT_FLOAT_EQ(services.data[i * 2 + j], expected) << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace nxrt_test
