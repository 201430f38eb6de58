// The CUDA EP's cuDNN Conv and pools and its BatchNormalization against the
// CPU EP on the same node and inputs: groups, strides, dilations, explicit,
// one-sided and SAME pads, bias, ceil_mode, count_include_pad, the global
// pools, float16, and the small CNN's block run node by node. Skipped
// visibly on machines without a CUDA device.
#include <cmath>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt_test::EighthsTensor;
using nxrt_test::FloatAttribute;
using nxrt_test::FloatTensor;
using nxrt_test::HostTensor;
using nxrt_test::IntAttribute;
using nxrt_test::IntsAttribute;
using nxrt_test::MakeSingleNodeGraph;
using nxrt_test::StringAttribute;

constexpr nxrt_dtype kF32 = NXRT_DTYPE_FLOAT32;
constexpr nxrt_dtype kF16 = NXRT_DTYPE_FLOAT16;

// Values with a full float32 mantissa: a product in TF32 would lose bits.
HostTensor WideTensor(std::vector<int64_t> dims, float phase) {
  size_t count = 1;
  for (int64_t d : dims) count *= static_cast<size_t>(d);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = std::sin(0.7311f * static_cast<float>(i) + phase);
  return FloatTensor(kF32, std::move(dims), values);
}

// Per-channel values in (0.5, 1.5]: a variance or a scale.
HostTensor PositiveTensor(nxrt_dtype dtype, int64_t channels) {
  std::vector<float> values(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) values[c] = 0.5f + static_cast<float>(c % 8 + 1) / 8.0f;
  return FloatTensor(dtype, {channels}, values);
}

class CudaConvPool : public nxrt_test::CudaVsCpuTest {
 protected:
  // Runs `op` on one EP; the single output.
  HostTensor Run(nxrt::plugin_host::ExecutionProvider& provider, const std::string& op,
                 const std::vector<HostTensor>& inputs, const std::vector<Attribute>& attributes,
                 int64_t opset) {
    const auto dims = nxrt_test::InputDims(inputs);
    auto graph = MakeSingleNodeGraph(op, dims, {}, attributes);
    graph.graph->values[graph.graph->nodes[0].outputs[0]->index].shape.reset();
    auto outputs = nxrt_test::RunNode(provider, graph, inputs, opset);
    EXPECT_EQ(outputs.size(), 1u) << op << " on " << provider.name();
    return outputs.empty() ? HostTensor{} : outputs[0];
  }

  // Runs `op` on both EPs and compares the outputs.
  void Compare(const std::string& op, const std::vector<HostTensor>& inputs,
               const std::vector<Attribute>& attributes, int64_t opset, double rtol = 1e-4,
               double atol = 1e-4) {
    const HostTensor actual = Run(*cuda_, op, inputs, attributes, opset);
    const HostTensor expected = Run(*cpu_, op, inputs, attributes, opset);
    EXPECT_EQ(actual.dtype, expected.dtype);
    nxrt_test::ExpectNear(actual, expected, rtol, atol);
  }
};

TEST_F(CudaConvPool, ConvPadsBiasAndOneSidedPads) {
  {
    SCOPED_TRACE("3x3, pads 1, bias");
    Compare("Conv",
            {EighthsTensor(kF32, {1, 3, 16, 16}, 1), EighthsTensor(kF32, {8, 3, 3, 3}, 2),
             EighthsTensor(kF32, {8}, 3)},
            {IntsAttribute("pads", {1, 1, 1, 1})}, 11);
  }
  {
    SCOPED_TRACE("dilation 2, pads larger at the end");
    Compare("Conv", {EighthsTensor(kF32, {1, 3, 10, 11}, 4), EighthsTensor(kF32, {4, 3, 3, 3}, 5)},
            {IntsAttribute("dilations", {2, 2}), IntsAttribute("pads", {0, 1, 2, 1})}, 11);
  }
  {
    SCOPED_TRACE("1x1, VALID, opset 1");
    Compare("Conv", {EighthsTensor(kF32, {2, 5, 6, 7}, 6), EighthsTensor(kF32, {3, 5, 1, 1}, 7)},
            {StringAttribute("auto_pad", "VALID")}, 1);
  }
}

TEST_F(CudaConvPool, ConvGroupsAndStrides) {
  {
    SCOPED_TRACE("2 groups, stride 2, no bias");
    Compare("Conv", {EighthsTensor(kF32, {2, 4, 9, 9}, 1), EighthsTensor(kF32, {6, 2, 3, 3}, 2)},
            {IntAttribute("group", 2), IntsAttribute("strides", {2, 2})}, 11);
  }
  {
    SCOPED_TRACE("depthwise, pads 1, bias");
    Compare("Conv",
            {EighthsTensor(kF32, {1, 8, 12, 12}, 3), EighthsTensor(kF32, {8, 1, 3, 3}, 4),
             EighthsTensor(kF32, {8}, 5)},
            {IntAttribute("group", 8), IntsAttribute("pads", {1, 1, 1, 1})}, 11);
  }
  {
    SCOPED_TRACE("strides 2 and 3 with dilation 2 across");
    Compare("Conv", {EighthsTensor(kF32, {1, 2, 13, 17}, 6), EighthsTensor(kF32, {3, 2, 2, 3}, 7)},
            {IntsAttribute("strides", {2, 3}), IntsAttribute("dilations", {1, 2}),
             IntsAttribute("pads", {1, 0, 1, 0})},
            11);
  }
}

TEST_F(CudaConvPool, ConvSamePads) {
  {
    SCOPED_TRACE("SAME_UPPER, even kernel, stride 2, bias");
    Compare("Conv",
            {EighthsTensor(kF32, {1, 3, 15, 16}, 1), EighthsTensor(kF32, {5, 3, 4, 4}, 2),
             EighthsTensor(kF32, {5}, 3)},
            {StringAttribute("auto_pad", "SAME_UPPER"), IntsAttribute("strides", {2, 2})}, 11);
  }
  {
    SCOPED_TRACE("SAME_LOWER, 2x2");
    Compare("Conv", {EighthsTensor(kF32, {1, 2, 7, 7}, 4), EighthsTensor(kF32, {3, 2, 2, 2}, 5)},
            {StringAttribute("auto_pad", "SAME_LOWER")}, 11);
  }
}

TEST_F(CudaConvPool, Conv1d) {
  Compare("Conv",
          {EighthsTensor(kF32, {2, 3, 20}, 1), EighthsTensor(kF32, {4, 3, 5}, 2),
           EighthsTensor(kF32, {4}, 3)},
          {IntsAttribute("pads", {2, 1}), IntsAttribute("strides", {2})}, 11);
  Compare("Conv", {EighthsTensor(kF32, {1, 4, 9}, 4), EighthsTensor(kF32, {4, 2, 3}, 5)},
          {IntAttribute("group", 2), StringAttribute("auto_pad", "SAME_UPPER")}, 11);
}

// Eighths multiply exactly even in TF32; full-mantissa values do not.
TEST_F(CudaConvPool, ConvFloat32StaysFloat32) {
  Compare("Conv", {WideTensor({1, 16, 16, 16}, 0.1f), WideTensor({32, 16, 3, 3}, 0.2f)},
          {IntsAttribute("pads", {1, 1, 1, 1})}, 11, 1e-4, 1e-4);
}

TEST_F(CudaConvPool, ConvFloat16) {
  // Eighths sum exactly in float, so both EPs round the same value to float16.
  Compare("Conv",
          {EighthsTensor(kF16, {1, 8, 12, 12}, 1), EighthsTensor(kF16, {16, 8, 3, 3}, 2),
           EighthsTensor(kF16, {16}, 3)},
          {IntsAttribute("pads", {1, 1, 1, 1})}, 11, 1e-3, 1e-3);
  Compare("Conv", {EighthsTensor(kF16, {2, 4, 9, 9}, 4), EighthsTensor(kF16, {4, 2, 3, 3}, 5)},
          {IntAttribute("group", 2), StringAttribute("auto_pad", "SAME_UPPER"),
           IntsAttribute("strides", {2, 2})},
          11, 1e-3, 1e-3);
}

TEST_F(CudaConvPool, MaxPoolPadsStridesAndCeilMode) {
  const HostTensor x = EighthsTensor(kF32, {1, 4, 10, 10}, 1);
  {
    SCOPED_TRACE("2x2 stride 2");
    Compare("MaxPool", {x},
            {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2})}, 12);
  }
  {
    SCOPED_TRACE("3x3 stride 2 pads 1");
    Compare("MaxPool", {x},
            {IntsAttribute("kernel_shape", {3, 3}), IntsAttribute("strides", {2, 2}),
             IntsAttribute("pads", {1, 1, 1, 1})},
            12);
  }
  {
    SCOPED_TRACE("one-sided pads");
    Compare("MaxPool", {x},
            {IntsAttribute("kernel_shape", {3, 3}), IntsAttribute("strides", {2, 2}),
             IntsAttribute("pads", {0, 1, 1, 0})},
            12);
  }
  {
    SCOPED_TRACE("ceil_mode");
    Compare("MaxPool", {x},
            {IntsAttribute("kernel_shape", {3, 3}), IntsAttribute("strides", {2, 2}),
             IntAttribute("ceil_mode", 1)},
            12);
  }
  {
    SCOPED_TRACE("SAME_UPPER on an odd extent");
    Compare("MaxPool", {EighthsTensor(kF32, {2, 3, 9, 9}, 2)},
            {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2}),
             StringAttribute("auto_pad", "SAME_UPPER")},
            12);
  }
  {
    SCOPED_TRACE("1-D");
    Compare("MaxPool", {EighthsTensor(kF32, {2, 3, 11}, 3)},
            {IntsAttribute("kernel_shape", {3}), IntsAttribute("strides", {2}),
             IntsAttribute("pads", {1, 1})},
            12);
  }
  {
    SCOPED_TRACE("float16");
    Compare("MaxPool", {EighthsTensor(kF16, {1, 4, 10, 10}, 4)},
            {IntsAttribute("kernel_shape", {3, 3}), IntsAttribute("pads", {1, 1, 1, 1})}, 12, 0, 0);
  }
}

TEST_F(CudaConvPool, AveragePoolCountsPadsAsAsked) {
  const HostTensor x = EighthsTensor(kF32, {2, 3, 9, 8}, 1);
  for (int64_t include : {0, 1}) {
    SCOPED_TRACE("count_include_pad=" + std::to_string(include));
    Compare("AveragePool", {x},
            {IntsAttribute("kernel_shape", {3, 3}), IntsAttribute("pads", {1, 1, 1, 1}),
             IntAttribute("count_include_pad", include)},
            11, 1e-5, 1e-6);
    Compare("AveragePool", {x},
            {IntsAttribute("kernel_shape", {3, 2}), IntsAttribute("strides", {2, 2}),
             IntsAttribute("pads", {1, 0, 1, 0}), IntAttribute("count_include_pad", include)},
            11, 1e-5, 1e-6);
  }
  {
    SCOPED_TRACE("one-sided pads counted");
    Compare("AveragePool", {x},
            {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("pads", {0, 0, 1, 1}),
             IntAttribute("count_include_pad", 1)},
            11, 1e-5, 1e-6);
  }
  {
    SCOPED_TRACE("ceil_mode with no window past the pads");
    Compare("AveragePool", {EighthsTensor(kF32, {1, 2, 6, 6}, 2)},
            {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2}),
             IntAttribute("ceil_mode", 1)},
            11, 1e-5, 1e-6);
  }
  {
    SCOPED_TRACE("float16");
    Compare("AveragePool", {EighthsTensor(kF16, {1, 4, 10, 10}, 3)},
            {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2})}, 11, 1e-3,
            1e-3);
  }
}

TEST_F(CudaConvPool, GlobalPoolsOverEveryPlane) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    SCOPED_TRACE(op);
    Compare(op, {EighthsTensor(kF32, {2, 8, 7, 9}, 1)}, {}, 1, 1e-5, 1e-6);
    Compare(op, {EighthsTensor(kF32, {2, 5, 13}, 2)}, {}, 1, 1e-5, 1e-6);
    Compare(op, {EighthsTensor(kF32, {1, 3, 2, 3, 4}, 3)}, {}, 1, 1e-5, 1e-6);
    Compare(op, {EighthsTensor(kF16, {1, 16, 8, 8}, 4)}, {}, 1, 1e-3, 1e-3);
  }
}

TEST_F(CudaConvPool, BatchNormalizationAtInference) {
  const int64_t c = 6;
  auto params = [&](nxrt_dtype dtype) {
    return std::vector<HostTensor>{PositiveTensor(dtype, c), EighthsTensor(dtype, {c}, 11),
                                   EighthsTensor(dtype, {c}, 12), PositiveTensor(dtype, c)};
  };
  auto inputs = [&](const HostTensor& x, nxrt_dtype param_dtype) {
    std::vector<HostTensor> all = {x};
    for (HostTensor& p : params(param_dtype)) all.push_back(std::move(p));
    return all;
  };
  Compare("BatchNormalization", inputs(EighthsTensor(kF32, {2, c, 5, 7}, 1), kF32),
          {FloatAttribute("epsilon", 1e-3f)}, 15);
  Compare("BatchNormalization", inputs(EighthsTensor(kF32, {4, c}, 2), kF32), {}, 9);
  Compare("BatchNormalization", inputs(EighthsTensor(kF32, {1, c, 3, 2, 2}, 3), kF32), {}, 14);
  Compare("BatchNormalization", inputs(EighthsTensor(kF16, {2, c, 4, 4}, 4), kF32), {}, 15, 2e-3,
          2e-3);
  Compare("BatchNormalization", inputs(EighthsTensor(kF16, {2, c, 4, 4}, 5), kF16), {}, 15, 2e-3,
          2e-3);
}

// The small CNN's block, Conv -> BatchNormalization -> Relu -> MaxPool ->
// GlobalAveragePool, each EP feeding its own results to its next node.
TEST_F(CudaConvPool, CnnBlockNodeByNode) {
  const std::vector<int64_t> image = {1, 3, 32, 32};
  std::vector<HostTensor> values = {EighthsTensor(kF32, image, 1), EighthsTensor(kF32, image, 1)};
  auto step = [&](const std::string& op, const std::vector<HostTensor>& extra,
                  const std::vector<Attribute>& attributes, int64_t opset) {
    SCOPED_TRACE(op);
    std::vector<HostTensor> on_cuda = {values[0]}, on_cpu = {values[1]};
    on_cuda.insert(on_cuda.end(), extra.begin(), extra.end());
    on_cpu.insert(on_cpu.end(), extra.begin(), extra.end());
    values[0] = Run(*cuda_, op, on_cuda, attributes, opset);
    values[1] = Run(*cpu_, op, on_cpu, attributes, opset);
    nxrt_test::ExpectNear(values[0], values[1], 1e-4, 1e-4);
  };
  step("Conv", {WideTensor({16, 3, 3, 3}, 0.5f), EighthsTensor(kF32, {16}, 2)},
       {IntsAttribute("kernel_shape", {3, 3}), IntsAttribute("pads", {1, 1, 1, 1})}, 17);
  step("BatchNormalization",
       {PositiveTensor(kF32, 16), EighthsTensor(kF32, {16}, 3), EighthsTensor(kF32, {16}, 4),
        PositiveTensor(kF32, 16)},
       {FloatAttribute("epsilon", 1e-5f)}, 17);
  step("Relu", {}, {}, 17);
  step("MaxPool", {}, {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2})},
       17);
  step("GlobalAveragePool", {}, {}, 17);
  EXPECT_EQ(values[0].dims, (std::vector<int64_t>{1, 16, 1, 1}));
}

}  // namespace
