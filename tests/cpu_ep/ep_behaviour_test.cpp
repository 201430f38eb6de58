// The CPU EP's contract beyond op results: option checking, honest declines,
// capture-safety statements, refusals (forbidden windows, convolution groups
// and biases, normalisation parameters of the wrong size), prepared constants
// (MatMul's B, Conv's W) shared between shape variants, the math
// libraries' workers following `threads`, single-row products split across
// them, and a preallocated output of another type refused rather than
// overrun.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "attribute_builders.hpp"
#include "no_compute_services.hpp"
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

  OneNode(const std::string& op, const std::string& domain, const std::vector<TestInput>& inputs,
          std::vector<nxrt::graph::Attribute> attributes = {}) {
    graph->opset_imports[""] = 17;
    nxrt::graph::Node node;
    node.op_type = op;
    node.domain = domain;
    node.name = op + "_node";
    node.attributes = std::move(attributes);
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
  auto prepack = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"prepack", "yes"}});
  ASSERT_FALSE(prepack.ok());
  EXPECT_NE(prepack.status().message().find("prepack=yes"), std::string::npos)
      << prepack.status().ToString();
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

TEST(CpuEpBehaviour, FlexAttentionOffersOnlyItsOwnSoftmaxPrecision) {
  auto ep = CpuEp();
  const std::vector<TestInput> qkv{{DataType::kFloat16, {1, 2, 3, 4}, {}},
                                   {DataType::kFloat16, {1, 2, 5, 4}, {}},
                                   {DataType::kFloat16, {1, 2, 5, 4}, {}}};
  const auto precision = [](DataType dtype) {
    return IntAttribute("softmax_precision", static_cast<int64_t>(dtype));
  };
  OneNode half_softmax("FlexAttention", "ai.onnx.preview", qkv, {precision(DataType::kFloat16)});
  auto declined = ep->Claim(*half_softmax.view, 1);
  ASSERT_TRUE(declined.ok());
  EXPECT_FALSE(declined->claimed);
  EXPECT_NE(declined->reason.find("softmax_precision 10"), std::string::npos) << declined->reason;

  OneNode float_softmax("FlexAttention", "ai.onnx.preview", qkv, {precision(DataType::kFloat32)});
  auto claimed = ep->Claim(*float_softmax.view, 1);
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

std::vector<float> Ramp(size_t count, float scale) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

// `persist`: the bytes outlive the kernel, which may read them in place.
nxrt_constant_input ConstantOf(size_t index, const std::vector<int64_t>& dims,
                               const std::vector<float>& data, bool persist = false) {
  return {sizeof(nxrt_constant_input),
          index,
          NXRT_DTYPE_FLOAT32,
          dims.size(),
          dims.data(),
          data.data(),
          data.size() * sizeof(float),
          persist ? 1 : 0};
}

// Runs `kernel` on float inputs; the output lands in `services`.
bool RunKernel(nxrt::plugin_host::Kernel& kernel, std::vector<std::vector<float>*> data,
               const std::vector<std::vector<int64_t>>& dims, FloatOutputs& services) {
  std::vector<nxrt_value> inputs;
  for (size_t i = 0; i < data.size(); ++i) inputs.push_back(FloatValue(*data[i], dims[i]));
  std::vector<nxrt_value> outputs(1);
  outputs[0].struct_size = sizeof(nxrt_value);
  outputs[0].kind = NXRT_VALUE_TENSOR;
  return kernel.Compute(services, inputs, outputs).ok();
}

// Expects making `op`'s kernel over inputs of `dims`, all of `dtype`, to
// fail with `fault` in the error.
void ExpectKernelRefused(nxrt::plugin_host::ExecutionProvider& ep, const std::string& op,
                         const std::string& domain, const std::vector<std::vector<int64_t>>& dims,
                         std::vector<nxrt::graph::Attribute> attributes, int64_t opset,
                         const std::string& fault, DataType dtype = DataType::kFloat32) {
  std::vector<TestInput> inputs;
  for (const auto& d : dims) inputs.push_back({dtype, d, {}});
  OneNode node(op, domain, inputs, std::move(attributes));
  std::vector<nxrt_shape> shapes = Shapes(dims);
  for (nxrt_shape& shape : shapes) shape.dtype = static_cast<nxrt_dtype>(dtype);
  auto made = ep.CreateKernel({}, node.view, shapes, opset);
  ASSERT_FALSE(made.ok()) << op << " made a kernel it should refuse (" << fault << ")";
  EXPECT_NE(made.status().message().find(fault), std::string::npos)
      << op << ": " << made.status().message();
}

// Windows the specification forbids are refused when the kernel is made,
// with what to fix: zero strides (a division by zero), non-positive kernels
// or dilations, negative pads, dilated extents past 64 bits.
TEST(CpuEpBehaviour, RefusesWindowsTheSpecificationForbids) {
  auto ep = CpuEp();
  struct Case {
    const char* op;
    std::vector<nxrt::graph::Attribute> attributes;
    const char* fault;
  };
  const auto kernel = [](std::vector<int64_t> k) { return IntsAttribute("kernel_shape", k); };
  const int64_t huge = int64_t{1} << 40;
  const Case cases[] = {
      {"MaxPool", {kernel({2, 2}), IntsAttribute("strides", {0, 1})}, "strides must be positive"},
      {"AveragePool",
       {kernel({2, 2}), IntsAttribute("strides", {1, 0}),
        StringAttribute("auto_pad", "SAME_UPPER")},
       "strides must be positive"},
      {"AveragePool", {kernel({-2, 2})}, "kernel extents must be positive"},
      {"MaxPool",
       {kernel({2, 2}), IntsAttribute("dilations", {0, 0})},
       "dilations must be positive"},
      {"AveragePool",
       {kernel({2, 2}), IntsAttribute("pads", {-1, 0, 0, 0})},
       "pads must not be negative"},
      {"MaxPool", {kernel({huge, 2}), IntsAttribute("dilations", {huge, 1})}, "overflows 64 bits"},
      {"Conv", {IntsAttribute("strides", {0, 0})}, "strides must be positive"},
      {"ConvTranspose", {IntsAttribute("strides", {0, 1})}, "strides must be positive"},
      {"ConvTranspose",
       {IntsAttribute("dilations", {2})},
       "strides or dilations do not match the spatial rank"},
      {"ConvTranspose",
       {IntsAttribute("output_padding", {1})},
       "output_padding needs one extent of 0 or more per spatial axis"},
  };
  for (const Case& c : cases) {
    std::vector<std::vector<int64_t>> dims{{1, 2, 6, 6}};
    if (std::string(c.op).starts_with("Conv")) dims.push_back({2, 3, 2, 2});
    ExpectKernelRefused(*ep, c.op, "", dims, c.attributes, 17, c.fault);
  }
}

// Normalisation parameters of another size than the op reads (per channel,
// per group or per normalised row) are refused when the kernel is made.
TEST(CpuEpBehaviour, RefusesNormalizationParametersOfTheWrongSize) {
  auto ep = CpuEp();
  struct Case {
    const char* op;
    int64_t opset;
    std::vector<std::vector<int64_t>> dims;
    std::vector<nxrt::graph::Attribute> attributes;
    const char* fault;
  };
  const std::vector<int64_t> x{2, 4, 3, 3};
  const Case cases[] = {
      {"GroupNormalization",
       21,
       {x, {2}, {4}},
       {IntAttribute("num_groups", 2)},
       "input 1 (scale) has 2 elements; it needs 4"},
      {"GroupNormalization",
       18,
       {x, {2}, {4}},
       {IntAttribute("num_groups", 2)},
       "input 2 (bias) has 4 elements; it needs 2"},
      {"InstanceNormalization", 6, {x, {4}, {0}}, {}, "input 2 (B) has 0 elements; it needs 4"},
      {"BatchNormalization",
       15,
       {x, {4}, {4}, {3}, {4}},
       {},
       "input 3 (mean) has 3 elements; it needs 4"},
      {"LayerNormalization",
       17,
       {x, {4, 3, 3}, {3}},
       {IntAttribute("axis", 1)},
       "input 2 (B) has 3 elements; it needs 36"},
  };
  for (const Case& c : cases) {
    // Double: not oneDNN's float path.
    ExpectKernelRefused(*ep, c.op, "", c.dims, c.attributes, c.opset, c.fault, DataType::kFloat64);
  }
}

// A group below one (a division by zero) and a bias of another length than
// the output maps (read past by oneDNN) are refused when the kernel is made.
TEST(CpuEpBehaviour, RefusesConvolutionGroupsAndBiasesThatDoNotFit) {
  auto ep = CpuEp();
  struct Case {
    const char* op;
    const char* domain;
    std::vector<std::vector<int64_t>> dims;  // X, W, B
    std::vector<nxrt::graph::Attribute> attributes;
    const char* fault;
  };
  const Case cases[] = {
      {"Conv",
       "",
       {{1, 4, 8, 8}, {4, 4, 3, 3}},
       {IntAttribute("group", 0)},
       "group must be positive"},
      {"Conv",
       "",
       {{1, 4, 8, 8}, {4, 4, 3, 3}, {0}},
       {},
       "(B, one value per output map) has 0 elements; it needs 4"},
      {"ConvTranspose",
       "",
       {{1, 4, 8, 8}, {4, 2, 3, 3}},
       {IntAttribute("group", 0)},
       "group must be positive"},
      {"ConvTranspose",
       "",
       {{1, 4, 8, 8}, {4, 2, 3, 3}, {3}},
       {},
       "(B, one value per output map) has 3 elements; it needs 2"},
      {"ConvPool",
       "pkg.nxrt",
       {{1, 4, 8, 8}, {16, 4, 3, 3}, {4}},
       {IntsAttribute("pool_kernel_shape", {2, 2}), IntsAttribute("pool_strides", {2, 2})},
       "(B, one value per output map) has 4 elements; it needs 16"},
  };
  for (const Case& c : cases) {
    const int64_t opset = std::string(c.domain).empty() ? 17 : 1;
    ExpectKernelRefused(*ep, c.op, c.domain, c.dims, c.attributes, opset, c.fault);
  }
}

// Blocks must tile the input exactly; a blocksize whose square overflows
// 64 bits divided by zero.
TEST(CpuEpBehaviour, RefusesBlocksThatDoNotTileTheInput) {
  auto ep = CpuEp();
  struct Case {
    const char* op;
    std::vector<int64_t> dims;
    int64_t blocksize;
    const char* fault;
  };
  const Case cases[] = {
      {"DepthToSpace", {1, 8, 2, 3}, int64_t{1} << 62, "8 channels do not divide"},
      {"DepthToSpace", {1, 6, 2, 3}, 2, "6 channels do not divide into blocksize^2 = 2^2"},
      {"SpaceToDepth", {1, 1, 4, 6}, 4, "a 4x6 image does not divide into blocks of 4"},
      {"SpaceToDepth", {1, 1, 4, 4}, 0, "blocksize must be positive"},
  };
  for (const Case& c : cases) {
    ExpectKernelRefused(*ep, c.op, "", {c.dims}, {IntAttribute("blocksize", c.blocksize)}, 13,
                        c.fault);
  }
}

// An empty axis has no index of a max or a min to give its output's rows.
TEST(CpuEpBehaviour, RefusesArgMaxAndArgMinOverAnEmptyAxis) {
  auto ep = CpuEp();
  for (const char* op : {"ArgMax", "ArgMin"}) {
    ExpectKernelRefused(*ep, op, "", {{0, 5}}, {IntAttribute("axis", 0)}, 13,
                        "axis 0 of [0,5] is empty, so it has no index to give");
  }
}

// Concat's inputs may differ only along the axis; [4,2,2] joined to [2,2,2]
// on axis 1 wrote past the output.
TEST(CpuEpBehaviour, ConcatRefusesInputsThatDifferOffTheAxis) {
  auto ep = CpuEp();
  ExpectKernelRefused(*ep, "Concat", "", {{2, 2, 2}, {4, 2, 2}}, {IntAttribute("axis", 1)}, 13,
                      "Concat: input 1 is [4,2,2] and input 0 [2,2,2]; they may differ only on "
                      "axis 1");
}

// An element-type attribute is read into the ABI's dtype enum only when it
// names one; -2^31 was an enum value no switch expected.
TEST(CpuEpBehaviour, RefusesElementTypeAttributesThatNameNoType) {
  auto ep = CpuEp();
  ExpectKernelRefused(*ep, "QuantizeLinear", "", {{4}, {}},
                      {IntAttribute("output_dtype", -(int64_t{1} << 31))}, 21,
                      "attribute output_dtype is -2147483648, which names no ONNX element type");
  ExpectKernelRefused(*ep, "Cast", "", {{4}}, {IntAttribute("to", 1000)}, 21,
                      "attribute to is 1000, which names no ONNX element type");
}

// num_outputs must count the node's outputs; 2^40 of them was a list of 2^40
// part sizes before the count was compared. The parts are worked out when
// the kernel is made, so that is where it is refused.
TEST(CpuEpBehaviour, SplitRefusesANumOutputsOtherThanItsOutputCount) {
  auto ep = CpuEp();
  ExpectKernelRefused(*ep, "Split", "", {{4}}, {IntAttribute("num_outputs", int64_t{1} << 40)}, 18,
                      "Split: num_outputs is 1099511627776 but the node has 1 outputs");
}

TEST(CpuEpBehaviour, OldGemmWithoutBroadcastNeedsAFullC) {
  auto ep = CpuEp();
  const auto gemm_with_c = [&](std::vector<int64_t> c_dims) {
    OneNode gemm("Gemm", "",
                 {{DataType::kFloat32, {2, 3}, {}},
                  {DataType::kFloat32, {3, 4}, {}},
                  {DataType::kFloat32, c_dims, {}}});
    return ep->CreateKernel({}, gemm.view, Shapes({{2, 3}, {3, 4}, c_dims}), 6);
  };
  auto full = gemm_with_c({2, 4});
  EXPECT_TRUE(full.ok()) << full.status().ToString();
  auto row = gemm_with_c({4});
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find("broadcast=1"), std::string::npos)
      << row.status().ToString();
}

struct Variant {
  std::unique_ptr<nxrt::plugin_host::Kernel> kernel;
  bool adopted = false;
};

// Makes `node`'s kernel at `first` dims and prepares `constant` (input 1,
// constant) for it; then makes the kernel at `second` dims and offers it the
// first's shareable state. nullopt, with the failure recorded, when a step
// fails.
std::optional<Variant> AdoptingVariant(nxrt::plugin_host::ExecutionProvider& ep,
                                       const OneNode& node,
                                       const std::vector<std::vector<int64_t>>& first,
                                       const std::vector<std::vector<int64_t>>& second,
                                       const nxrt_constant_input& constant) {
  const std::vector<bool> constant_b{false, true};
  auto preparing = ep.CreateKernel({}, node.view, Shapes(first), 17);
  if (!preparing.ok()) {
    ADD_FAILURE() << preparing.status().ToString();
    return std::nullopt;
  }
  (*preparing)->SetConstantInputs(constant_b);
  if (!(*preparing)->PrepareConstantInputs({&constant, 1}).ok()) {
    ADD_FAILURE() << "prepare failed";
    return std::nullopt;
  }
  auto state = (*preparing)->ShareableConstantState();
  if (!state) {
    ADD_FAILURE() << "no shareable state";
    return std::nullopt;
  }
  auto adopting = ep.CreateKernel({}, node.view, Shapes(second), 17);
  if (!adopting.ok()) {
    ADD_FAILURE() << adopting.status().ToString();
    return std::nullopt;
  }
  (*adopting)->SetConstantInputs(constant_b);
  auto adopted = (*adopting)->AdoptShareableConstantState(state);
  if (!adopted.ok()) {
    ADD_FAILURE() << adopted.status().ToString();
    return std::nullopt;
  }
  return Variant{std::move(*adopting), *adopted};
}

TEST(CpuEpBehaviour, ShapeVariantAdoptsPackedConstantB) {
  auto ep = CpuEp();
  const std::vector<int64_t> b_dims{3, 2};
  const std::vector<float> b{1, 2, 3, 4, 5, 6};
  OneNode matmul("MatMul", "", {{DataType::kFloat32, {2, 3}, {}}, {DataType::kFloat32, b_dims, b}});
  const std::vector<std::vector<int64_t>> second_dims{{4, 3}, b_dims};
  auto second =
      AdoptingVariant(*ep, matmul, {{2, 3}, b_dims}, second_dims, ConstantOf(1, b_dims, b));
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->adopted);

  // The adopted packing is what the variant multiplies by, whatever B buffer
  // the call passes.
  std::vector<float> a{1, 0, 2, -1, 3, 0.5f, 2, 2, 2, 0, 0, 1};
  std::vector<float> stale_b(6, 0.0f);
  FloatOutputs services;
  ASSERT_TRUE(RunKernel(*second->kernel, {&a, &stale_b}, second_dims, services));
  ASSERT_EQ(services.data.size(), 8u);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      float expected = 0;
      for (int k = 0; k < 3; ++k) expected += a[i * 3 + k] * b[k * 2 + j];
      EXPECT_FLOAT_EQ(services.data[i * 2 + j], expected) << i << "," << j;
    }
  }
}

// Y of a Conv over X [n, c, h, w] and W [m, c, kh, kw]: no pads, unit strides.
std::vector<float> DirectConv(const std::vector<float>& x, const std::vector<int64_t>& x_dims,
                              const std::vector<float>& w, const std::vector<int64_t>& w_dims) {
  const int64_t n = x_dims[0], c = x_dims[1], h = x_dims[2], wd = x_dims[3];
  const int64_t m = w_dims[0], kh = w_dims[2], kw = w_dims[3];
  const int64_t oh = h - kh + 1, ow = wd - kw + 1;
  std::vector<float> y(n * m * oh * ow, 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float sum = 0;
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q)
                sum += x[((b * c + ch) * h + i + p) * wd + j + q] *
                       w[((o * c + ch) * kh + p) * kw + q];
          y[((b * m + o) * oh + i) * ow + j] = sum;
        }
  return y;
}

TEST(CpuEpBehaviour, ShapeVariantAdoptsPreparedConvWeights) {
  auto ep = CpuEp();
  const std::vector<int64_t> w_dims{4, 2, 3, 3};
  const std::vector<float> w = Ramp(72, 0.25f);
  OneNode conv("Conv", "",
               {{DataType::kFloat32, {1, 2, 6, 5}, {}}, {DataType::kFloat32, w_dims, w}});
  const std::vector<std::vector<int64_t>> second_dims{{3, 2, 6, 5}, w_dims};
  auto second =
      AdoptingVariant(*ep, conv, {{1, 2, 6, 5}, w_dims}, second_dims, ConstantOf(1, w_dims, w));
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->adopted);

  // The adopted weights are what the variant convolves with, whatever W
  // buffer the call passes.
  std::vector<float> x = Ramp(3 * 2 * 6 * 5, 0.5f);
  std::vector<float> stale_w(w.size(), 0.0f);
  FloatOutputs services;
  ASSERT_TRUE(RunKernel(*second->kernel, {&x, &stale_w}, second_dims, services));
  const std::vector<float> expected = DirectConv(x, second_dims[0], w, w_dims);
  ASSERT_EQ(services.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(services.data[i], expected[i], 1e-4f * (1.0f + std::abs(expected[i]))) << i;
  }
}

TEST(CpuEpBehaviour, SingleRowVariantReadsTheSeveralRowVariantsConstantB) {
  // A decoder's decode step (one row, gemv) takes B from its prefill's
  // shared state (several rows, oneDNN's blocked layout) without the
  // constant's bytes.
  auto ep = CpuEp();
  const std::vector<int64_t> b_dims{3, 5};
  const std::vector<float> b = Ramp(15, 1.0f);
  OneNode matmul("MatMul", "", {{DataType::kFloat32, {4, 3}, {}}, {DataType::kFloat32, b_dims, b}});
  const std::vector<std::vector<int64_t>> row_dims{{1, 3}, b_dims};
  auto row = AdoptingVariant(*ep, matmul, {{4, 3}, b_dims}, row_dims, ConstantOf(1, b_dims, b));
  ASSERT_TRUE(row.has_value());
  EXPECT_TRUE(row->adopted);

  std::vector<float> a{0.5f, -2.0f, 3.0f};
  std::vector<float> stale_b(b.size(), 0.0f);
  FloatOutputs services;
  ASSERT_TRUE(RunKernel(*row->kernel, {&a, &stale_b}, row_dims, services));
  ASSERT_EQ(services.data.size(), 5u);
  for (int j = 0; j < 5; ++j) {
    float expected = 0;
    for (int k = 0; k < 3; ++k) expected += a[k] * b[k * 5 + j];
    EXPECT_FLOAT_EQ(services.data[j], expected) << j;
  }
}

// Y[M,N] = alpha * A[M,K] * op(B) + beta * C[N], op(B) = B^T ([N,K]) when
// `transpose_b`.
std::vector<float> Product(const std::vector<float>& a, const std::vector<float>& b,
                           const std::vector<float>& c, int64_t m, int64_t n, int64_t k,
                           bool transpose_b, float alpha, float beta) {
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * b[transpose_b ? j * k + p : p * n + j];
      y[i * n + j] = static_cast<float>(alpha * sum + (c.empty() ? 0.0 : beta * c[j]));
    }
  }
  return y;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-4f * (1.0f + std::abs(expected[i]))) << i;
  }
}

// A MatMul of `rows` rows over constant B: the output of a compute after B's
// bytes changed, given that B was prepared with `persist`, on a CPU EP made
// with `options`.
std::vector<float> RowsAfterBChanged(
    bool persist, int64_t rows = 1,
    const std::vector<std::pair<std::string, std::string>>& options = {}) {
  constexpr int64_t kK = 4, kN = 3;
  auto ep = nxrt::plugin_host::ExecutionProvider::Create(CpuPlugin(), options);
  EXPECT_TRUE(ep.ok()) << ep.status().ToString();
  if (!ep.ok()) return {};
  const std::vector<int64_t> b_dims{kK, kN};
  std::vector<float> b = Ramp(kK * kN, 1.0f);
  OneNode matmul("MatMul", "",
                 {{DataType::kFloat32, {rows, kK}, {}}, {DataType::kFloat32, b_dims, b}});
  const std::vector<std::vector<int64_t>> dims{{rows, kK}, b_dims};
  auto kernel = (*ep)->CreateKernel({}, matmul.view, Shapes(dims), 17);
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  if (!kernel.ok()) return {};
  (*kernel)->SetConstantInputs(std::vector<bool>{false, true});
  const nxrt_constant_input constant = ConstantOf(1, b_dims, b, persist);
  EXPECT_TRUE((*kernel)->PrepareConstantInputs({&constant, 1}).ok());
  for (float& v : b) v *= 2.0f;
  std::vector<float> a = Ramp(rows * kK, 0.5f);
  std::vector<float> stale_b(b.size(), 0.0f);
  FloatOutputs services;
  EXPECT_TRUE(RunKernel(**kernel, {&a, &stale_b}, dims, services));
  return services.data;
}

TEST(CpuEpBehaviour, PersistentConstantBIsReadInPlaceAndABorrowedOneIsCopied) {
  const std::vector<float> a = Ramp(4, 0.5f);
  const std::vector<float> given = Ramp(12, 1.0f);
  std::vector<float> doubled = given;
  for (float& v : doubled) v *= 2.0f;
  // No copy of a persistent B: the gemv reads the host's bytes, as they are now.
  ExpectNear(RowsAfterBChanged(true), Product(a, doubled, {}, 1, 3, 4, false, 1.0f, 0.0f));
  // A borrowed B is copied during prepare, so a later change is not seen.
  ExpectNear(RowsAfterBChanged(false), Product(a, given, {}, 1, 3, 4, false, 1.0f, 0.0f));
}

TEST(CpuEpBehaviour, PrepackOffReadsAPersistentBInPlaceForSeveralRows) {
  constexpr int64_t kRows = 5;
  const std::vector<float> a = Ramp(kRows * 4, 0.5f);
  const std::vector<float> given = Ramp(12, 1.0f);
  std::vector<float> doubled = given;
  for (float& v : doubled) v *= 2.0f;
  // Off: oneDNN's product reads the host's bytes.
  ExpectNear(RowsAfterBChanged(true, kRows, {{"prepack", "0"}}),
             Product(a, doubled, {}, kRows, 3, 4, false, 1.0f, 0.0f));
  // On (the default): it reads its blocked copy, made while preparing.
  ExpectNear(RowsAfterBChanged(true, kRows), Product(a, given, {}, kRows, 3, 4, false, 1.0f, 0.0f));
}

TEST(CpuEpBehaviour, SeveralRowVariantLaysOutTheSingleRowVariantsConstantB) {
  // K and N off oneDNN's 16 x 64 blocks, so its layout pads both.
  constexpr int64_t kK = 20, kN = 70, kRows = 6;
  auto ep = CpuEp();
  const std::vector<int64_t> b_dims{kK, kN};
  const std::vector<float> b = Ramp(kK * kN, 0.125f);
  OneNode matmul("MatMul", "",
                 {{DataType::kFloat32, {1, kK}, {}}, {DataType::kFloat32, b_dims, b}});
  const std::vector<std::vector<int64_t>> rows_dims{{kRows, kK}, b_dims};
  auto rows = AdoptingVariant(*ep, matmul, {{1, kK}, b_dims}, rows_dims, ConstantOf(1, b_dims, b));
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(rows->adopted);

  std::vector<float> a = Ramp(kRows * kK, -0.5f);
  std::vector<float> stale_b(b.size(), 0.0f);
  FloatOutputs services;
  ASSERT_TRUE(RunKernel(*rows->kernel, {&a, &stale_b}, rows_dims, services));
  ExpectNear(services.data, Product(a, b, {}, kRows, kN, kK, false, 1.0f, 0.0f));
}

// Gemm(A, B, C) with transB, alpha and beta over a constant B: a variant of
// `second_rows` rows adopts the state a variant of `first_rows` prepared.
void CheckTransposedGemmVariants(int64_t first_rows, int64_t second_rows) {
  constexpr int64_t kK = 20, kN = 70;
  auto ep = CpuEp();
  const std::vector<int64_t> b_dims{kN, kK};
  const std::vector<float> b = Ramp(kN * kK, 0.25f);
  OneNode gemm(
      "Gemm", "",
      {{DataType::kFloat32, {first_rows, kK}, {}},
       {DataType::kFloat32, b_dims, b},
       {DataType::kFloat32, {kN}, {}}},
      {IntAttribute("transB", 1), FloatAttribute("alpha", 0.5f), FloatAttribute("beta", 2.0f)});
  const std::vector<std::vector<int64_t>> second_dims{{second_rows, kK}, b_dims, {kN}};
  auto second = AdoptingVariant(*ep, gemm, {{first_rows, kK}, b_dims, {kN}}, second_dims,
                                ConstantOf(1, b_dims, b));
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->adopted);

  std::vector<float> a = Ramp(second_rows * kK, 1.0f);
  std::vector<float> stale_b(b.size(), 0.0f);
  std::vector<float> c = Ramp(kN, -3.0f);
  FloatOutputs services;
  ASSERT_TRUE(RunKernel(*second->kernel, {&a, &stale_b, &c}, second_dims, services));
  ExpectNear(services.data, Product(a, b, c, second_rows, kN, kK, true, 0.5f, 2.0f));
}

TEST(CpuEpBehaviour, TransposedGemmConstantBServesSingleAndSeveralRowVariants) {
  {
    SCOPED_TRACE("several rows, then one");
    CheckTransposedGemmVariants(5, 1);
  }
  {
    SCOPED_TRACE("one row, then several");
    CheckTransposedGemmVariants(1, 5);
  }
}

// Plans and runs a small Conv and a MatMul on `ep`; false on any failure.
bool ComputeConvAndMatMul(nxrt::plugin_host::ExecutionProvider& ep) {
  const std::vector<int64_t> w_dims{8, 4, 3, 3};
  OneNode conv("Conv", "",
               {{DataType::kFloat32, {1, 4, 16, 16}, {}}, {DataType::kFloat32, w_dims, {}}});
  const std::vector<std::vector<int64_t>> conv_dims{{1, 4, 16, 16}, w_dims};
  auto conv_kernel = ep.CreateKernel({}, conv.view, Shapes(conv_dims), 17);
  OneNode matmul("MatMul", "",
                 {{DataType::kFloat32, {64, 64}, {}}, {DataType::kFloat32, {64, 64}, {}}});
  const std::vector<std::vector<int64_t>> matmul_dims{{64, 64}, {64, 64}};
  auto matmul_kernel = ep.CreateKernel({}, matmul.view, Shapes(matmul_dims), 17);
  if (!conv_kernel.ok() || !matmul_kernel.ok()) return false;
  std::vector<float> x = Ramp(4 * 16 * 16, 1.0f), w = Ramp(8 * 4 * 9, 1.0f);
  std::vector<float> a = Ramp(64 * 64, 1.0f), b = Ramp(64 * 64, 0.5f);
  FloatOutputs conv_out, matmul_out;
  return RunKernel(**conv_kernel, {&x, &w}, conv_dims, conv_out) &&
         RunKernel(**matmul_kernel, {&a, &b}, matmul_dims, matmul_out);
}

// Threads of this process, from /proc.
int ThreadCount() {
  int count = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

// A single-row MatMul of [1, 256] x [256, 1000] on `ep`, large enough to be
// split across threads; false on any failure.
bool ComputeSingleRowProduct(nxrt::plugin_host::ExecutionProvider& ep) {
  const std::vector<std::vector<int64_t>> dims{{1, 256}, {256, 1000}};
  OneNode matmul("MatMul", "",
                 {{DataType::kFloat32, dims[0], {}}, {DataType::kFloat32, dims[1], {}}});
  auto kernel = ep.CreateKernel({}, matmul.view, Shapes(dims), 17);
  if (!kernel.ok()) return false;
  std::vector<float> a = Ramp(256, 1.0f), b = Ramp(256 * 1000, 0.5f);
  FloatOutputs out;
  return RunKernel(**kernel, {&a, &b}, dims, out);
}

// Exit code 0 when the math libraries' workers follow the EPs' `threads`,
// else the number of the first check that failed.
[[noreturn]] void CheckMathWorkersFollowThreads() {
  const int before_load = ThreadCount();
  auto plugin = CpuPlugin();
  auto one = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"threads", "1"}});
  if (!one.ok()) std::_Exit(2);
  // No idle worker left spinning beside a single-threaded EP, before or after
  // oneDNN plans and runs a product and a convolution.
  if (ThreadCount() != before_load) std::_Exit(3);
  if (!ComputeConvAndMatMul(**one)) std::_Exit(6);
  if (ThreadCount() != before_load) std::_Exit(7);
  auto three = nxrt::plugin_host::ExecutionProvider::Create(plugin, {{"threads", "3"}});
  if (!three.ok()) std::_Exit(4);
  // OpenBLAS's pool stays shut whatever the option: OpenMP's threads are
  // the only workers, started by the first parallel region.
  if (ThreadCount() != before_load) std::_Exit(8);
  // A one-thread EP's single-row product stays on the calling thread...
  if (!ComputeSingleRowProduct(**one)) std::_Exit(9);
  if (ThreadCount() != before_load) std::_Exit(10);
  // ...while oneDNN runs with the largest request: three threads, two workers.
  if (!ComputeConvAndMatMul(**one)) std::_Exit(11);
  if (ThreadCount() < before_load + 2) std::_Exit(5);
  std::_Exit(0);
}

TEST(CpuEpBehaviour, MathWorkersFollowTheLargestThreadsOption) {
  // The pools' state is per process: check it in a fresh one.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CheckMathWorkersFollowThreads(), testing::ExitedWithCode(0), "");
}

// Exit code 0 when a single-row product on a three-thread EP starts the two
// workers it splits across, else the number of the check that failed.
[[noreturn]] void CheckSingleRowProductUsesTheEpsThreads() {
  const int before_load = ThreadCount();
  auto three = nxrt::plugin_host::ExecutionProvider::Create(CpuPlugin(), {{"threads", "3"}});
  if (!three.ok()) std::_Exit(2);
  if (!ComputeSingleRowProduct(**three)) std::_Exit(3);
  if (ThreadCount() < before_load + 2) std::_Exit(4);
  std::_Exit(0);
}

TEST(CpuEpBehaviour, SingleRowProductRunsOnTheEpsThreads) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CheckSingleRowProductUsesTheEpsThreads(), testing::ExitedWithCode(0), "");
}

// A decode step's gemv split across threads (runs of B's K rows summed, or
// rows of a transposed B), into blocks of unequal size when three threads
// share 256 rows or 1,000 outputs, must give the product, and the very same
// bits on every run.
TEST(CpuEpBehaviour, SingleRowProductsSplitAcrossThreadsGiveTheProduct) {
  constexpr int64_t kK = 256, kN = 1000;
  for (const char* threads : {"2", "3"}) {
    SCOPED_TRACE(std::string("threads=") + threads);
    auto ep = nxrt::plugin_host::ExecutionProvider::Create(CpuPlugin(), {{"threads", threads}});
    ASSERT_TRUE(ep.ok()) << ep.status().ToString();
    std::vector<float> a = Ramp(kK, 0.5f), c = Ramp(kN, -1.0f);
    std::vector<float> b = Ramp(kK * kN, 0.25f);
    for (size_t i = 0; i < b.size(); ++i) b[i] += static_cast<float>(i % 1013) * 1e-3f;
    for (const bool transpose_b : {false, true}) {
      SCOPED_TRACE(transpose_b ? "Gemm, transB" : "MatMul");
      const std::vector<int64_t> b_dims =
          transpose_b ? std::vector<int64_t>{kN, kK} : std::vector<int64_t>{kK, kN};
      std::vector<TestInput> inputs{{DataType::kFloat32, {1, kK}, {}},
                                    {DataType::kFloat32, b_dims, {}}};
      std::vector<std::vector<int64_t>> dims{{1, kK}, b_dims};
      std::vector<nxrt::graph::Attribute> attributes;
      if (transpose_b) {
        inputs.push_back({DataType::kFloat32, {kN}, {}});
        dims.push_back({kN});
        attributes = {IntAttribute("transB", 1), FloatAttribute("alpha", 0.5f),
                      FloatAttribute("beta", 2.0f)};
      }
      OneNode node(transpose_b ? "Gemm" : "MatMul", "", inputs, attributes);
      auto kernel = (*ep)->CreateKernel({}, node.view, Shapes(dims), 17);
      ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
      std::vector<std::vector<float>*> data{&a, &b};
      if (transpose_b) data.push_back(&c);
      FloatOutputs first, second;
      ASSERT_TRUE(RunKernel(**kernel, data, dims, first));
      ASSERT_TRUE(RunKernel(**kernel, data, dims, second));
      ExpectNear(first.data, transpose_b ? Product(a, b, c, 1, kN, kK, true, 0.5f, 2.0f)
                                         : Product(a, b, {}, 1, kN, kK, false, 1.0f, 0.0f));
      EXPECT_EQ(first.data, second.data);
    }
  }
}

// The host sizes a preallocated output from the model's declared type; a
// kernel whose op gives another type must refuse it, not write past it.
TEST(CpuEpBehaviour, RefusesAPreallocatedOutputOfAnotherType) {
  auto ep = CpuEp();
  OneNode generator("RandomUniformLike", "", {{DataType::kFloat32, {4}, {}}});
  const std::vector<int64_t> dims{4};
  const std::vector<nxrt_shape> shapes{
      nxrt_shape{sizeof(nxrt_shape), NXRT_DTYPE_FLOAT32, dims.size(), dims.data()}};
  auto kernel = ep->CreateKernel({}, generator.view, shapes, 17);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();

  std::vector<float> x(4, 0.5f);
  std::vector<int64_t> x_dims = dims;
  std::vector<nxrt_value> inputs(1);
  inputs[0].struct_size = sizeof(nxrt_value);
  inputs[0].kind = NXRT_VALUE_TENSOR;
  inputs[0].tensor = {sizeof(nxrt_tensor), NXRT_DTYPE_FLOAT32, NXRT_MEMORY_HOST,        1,
                      x_dims.data(),       x.data(),           x.size() * sizeof(float)};
  // Four bools, with a guard after them that a float write would reach.
  std::vector<uint8_t> y(4 + 12, 0xAB);
  std::vector<int64_t> y_dims = dims;
  std::vector<nxrt_value> outputs(1);
  outputs[0].struct_size = sizeof(nxrt_value);
  outputs[0].kind = NXRT_VALUE_TENSOR;
  outputs[0].tensor = {
      sizeof(nxrt_tensor), NXRT_DTYPE_BOOL, NXRT_MEMORY_HOST, 1, y_dims.data(), y.data(), 4};
  NoServices services;
  const nxrt::Status status = (*kernel)->Compute(services, inputs, outputs);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("preallocated as bool [4] but the op produces float32 [4]"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(y, std::vector<uint8_t>(16, 0xAB)) << "the kernel wrote into the refused buffer";
}

}  // namespace
}  // namespace nxrt_test
