#include "node_case_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/test_data.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"

namespace nxrt_test {
namespace {

namespace fs = std::filesystem;
using nxrt::graph::DataType;
using nxrt::graph::TestTensor;

const fs::path kNodeCases = "/usr/share/libonnx-testdata/data/node";

std::shared_ptr<nxrt::plugin_host::ExecutionProvider> CpuProvider() {
  static std::shared_ptr<nxrt::plugin_host::ExecutionProvider> provider = [] {
    auto plugin = nxrt::plugin_host::Plugin::Load(fs::path(NXRT_BINARY_DIR) / "lib/libep_cpu.so");
    if (!plugin.ok()) throw std::runtime_error(plugin.status().ToString());
    // A fixed seed gives the sampling ops the same verdicts on every run.
    auto ep = nxrt::plugin_host::ExecutionProvider::Create(plugin.value(), {{"seed", "1"}});
    if (!ep.ok()) throw std::runtime_error(ep.status().ToString());
    return ep.value();
  }();
  return provider;
}

// Output buffers the test owns; a preallocated output is handed back when
// the kernel asks for it at the same shape.
class TestServices : public nxrt::plugin_host::ComputeServices {
 public:
  struct Buffer {
    bool allocated = false;
    bool none = false;
    nxrt_dtype dtype = NXRT_DTYPE_UNDEFINED;
    std::vector<int64_t> dims;
    std::vector<std::byte> bytes;
    std::vector<std::string> strings;
    std::vector<nxrt_string_view> views;
  };

  explicit TestServices(size_t outputs) : buffers_(outputs) {}

  Buffer& Preallocate(size_t index, nxrt_dtype dtype, const std::vector<int64_t>& dims) {
    Buffer& b = buffers_.at(index);
    Fill(b, dtype, dims);
    return b;
  }

  nxrt::Status AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims,
                              nxrt_tensor* out) override {
    if (index >= buffers_.size()) return nxrt::InvalidArgument("output index out of range");
    Buffer& b = buffers_[index];
    if (b.allocated && !std::ranges::equal(b.dims, dims)) {
      return nxrt::InvalidArgument("preallocated output asked for at another shape");
    }
    if (!b.allocated) Fill(b, dtype, std::vector<int64_t>(dims.begin(), dims.end()));
    *out = Describe(b);
    return nxrt::Status::Ok();
  }
  nxrt::Status AllocateSequenceOutput(size_t, size_t) override { return Refused(); }
  nxrt::Status AllocateSequenceElement(size_t, size_t, nxrt_dtype, std::span<const int64_t>,
                                       nxrt_tensor*) override {
    return Refused();
  }
  nxrt::Status SetOutputNone(size_t index) override {
    buffers_.at(index).none = true;
    return nxrt::Status::Ok();
  }
  nxrt::Status SetStringElement(size_t index, size_t element, std::string_view text) override {
    Buffer& b = buffers_.at(index);
    if (!b.allocated || b.dtype != NXRT_DTYPE_STRING || element >= b.strings.size()) {
      return nxrt::InvalidArgument("string element of an unallocated or non-string output");
    }
    b.strings[element] = std::string(text);
    b.views[element] = {b.strings[element].data(), b.strings[element].size()};
    return nxrt::Status::Ok();
  }
  nxrt::Status RunSubgraph(std::string_view, std::span<const nxrt_value>,
                           std::span<nxrt_value>) override {
    return Refused();
  }

  const Buffer& buffer(size_t index) const { return buffers_.at(index); }
  static nxrt_tensor Describe(Buffer& b) {
    nxrt_tensor t{};
    t.struct_size = sizeof(t);
    t.dtype = b.dtype;
    t.memory = NXRT_MEMORY_HOST;
    t.rank = b.dims.size();
    t.dims = b.dims.empty() ? nullptr : b.dims.data();
    if (b.dtype == NXRT_DTYPE_STRING) {
      t.data = b.views.empty() ? nullptr : b.views.data();
      t.byte_size = b.views.size() * sizeof(nxrt_string_view);
    } else {
      t.data = b.bytes.empty() ? nullptr : b.bytes.data();
      t.byte_size = b.bytes.size();
    }
    return t;
  }

 private:
  static void Fill(Buffer& b, nxrt_dtype dtype, const std::vector<int64_t>& dims) {
    b.allocated = true;
    b.dtype = dtype;
    b.dims = dims;
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    if (dtype == NXRT_DTYPE_STRING) {
      b.strings.assign(count, "");
      b.views.assign(count, nxrt_string_view{"", 0});
    } else {
      const size_t bits = nxrt::graph::DataTypeBits(static_cast<DataType>(dtype));
      // Poisoned, so a kernel that skips elements cannot pass by luck.
      b.bytes.assign((count * bits + 7) / 8, std::byte{0xA5});
    }
  }
  static nxrt::Status Refused() {
    return nxrt::Unsupported("the test compute services offer tensor outputs only");
  }
  std::vector<Buffer> buffers_;
};

// An input the kernel reads: the tensor view and what backs it.
struct InputValue {
  nxrt_value value{};
  std::vector<int64_t> dims;
  std::vector<nxrt_string_view> views;
  nxrt_dtype dtype = NXRT_DTYPE_UNDEFINED;
};

void Describe(InputValue& in, nxrt_dtype dtype, std::vector<int64_t> dims, const void* bytes,
              size_t byte_size, const std::vector<std::string>* strings) {
  in.dtype = dtype;
  in.dims = std::move(dims);
  in.value.struct_size = sizeof(nxrt_value);
  in.value.kind = NXRT_VALUE_TENSOR;
  nxrt_tensor& t = in.value.tensor;
  t.struct_size = sizeof(nxrt_tensor);
  t.dtype = dtype;
  t.memory = NXRT_MEMORY_HOST;
  t.rank = in.dims.size();
  t.dims = in.dims.empty() ? nullptr : in.dims.data();
  if (strings) {
    for (const std::string& s : *strings) in.views.push_back({s.data(), s.size()});
    t.data = in.views.empty() ? nullptr : in.views.data();
    t.byte_size = in.views.size() * sizeof(nxrt_string_view);
  } else {
    t.data = byte_size ? const_cast<void*>(bytes) : nullptr;
    t.byte_size = byte_size;
  }
}

double ElementAsDouble(nxrt_dtype dtype, const std::byte* p, size_t i) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT32: {
      float v;
      std::memcpy(&v, p + i * 4, 4);
      return v;
    }
    case NXRT_DTYPE_FLOAT64: {
      double v;
      std::memcpy(&v, p + i * 8, 8);
      return v;
    }
    case NXRT_DTYPE_FLOAT16: {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      const uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
      double v;
      if (exponent == 0) {
        v = std::ldexp(static_cast<double>(mantissa), -24);
      } else if (exponent == 31) {
        v = mantissa ? std::nan("") : INFINITY;
      } else {
        v = std::ldexp(static_cast<double>(mantissa | 0x400), static_cast<int>(exponent) - 25);
      }
      return sign ? -v : v;
    }
    case NXRT_DTYPE_BFLOAT16: {
      uint16_t b;
      std::memcpy(&b, p + i * 2, 2);
      const uint32_t bits = static_cast<uint32_t>(b) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    default:
      return 0;
  }
}

bool IsFloatDtype(nxrt_dtype d) {
  return d == NXRT_DTYPE_FLOAT32 || d == NXRT_DTYPE_FLOAT64 || d == NXRT_DTYPE_FLOAT16 ||
         d == NXRT_DTYPE_BFLOAT16;
}

// This corpus stores bfloat16 tensors as uint16 (same bits); they are read
// as the dtype the model declares.
void AdoptDeclaredDtype(nxrt::graph::TestValue& value, DataType declared) {
  if (value.kind == nxrt::graph::TestValueKind::kTensor && declared == DataType::kBfloat16 &&
      value.tensor.dtype == DataType::kUint16) {
    value.tensor.dtype = DataType::kBfloat16;
  }
}

// Empty when equal, else what differs.
std::string Compare(const TestTensor& expected, const TestServices::Buffer& actual) {
  const auto expected_dtype = static_cast<nxrt_dtype>(expected.dtype);
  if (!actual.allocated) return "output was never produced";
  if (actual.dtype != expected_dtype) {
    return "dtype " + std::to_string(actual.dtype) + ", expected " + std::to_string(expected_dtype);
  }
  if (actual.dims != expected.dims) {
    std::ostringstream s;
    s << "shape [";
    for (int64_t d : actual.dims) s << d << ",";
    s << "], expected [";
    for (int64_t d : expected.dims) s << d << ",";
    s << "]";
    return s.str();
  }
  if (expected_dtype == NXRT_DTYPE_STRING) {
    for (size_t i = 0; i < expected.strings.size(); ++i) {
      if (actual.strings[i] != expected.strings[i]) {
        return "string element " + std::to_string(i) + " is '" + actual.strings[i] +
               "', expected '" + expected.strings[i] + "'";
      }
    }
    return "";
  }
  if (IsFloatDtype(expected_dtype)) {
    const size_t size = nxrt::graph::DataTypeBits(expected.dtype) / 8;
    const size_t count = expected.bytes.size() / size;
    for (size_t i = 0; i < count; ++i) {
      const double e = ElementAsDouble(expected_dtype, expected.bytes.data(), i);
      const double a = ElementAsDouble(expected_dtype, actual.bytes.data(), i);
      if (std::isnan(e) && std::isnan(a)) continue;
      if (std::isinf(e) && a == e) continue;
      const double tolerance = 1e-5 + 1e-3 * std::abs(e);
      if (!(std::abs(a - e) <= tolerance)) {
        return "element " + std::to_string(i) + " is " + std::to_string(a) + ", expected " +
               std::to_string(e);
      }
    }
    return "";
  }
  if (actual.bytes != expected.bytes) {
    const size_t size = std::max<size_t>(1, nxrt::graph::DataTypeBits(expected.dtype) / 8);
    for (size_t i = 0; i < expected.bytes.size(); ++i) {
      if (actual.bytes[i] != expected.bytes[i]) {
        return "element " + std::to_string(i / size) + " differs";
      }
    }
  }
  return "";
}

std::vector<fs::path> DataSets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_")) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

// Runs the kernel once; `preallocate` hands it buffers of the expected shapes.
std::string ComputeAndCompare(nxrt::plugin_host::Kernel& kernel, std::vector<InputValue>& inputs,
                              const nxrt::graph::Node& node, const nxrt::graph::Graph& graph,
                              const std::map<std::string, nxrt::graph::TestValue>& expected,
                              bool preallocate) {
  TestServices services(node.outputs.size());
  std::vector<nxrt_value> outputs(node.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].struct_size = sizeof(nxrt_value);
    outputs[i].kind = node.outputs[i] ? NXRT_VALUE_TENSOR : NXRT_VALUE_NONE;
    outputs[i].tensor.struct_size = sizeof(nxrt_tensor);
    if (!preallocate || !node.outputs[i]) continue;
    auto it = expected.find(graph.value(*node.outputs[i]).name);
    if (it == expected.end() || it->second.kind != nxrt::graph::TestValueKind::kTensor) continue;
    const TestTensor& e = it->second.tensor;
    auto& buffer = services.Preallocate(i, static_cast<nxrt_dtype>(e.dtype), e.dims);
    outputs[i].tensor = TestServices::Describe(buffer);
  }
  std::vector<nxrt_value> values;
  for (InputValue& in : inputs) values.push_back(in.value);
  nxrt::Status status = kernel.Compute(services, values, outputs);
  if (!status.ok()) return "compute failed: " + status.ToString();
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i]) continue;
    const std::string& name = graph.value(*node.outputs[i]).name;
    auto it = expected.find(name);
    if (it == expected.end()) continue;
    if (it->second.kind != nxrt::graph::TestValueKind::kTensor) {
      return "output '" + name + "' is not a tensor in the test data";
    }
    std::string diff = Compare(it->second.tensor, services.buffer(i));
    if (!diff.empty()) {
      return std::string(preallocate ? "preallocated" : "kernel-allocated") + " output '" + name +
             "': " + diff;
    }
  }
  return "";
}

const std::map<std::string, std::vector<fs::path>>& CasesByOp() {
  static const std::map<std::string, std::vector<fs::path>> by_op = [] {
    std::map<std::string, std::vector<fs::path>> index;
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(kNodeCases)) dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
      auto graph = nxrt::graph::LoadModelFromFile(dir / "model.onnx");
      if (!graph.ok() || graph->nodes.size() != 1) continue;
      index[graph->nodes[0].op_type].push_back(dir);
    }
    return index;
  }();
  return by_op;
}

bool NeedsSession(const nxrt::graph::Graph& graph) {
  for (const auto& attribute : graph.nodes[0].attributes) {
    if (attribute.graph || !attribute.graphs.empty()) return true;
  }
  for (nxrt::graph::ValueId id : graph.outputs) {
    const auto kind = graph.value(id).kind;
    if (kind != nxrt::graph::ValueKind::kTensor && kind != nxrt::graph::ValueKind::kUnknown) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::set<std::string> CorpusOpTypes() {
  std::set<std::string> ops;
  for (const auto& [op, cases] : CasesByOp()) ops.insert(op);
  return ops;
}

std::vector<fs::path> NodeCasesFor(const std::set<std::string>& op_types) {
  const auto& by_op = CasesByOp();
  std::vector<fs::path> cases;
  for (const std::string& op : op_types) {
    auto it = by_op.find(op);
    if (it != by_op.end()) cases.insert(cases.end(), it->second.begin(), it->second.end());
  }
  return cases;
}

CaseResult RunNodeCase(const fs::path& case_dir) {
  CaseResult result;
  result.name = case_dir.filename().string();
  auto loaded = nxrt::graph::LoadModelFromFile(case_dir / "model.onnx");
  if (!loaded.ok()) {
    result.detail = "model does not load: " + loaded.status().ToString();
    return result;
  }
  auto graph = std::make_shared<nxrt::graph::Graph>(std::move(loaded.value()));
  const nxrt::graph::NodeId node_id{0};
  const nxrt::graph::Node& node = graph->node(node_id);
  auto view = std::make_shared<const nxrt::plugin_host::NodeView>(*graph, node_id);
  const int64_t opset = graph->OpsetFor(node.domain).value_or(1);
  auto provider = CpuProvider();
  auto decision = provider->Claim(*view, opset);
  if (!decision.ok()) {
    result.detail = "claim failed: " + decision.status().ToString();
    return result;
  }
  if (!decision->claimed) {
    result.outcome = CaseOutcome::kDeclined;
    result.detail = decision->reason;
    return result;
  }
  // A body runs, and a sequence or optional output is built, through a
  // session's executor; a kernel called alone has neither.
  if (NeedsSession(*graph)) {
    result.outcome = CaseOutcome::kDeclined;
    result.detail = "needs a session: the node has a body or a non-tensor output";
    return result;
  }

  for (const fs::path& set : DataSets(case_dir)) {
    std::map<std::string, nxrt::graph::TestValue> feeds;
    for (size_t k = 0; k < graph->inputs.size(); ++k) {
      const auto& value = graph->value(graph->inputs[k]);
      auto decoded = nxrt::graph::ReadTestValueFile(set / ("input_" + std::to_string(k) + ".pb"),
                                                    nxrt::graph::TestProtoKindFor(value.kind));
      if (!decoded.ok()) {
        result.detail = decoded.status().ToString();
        return result;
      }
      AdoptDeclaredDtype(decoded.value(), value.dtype);
      feeds[value.name] = std::move(decoded.value());
    }
    std::map<std::string, nxrt::graph::TestValue> expected;
    for (size_t k = 0; k < graph->outputs.size(); ++k) {
      const auto& value = graph->value(graph->outputs[k]);
      auto decoded = nxrt::graph::ReadTestValueFile(set / ("output_" + std::to_string(k) + ".pb"),
                                                    nxrt::graph::TestProtoKindFor(value.kind));
      if (!decoded.ok()) {
        result.detail = decoded.status().ToString();
        return result;
      }
      AdoptDeclaredDtype(decoded.value(), value.dtype);
      expected[value.name] = std::move(decoded.value());
    }

    std::vector<InputValue> inputs(node.inputs.size());
    std::vector<nxrt_shape> shapes(node.inputs.size());
    std::vector<bool> constant(node.inputs.size(), false);
    std::vector<nxrt_constant_input> constants;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      InputValue& in = inputs[i];
      in.value.struct_size = sizeof(nxrt_value);
      in.value.kind = NXRT_VALUE_NONE;
      shapes[i] = {sizeof(nxrt_shape), NXRT_DTYPE_UNDEFINED, 0, nullptr};
      if (!node.inputs[i]) continue;
      const auto& value = graph->value(*node.inputs[i]);
      if (value.initializer) {
        const auto& data = graph->weights->Get(*value.initializer);
        Describe(in, static_cast<nxrt_dtype>(data.dtype), data.dims, data.bytes.data(),
                 data.bytes.size(), data.dtype == DataType::kString ? &data.strings : nullptr);
        constant[i] = true;
        constants.push_back({sizeof(nxrt_constant_input), i, in.dtype, in.dims.size(),
                             in.dims.data(), data.bytes.data(), data.bytes.size(),
                             /*bytes_persist=*/0});
      } else {
        auto it = feeds.find(value.name);
        if (it == feeds.end() || it->second.kind != nxrt::graph::TestValueKind::kTensor) {
          result.outcome = CaseOutcome::kDeclined;
          result.detail = "input '" + value.name + "' is not a tensor the runner can feed";
          return result;
        }
        const TestTensor& t = it->second.tensor;
        Describe(in, static_cast<nxrt_dtype>(t.dtype), t.dims, t.bytes.data(), t.bytes.size(),
                 t.dtype == DataType::kString ? &t.strings : nullptr);
      }
      shapes[i] = {sizeof(nxrt_shape), in.dtype, in.dims.size(),
                   in.dims.empty() ? nullptr : in.dims.data()};
    }

    auto kernel = provider->CreateKernel({}, view, shapes, opset);
    if (!kernel.ok()) {
      result.detail = "create_kernel failed: " + kernel.status().ToString();
      return result;
    }
    (*kernel)->SetConstantInputs(constant);
    if (!constants.empty()) {
      nxrt::Status prepared = (*kernel)->PrepareConstantInputs(constants);
      if (!prepared.ok()) {
        result.detail = "prepare failed: " + prepared.ToString();
        return result;
      }
    }
    for (bool preallocate : {false, true}) {
      std::string diff = ComputeAndCompare(**kernel, inputs, node, *graph, expected, preallocate);
      if (!diff.empty()) {
        result.detail = set.filename().string() + ": " + diff;
        return result;
      }
    }
  }
  result.outcome = CaseOutcome::kPassed;
  return result;
}

std::vector<CaseResult> RunFamily(const std::string& family, const std::set<std::string>& op_types,
                                  size_t* ran) {
  std::vector<CaseResult> failures;
  size_t passed = 0;
  size_t declined = 0;
  const auto cases = NodeCasesFor(op_types);
  for (const fs::path& dir : cases) {
    CaseResult r = RunNodeCase(dir);
    if (r.outcome == CaseOutcome::kPassed) {
      ++passed;
    } else if (r.outcome == CaseOutcome::kDeclined) {
      ++declined;
      std::cout << "  declined " << r.name << ": " << r.detail << "\n";
    } else {
      std::cout << "  FAILED " << r.name << ": " << r.detail << "\n";
      failures.push_back(r);
    }
  }
  std::cout << family << ": " << cases.size() << " single-node cases, " << passed << " passed, "
            << declined << " declined, " << failures.size() << " failed\n";
  if (ran) *ran = cases.size();
  return failures;
}

const std::map<std::string, std::string>& KnownCorpusDivergences() {
  // Debian's corpus (onnx 1.12) made its bfloat16 references by truncating
  // float; ONNX now specifies round-to-nearest-even, which the CPU EP follows
  // (as onnx 1.23.2's own cases and onnxruntime do). A Bernoulli case's
  // reference is one sample of numpy's generator, which the CPU EP's does
  // not reproduce; the draws themselves are checked in random_test.cpp. The
  // corpus's Adam model omits the epsilon its reference was computed with.
  static const auto* divergences = new std::map<std::string, std::string>{
      {"test_cast_FLOAT_to_BFLOAT16", "corpus truncates to bfloat16; nxrt rounds to nearest even"},
      {"test_castlike_FLOAT_to_BFLOAT16",
       "corpus truncates to bfloat16; nxrt rounds to nearest even"},
      {"test_castlike_FLOAT_to_BFLOAT16_expanded",
       "corpus truncates to bfloat16; nxrt rounds to nearest even"},
      {"test_bernoulli", "random draws"},
      {"test_bernoulli_double", "random draws"},
      {"test_bernoulli_seed", "random draws"},
      {"test_adam_multiple", "corpus model omits the epsilon=0.01 of its reference"},
  };
  return *divergences;
}

void ExpectFamilyPasses(const std::string& family, const std::set<std::string>& op_types) {
  size_t ran = 0;
  std::set<std::string> failed;
  for (const CaseResult& failure : RunFamily(family, op_types, &ran)) {
    failed.insert(failure.name);
    if (!KnownCorpusDivergences().contains(failure.name)) {
      ADD_FAILURE() << failure.name << ": " << failure.detail;
    }
  }
  // A known divergence that now passes means the list is stale.
  for (const fs::path& dir : NodeCasesFor(op_types)) {
    const std::string name = dir.filename().string();
    if (KnownCorpusDivergences().contains(name) && !failed.contains(name)) {
      ADD_FAILURE() << name << " is listed as a known divergence but no longer fails";
    }
  }
  EXPECT_GT(ran, 0u) << "no test cases found for " << family;
}

}  // namespace nxrt_test
