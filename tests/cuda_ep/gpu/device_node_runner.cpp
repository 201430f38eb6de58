#include "device_node_runner.hpp"

#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "cuda_plugin_path.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"

namespace nxrt_test {
namespace {

using nxrt::plugin_host::ExecutionProvider;

size_t ElementBytes(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT16:
    case NXRT_DTYPE_BFLOAT16:
      return 2;
    case NXRT_DTYPE_INT64:
    case NXRT_DTYPE_FLOAT64:
      return 8;
    default:
      return 4;
  }
}

// Rounded to nearest, ties to even, as the device converts; for zero and
// values in the normal half range.
uint16_t HalfBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  if ((bits & 0x7fffffffu) == 0) return static_cast<uint16_t>(sign);
  const uint32_t exponent = ((bits >> 23) & 0xffu) - 127 + 15;
  const uint32_t mantissa = bits & 0x7fffffu;
  const uint32_t dropped = mantissa & 0x1fffu;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  // A carry out of the mantissa steps the exponent up, as it should.
  if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

// Rounded to nearest, ties to even, as the device converts; finite values.
uint16_t BFloat16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

double HalfValue(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double v = exponent == 0    ? std::ldexp(mantissa, -24)
             : exponent == 31 ? (mantissa ? NAN : INFINITY)
                              : std::ldexp(mantissa | 0x400, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

std::shared_ptr<ExecutionProvider> Create(const std::string& name, nxrt::Status* failure) {
  auto plugin = nxrt::plugin_host::Plugin::Load(BuiltPluginPath(name));
  if (!plugin.ok()) {
    *failure = plugin.status();
    return nullptr;
  }
  auto provider = ExecutionProvider::Create(*plugin);
  if (!provider.ok()) {
    *failure = provider.status();
    return nullptr;
  }
  return *provider;
}

// Output buffers in the provider's memory, made when the kernel asks.
class DeviceServices : public nxrt::plugin_host::ComputeServices {
 public:
  DeviceServices(ExecutionProvider& provider, size_t outputs)
      : provider_(provider), outputs_(outputs) {}
  ~DeviceServices() override {
    for (auto& out : outputs_) provider_.Free(out.data);
  }

  nxrt::Status AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims,
                              nxrt_tensor* out) override {
    Output& o = outputs_.at(index);
    o.dtype = dtype;
    o.dims.assign(dims.begin(), dims.end());
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    o.bytes = count * ElementBytes(dtype);
    auto data = provider_.Alloc(o.bytes, 64);
    if (!data.ok()) return data.status();
    o.data = *data;
    *out = nxrt_tensor{sizeof(nxrt_tensor),
                       dtype,
                       provider_.has_custom_memory() ? NXRT_MEMORY_DEVICE : NXRT_MEMORY_HOST,
                       o.dims.size(),
                       o.dims.data(),
                       o.data,
                       o.bytes};
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

  HostTensor Read(size_t index) {
    const Output& o = outputs_.at(index);
    HostTensor t;
    t.dtype = o.dtype;
    t.dims = o.dims;
    t.bytes.resize(o.bytes);
    const nxrt::Status copied = provider_.CopyToHost(t.bytes.data(), o.data, o.bytes);
    EXPECT_TRUE(copied.ok()) << copied.ToString();
    return t;
  }

 private:
  struct Output {
    nxrt_dtype dtype = NXRT_DTYPE_UNDEFINED;
    std::vector<int64_t> dims;
    void* data = nullptr;
    size_t bytes = 0;
  };
  static nxrt::Status Refused() { return nxrt::Unsupported("tensor outputs only"); }
  ExecutionProvider& provider_;
  std::vector<Output> outputs_;
};

}  // namespace

size_t HostTensor::count() const {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

double HostTensor::at(size_t index) const {
  const std::byte* p = bytes.data() + index * ElementBytes(dtype);
  switch (dtype) {
    case NXRT_DTYPE_FLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return HalfValue(h);
    }
    case NXRT_DTYPE_BFLOAT16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      const uint32_t bits = static_cast<uint32_t>(b) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    case NXRT_DTYPE_INT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case NXRT_DTYPE_INT64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

HostTensor FloatTensor(nxrt_dtype dtype, std::vector<int64_t> dims,
                       const std::vector<float>& values) {
  HostTensor t{dtype, std::move(dims), {}};
  t.bytes.resize(values.size() * ElementBytes(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    std::byte* p = t.bytes.data() + i * ElementBytes(dtype);
    if (dtype == NXRT_DTYPE_FLOAT16) {
      const uint16_t h = HalfBits(values[i]);
      std::memcpy(p, &h, 2);
    } else if (dtype == NXRT_DTYPE_BFLOAT16) {
      const uint16_t b = BFloat16Bits(values[i]);
      std::memcpy(p, &b, 2);
    } else {
      std::memcpy(p, &values[i], 4);
    }
  }
  return t;
}

HostTensor IntTensor(nxrt_dtype dtype, std::vector<int64_t> dims,
                     const std::vector<int64_t>& values) {
  HostTensor t{dtype, std::move(dims), {}};
  t.bytes.resize(values.size() * ElementBytes(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == NXRT_DTYPE_INT64) {
      std::memcpy(t.bytes.data() + i * 8, &values[i], 8);
    } else {
      const int32_t narrow = static_cast<int32_t>(values[i]);
      std::memcpy(t.bytes.data() + i * 4, &narrow, 4);
    }
  }
  return t;
}

HostTensor EighthsTensor(nxrt_dtype dtype, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> eighths(-32, 32);
  size_t count = 1;
  for (int64_t d : dims) count *= static_cast<size_t>(d);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(eighths(random)) / 8.0f;
  return FloatTensor(dtype, std::move(dims), values);
}

std::shared_ptr<ExecutionProvider> CudaProvider(std::string* why) {
  nxrt::Status failure;
  auto provider = Create("cuda", &failure);
  if (!provider) *why = failure.message();
  return provider;
}

std::shared_ptr<ExecutionProvider> CpuProvider() {
  nxrt::Status failure;
  auto provider = Create("cpu", &failure);
  EXPECT_NE(provider, nullptr) << failure.ToString();
  return provider;
}

std::vector<HostTensor> RunNode(ExecutionProvider& provider, SingleNodeGraph& graph,
                                const std::vector<HostTensor>& inputs, int64_t opset,
                                const std::set<size_t>& constant_inputs) {
  nxrt::graph::Graph& g = *graph.graph;
  g.opset_imports[""] = opset;
  auto& node = g.nodes[graph.node.index];
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype == NXRT_DTYPE_UNDEFINED) {
      node.inputs[i] = std::nullopt;
      continue;
    }
    auto& value = g.values[node.inputs[i]->index];
    value.dtype = static_cast<nxrt::graph::DataType>(inputs[i].dtype);
    if (constant_inputs.contains(i)) graph.MakeConstant(i, nxrt::graph::WeightRef{0});
  }
  const auto view = graph.View();
  auto claim = provider.Claim(*view, opset);
  EXPECT_TRUE(claim.ok()) << claim.status().ToString();
  if (!claim.ok()) return {};
  EXPECT_TRUE(claim->claimed) << provider.name() << " declined: " << claim->reason;
  if (!claim->claimed) return {};

  std::vector<nxrt_shape> shapes;
  for (const HostTensor& t : inputs) {
    shapes.push_back({sizeof(nxrt_shape), t.dtype, t.dims.size(), t.dims.data()});
  }
  auto kernel = provider.CreateKernel({}, view, shapes, opset);
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  if (!kernel.ok()) return {};
  std::vector<bool> flags(inputs.size(), false);
  std::vector<nxrt_constant_input> constants;
  for (size_t i : constant_inputs) {
    flags[i] = true;
    const HostTensor& t = inputs[i];
    constants.push_back({sizeof(nxrt_constant_input), i, t.dtype, t.dims.size(), t.dims.data(),
                         t.bytes.data(), t.bytes.size(), /*bytes_persist=*/0});
  }
  (*kernel)->SetConstantInputs(flags);
  if (!constants.empty()) {
    const nxrt::Status prepared = (*kernel)->PrepareConstantInputs(constants);
    EXPECT_TRUE(prepared.ok()) << prepared.ToString();
  }

  const bool device = provider.has_custom_memory();
  std::vector<void*> buffers;
  std::vector<nxrt_value> values;
  for (const HostTensor& t : inputs) {
    if (t.dtype == NXRT_DTYPE_UNDEFINED) {
      nxrt_value none{};
      none.struct_size = sizeof(none);
      none.kind = NXRT_VALUE_NONE;
      none.tensor.struct_size = sizeof(nxrt_tensor);
      values.push_back(none);
      continue;
    }
    auto data = provider.Alloc(t.bytes.size(), 64);
    EXPECT_TRUE(data.ok()) << data.status().ToString();
    if (!data.ok()) return {};
    buffers.push_back(*data);
    EXPECT_TRUE(provider.CopyToDevice(*data, t.bytes.data(), t.bytes.size()).ok());
    nxrt_value v{};
    v.struct_size = sizeof(v);
    v.kind = NXRT_VALUE_TENSOR;
    v.tensor = {sizeof(nxrt_tensor), t.dtype,       device ? NXRT_MEMORY_DEVICE : NXRT_MEMORY_HOST,
                t.dims.size(),       t.dims.data(), *data,
                t.bytes.size()};
    values.push_back(v);
  }
  std::vector<nxrt_value> outputs(node.outputs.size());
  for (nxrt_value& out : outputs) {
    out.struct_size = sizeof(out);
    out.kind = NXRT_VALUE_TENSOR;
    out.tensor.struct_size = sizeof(nxrt_tensor);
  }
  std::vector<HostTensor> results;
  {
    DeviceServices services(provider, outputs.size());
    const nxrt::Status computed = (*kernel)->Compute(services, values, outputs);
    EXPECT_TRUE(computed.ok()) << computed.ToString();
    EXPECT_TRUE(provider.Synchronize().ok());
    if (computed.ok()) {
      for (size_t i = 0; i < outputs.size(); ++i) results.push_back(services.Read(i));
    }
  }
  for (void* b : buffers) provider.Free(b);
  return results;
}

void ExpectNear(const HostTensor& actual, const HostTensor& expected, double rtol, double atol) {
  ASSERT_EQ(actual.dims, expected.dims);
  ASSERT_EQ(actual.count(), expected.count());
  size_t reported = 0;
  for (size_t i = 0; i < actual.count(); ++i) {
    const double a = actual.at(i);
    const double e = expected.at(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (std::abs(a - e) > atol + rtol * std::abs(e) && reported++ < 5) {
      ADD_FAILURE() << "element " << i << ": " << a << " vs expected " << e;
    }
  }
  EXPECT_EQ(reported, 0u) << "elements out of tolerance";
}

}  // namespace nxrt_test
