// If, Loop, Scan, the sequence ops, the optional ops and Identity of a
// sequence, on the ONNX backend test cases run through a session: bodies run
// in the executor, and sequence and optional values live in its value
// slots, neither of which a kernel called alone has. Then the edge cases the
// corpus leaves out, on the corpus models fed other inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/graph/dtype.hpp"
#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/test_data.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

namespace fs = std::filesystem;
using nxrt::DataType;
using nxrt::graph::TestValue;
using nxrt::graph::TestValueKind;

const fs::path kData = "/usr/share/libonnx-testdata/data";

const std::set<std::string> kFamily = {"If",
                                       "Loop",
                                       "Scan",
                                       "SequenceConstruct",
                                       "SequenceEmpty",
                                       "SequenceAt",
                                       "SequenceInsert",
                                       "SequenceErase",
                                       "SequenceLength",
                                       "ConcatFromSequence",
                                       "SplitToSequence",
                                       "SequenceMap",
                                       "Optional",
                                       "OptionalHasElement",
                                       "OptionalGetElement"};

std::unique_ptr<nxrt::Session> CpuSession(const fs::path& model) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {}}};
  auto session = nxrt::Session::Create(CpuEnvironment(), model, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

nxrt::Tensor ToTensor(const nxrt::graph::TestTensor& t) {
  auto tensor = nxrt::Tensor::Zeros(t.dtype, t.dims);
  EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
  if (!t.bytes.empty()) std::memcpy(tensor->data(), t.bytes.data(), t.bytes.size());
  return std::move(tensor).value();
}

nxrt::Value ToValue(const TestValue& v) {
  if (v.kind == TestValueKind::kAbsentOptional) return nxrt::Value();
  if (v.kind == TestValueKind::kTensor) return nxrt::Value(ToTensor(v.tensor));
  std::vector<nxrt::Tensor> elements;
  for (const auto& e : v.sequence) elements.push_back(ToTensor(e));
  return nxrt::Value::Sequence(std::move(elements));
}

// Empty when equal: floats within rtol 1e-3 and atol 1e-5, the rest exactly.
std::string CompareTensor(const nxrt::Tensor& got, const nxrt::graph::TestTensor& want) {
  const std::vector<int64_t> dims(got.shape().begin(), got.shape().end());
  if (got.dtype() != want.dtype || dims != want.dims) return "dtype or shape differs";
  const auto* a = static_cast<const std::byte*>(got.data());
  if (want.dtype == DataType::kFloat32) {
    for (size_t i = 0; i < want.bytes.size() / 4; ++i) {
      float x, y;
      std::memcpy(&x, a + 4 * i, 4);
      std::memcpy(&y, want.bytes.data() + 4 * i, 4);
      if (std::fabs(x - y) > 1e-5f + 1e-3f * std::fabs(y)) {
        return "element " + std::to_string(i) + " is " + std::to_string(x) + ", expected " +
               std::to_string(y);
      }
    }
    return "";
  }
  if (got.byte_size() != want.bytes.size() ||
      std::memcmp(a, want.bytes.data(), want.bytes.size()) != 0) {
    return "values differ";
  }
  return "";
}

std::string CompareValue(const nxrt::Value& got, const TestValue& want) {
  if (want.kind == TestValueKind::kAbsentOptional) return got.is_none() ? "" : "expected nothing";
  if (want.kind == TestValueKind::kTensor) {
    return got.is_tensor() ? CompareTensor(got.tensor(), want.tensor) : "expected a tensor";
  }
  if (!got.is_sequence() || got.sequence().size() != want.sequence.size()) {
    return "expected a sequence of " + std::to_string(want.sequence.size());
  }
  for (size_t i = 0; i < want.sequence.size(); ++i) {
    std::string diff = CompareTensor(got.sequence()[i], want.sequence[i]);
    if (!diff.empty()) return "element " + std::to_string(i) + ": " + diff;
  }
  return "";
}

// The graph inputs a data set feeds (initializers are not fed), in order.
std::vector<const nxrt::graph::Value*> FedInputs(const nxrt::graph::Graph& graph) {
  std::vector<const nxrt::graph::Value*> fed;
  for (nxrt::graph::ValueId id : graph.inputs) {
    if (!graph.value(id).initializer) fed.push_back(&graph.value(id));
  }
  return fed;
}

TestValue Read(const fs::path& file, const nxrt::graph::Value& value) {
  auto decoded = nxrt::graph::ReadTestValueFile(file, nxrt::graph::TestProtoKindFor(value.kind));
  EXPECT_TRUE(decoded.ok()) << file << ": " << decoded.status().ToString();
  return decoded.ok() ? std::move(decoded).value() : TestValue{};
}

// Runs every data set of a case; empty when all outputs match.
std::string RunCase(const fs::path& dir) {
  auto graph = nxrt::graph::LoadModelFromFile(dir / "model.onnx");
  if (!graph.ok()) return graph.status().ToString();
  auto session = CpuSession(dir / "model.onnx");
  if (!session) return "no session";
  const auto fed = FedInputs(*graph);
  for (const auto& set : fs::directory_iterator(dir)) {
    if (!set.is_directory()) continue;
    std::vector<nxrt::NamedValue> inputs;
    for (size_t k = 0; k < fed.size(); ++k) {
      const TestValue v = Read(set.path() / ("input_" + std::to_string(k) + ".pb"), *fed[k]);
      inputs.push_back({fed[k]->name, ToValue(v)});
    }
    auto outputs = session->RunValues(inputs);
    if (!outputs.ok()) return outputs.status().ToString();
    for (size_t k = 0; k < graph->outputs.size(); ++k) {
      const auto& value = graph->value(graph->outputs[k]);
      const TestValue want = Read(set.path() / ("output_" + std::to_string(k) + ".pb"), value);
      std::string diff = CompareValue((*outputs)[k], want);
      if (!diff.empty()) return "output '" + value.name + "': " + diff;
    }
  }
  return "";
}

// Corpus cases (node and simple models) with a top-level node of the family.
std::vector<fs::path> FamilyCases() {
  std::vector<fs::path> cases;
  for (const char* corpus : {"node", "simple"}) {
    for (const auto& entry : fs::directory_iterator(kData / corpus)) {
      auto graph = nxrt::graph::LoadModelFromFile(entry.path() / "model.onnx");
      if (!graph.ok()) continue;
      for (const auto& node : graph->nodes) {
        if (node.domain.empty() && kFamily.contains(node.op_type)) {
          cases.push_back(entry.path());
          break;
        }
      }
    }
  }
  return cases;
}

TEST(CpuEpControlFlow, CorpusCasesPassThroughASession) {
  const auto cases = FamilyCases();
  std::cout << cases.size() << " corpus cases of the family\n";
  std::set<std::string> seen;
  for (const fs::path& dir : cases) {
    seen.insert(dir.filename().string());
    const std::string diff = RunCase(dir);
    EXPECT_TRUE(diff.empty()) << dir.filename().string() << ": " << diff;
  }
  // The cases that cover each op's main forms are all there.
  for (const char* name :
       {"test_if", "test_if_seq", "test_if_opt", "test_loop11", "test_loop13_seq",
        "test_loop16_seq_none", "test_scan_sum", "test_scan9_sum",
        "test_sequence_map_add_2_sequences", "test_optional_get_element_sequence",
        "test_optional_has_element_empty", "test_sequence_model1", "test_sequence_model8",
        "test_range_float_type_positive_delta_expanded"}) {
    EXPECT_TRUE(seen.contains(name)) << name << " was not found";
  }
}

TEST(CpuEpControlFlow, IdentityPassesSequencesAndEmptyOptionals) {
  for (const char* name : {"test_identity_sequence", "test_identity_opt"}) {
    const std::string diff = RunCase(kData / "node" / name);
    EXPECT_TRUE(diff.empty()) << name << ": " << diff;
  }
}

// Runs `model` once with `inputs`; the outputs.
std::vector<nxrt::Value> RunOnce(const fs::path& model, std::vector<nxrt::NamedValue> inputs) {
  auto session = CpuSession(model);
  if (!session) return {};
  auto outputs = session->RunValues(inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  return outputs.ok() ? std::move(outputs).value() : std::vector<nxrt::Value>{};
}

template <typename T>
nxrt::Value Scalar(T v) {
  const T values[1] = {v};
  auto t = nxrt::Tensor::FromValues<T>({}, std::span<const T>(values, 1));
  return nxrt::Value(std::move(t).value());
}

template <typename T>
std::vector<T> ValuesOf(const nxrt::Tensor& t) {
  std::vector<T> values(t.byte_size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), t.data(), t.byte_size());
  return values;
}

// test_loop11 adds the iteration number to a carried float; zero trips
// must give back the initial value and a scan output with no rows.
TEST(CpuEpControlFlow, LoopOfZeroTripsKeepsTheInitialState) {
  const fs::path model = kData / "node/test_loop11/model.onnx";
  auto graph = nxrt::graph::LoadModelFromFile(model);
  ASSERT_TRUE(graph.ok());
  const auto fed = FedInputs(*graph);
  ASSERT_EQ(fed.size(), 3u);
  auto y = nxrt::Tensor::FromValues<float>({1}, std::vector<float>{7.5f});
  auto outputs = RunOnce(model, {{fed[0]->name, Scalar<int64_t>(0)},
                                 {fed[1]->name, Scalar<bool>(true)},
                                 {fed[2]->name, nxrt::Value(std::move(y).value())}});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(ValuesOf<float>(outputs[0].tensor()), (std::vector<float>{7.5f}));
  ASSERT_TRUE(outputs[1].is_tensor());
  ASSERT_FALSE(outputs[1].tensor().shape().empty());
  EXPECT_EQ(outputs[1].tensor().shape()[0], 0);
}

// A false condition ends the loop before its first trip, whatever M says.
TEST(CpuEpControlFlow, LoopWithAFalseConditionRunsNoTrip) {
  const fs::path model = kData / "node/test_loop11/model.onnx";
  auto graph = nxrt::graph::LoadModelFromFile(model);
  ASSERT_TRUE(graph.ok());
  const auto fed = FedInputs(*graph);
  auto y = nxrt::Tensor::FromValues<float>({1}, std::vector<float>{2.0f});
  auto outputs = RunOnce(model, {{fed[0]->name, Scalar<int64_t>(5)},
                                 {fed[1]->name, Scalar<bool>(false)},
                                 {fed[2]->name, nxrt::Value(std::move(y).value())}});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(ValuesOf<float>(outputs[0].tensor()), (std::vector<float>{2.0f}));
  EXPECT_EQ(outputs[1].tensor().shape()[0], 0);
}

// test_if takes the then branch in its data; the else branch must be taken
// for false, and the two branches give different constants.
TEST(CpuEpControlFlow, IfTakesEachBranch) {
  const fs::path model = kData / "node/test_if/model.onnx";
  auto graph = nxrt::graph::LoadModelFromFile(model);
  ASSERT_TRUE(graph.ok());
  const auto fed = FedInputs(*graph);
  ASSERT_EQ(fed.size(), 1u);
  auto on_true = RunOnce(model, {{fed[0]->name, Scalar<bool>(true)}});
  auto on_false = RunOnce(model, {{fed[0]->name, Scalar<bool>(false)}});
  ASSERT_EQ(on_true.size(), 1u);
  ASSERT_EQ(on_false.size(), 1u);
  const auto a = ValuesOf<float>(on_true[0].tensor());
  const auto b = ValuesOf<float>(on_false[0].tensor());
  EXPECT_FALSE(a.empty());
  EXPECT_NE(a, b);
  const TestValue want =
      Read(model.parent_path() / "test_data_set_0/output_0.pb", graph->value(graph->outputs[0]));
  const bool data_cond_true =
      ValuesOf<uint8_t>(
          ToTensor(Read(model.parent_path() / "test_data_set_0/input_0.pb", *fed[0]).tensor))
          .at(0) != 0;
  EXPECT_EQ(CompareTensor(data_cond_true ? on_true[0].tensor() : on_false[0].tensor(), want.tensor),
            "");
}

// A carried value that doubles each trip (Concat with itself): the body's
// shapes must follow it from trip to trip, and the scan output of its
// lengths shows every trip ran at its own shape.
TEST(CpuEpControlFlow, LoopCarriedValueMayGrowEachTrip) {
  IrModelBuilder body(16, "body");
  body.Input("i", std::vector<int64_t>{}, DataType::kInt64);
  const auto cond_in = body.Input("cond_in", std::vector<int64_t>{}, DataType::kBool);
  const auto x_in = body.Input("x_in", std::nullopt);
  body.Output(body.Tensor("Identity", {cond_in}, "cond_out", DataType::kBool));
  body.Output(
      body.Tensor("Concat", {x_in, x_in}, "x_out", DataType::kFloat32, {IntAttribute("axis", 0)}));
  body.Output(body.Tensor("Shape", {x_in}, "length", DataType::kInt64));

  IrModelBuilder m(16, "growing_loop");
  const auto trips = m.Input("trips", std::vector<int64_t>{}, DataType::kInt64);
  const auto x = m.Input("x", std::vector<int64_t>{1});
  const auto outs = m.Node("Loop", {trips, std::nullopt, x}, {"x_final", "lengths"},
                           nxrt::graph::ValueKind::kTensor, DataType::kUndefined,
                           {GraphAttr("body", body.Take())});
  m.Output(outs[0]);
  m.Output(outs[1]);
  auto session = CpuSessionOf(m.Take());
  ASSERT_NE(session, nullptr);
  std::vector<nxrt::NamedValue> inputs{
      {"trips", Scalar<int64_t>(3)},
      {"x", nxrt::Value(nxrt::Tensor::FromValues<float>({1}, std::vector<float>{2.5f}).value())}};
  auto outputs = session->RunValues(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(ValuesOf<float>((*outputs)[0].tensor()), std::vector<float>(8, 2.5f));
  const std::vector<int64_t> dims((*outputs)[1].tensor().shape().begin(),
                                  (*outputs)[1].tensor().shape().end());
  EXPECT_EQ(dims, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(ValuesOf<int64_t>((*outputs)[1].tensor()), (std::vector<int64_t>{1, 2, 4}));
}

// Scan-8 runs each batch row for its own sequence_lens entry: a shorter row
// keeps the state of its last real step and pads its scan output with zeros.
TEST(CpuEpControlFlow, Scan8BatchRowsFollowTheirSequenceLengths) {
  IrModelBuilder body(8, "body");
  const auto s_in = body.Input("s_in", std::vector<int64_t>{1});
  const auto x_in = body.Input("x_in", std::vector<int64_t>{1});
  const auto s_out = body.Tensor("Add", {s_in, x_in}, "s_out");
  body.Output(s_out);
  body.Output(body.Tensor("Identity", {s_out}, "y"));

  IrModelBuilder m(8, "scan8");
  const auto lens = m.Int64s("lens", {2}, {2, 3});
  const auto init = m.Input("init", std::vector<int64_t>{2, 1});
  const auto x = m.Input("x", std::vector<int64_t>{2, 3, 1});
  const auto outs = m.Node("Scan", {lens, init, x}, {"final", "ys"},
                           nxrt::graph::ValueKind::kTensor, DataType::kFloat32,
                           {IntAttribute("num_scan_inputs", 1), GraphAttr("body", body.Take())});
  m.Output(outs[0]);
  m.Output(outs[1]);
  auto session = CpuSessionOf(m.Take());
  ASSERT_NE(session, nullptr);
  std::vector<nxrt::NamedTensor> inputs{
      {"init", nxrt::Tensor::FromValues<float>({2, 1}, std::vector<float>{0, 10}).value()},
      {"x",
       nxrt::Tensor::FromValues<float>({2, 3, 1}, std::vector<float>{1, 2, 4, 1, 2, 4}).value()}};
  auto outputs = session->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(ValuesOf<float>((*outputs)[0]), (std::vector<float>{3, 17}));
  EXPECT_EQ(ValuesOf<float>((*outputs)[1]), (std::vector<float>{1, 3, 0, 11, 13, 17}));
}

// A body declared over float but handed bool by its Scan is refused when
// it would run, not read as floats; the session stays usable.
TEST(CpuEpControlFlow, ABodyHandedAnotherTypeThanItDeclaresIsRefused) {
  IrModelBuilder body(9, "body");
  const auto s_in = body.Input("s_in", std::vector<int64_t>{2});
  const auto x_in = body.Input("x_in", std::vector<int64_t>{2});
  const auto s_out = body.Tensor("Add", {s_in, x_in}, "s_out");
  body.Output(s_out);
  body.Output(body.Tensor("Identity", {s_out}, "y"));

  IrModelBuilder m(9, "scan_of_bool");
  const auto init = m.Input("init", std::vector<int64_t>{2});
  const auto x = m.Input("x", std::vector<int64_t>{3, 2}, DataType::kBool);
  const auto outs = m.Node("Scan", {init, x}, {"final", "ys"}, nxrt::graph::ValueKind::kTensor,
                           DataType::kFloat32,
                           {IntAttribute("num_scan_inputs", 1), GraphAttr("body", body.Take())});
  m.Output(outs[0]);
  m.Output(outs[1]);
  auto session = CpuSessionOf(m.Take());
  ASSERT_NE(session, nullptr);
  static constexpr bool kTrue[6] = {true, true, true, true, true, true};
  std::vector<nxrt::NamedTensor> inputs{
      {"init", nxrt::Tensor::FromValues<float>({2}, std::vector<float>{0, 1}).value()},
      {"x", nxrt::Tensor::FromValues<bool>({3, 2}, std::span<const bool>(kTrue, 6)).value()}};
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto outputs = session->Run(inputs);
    ASSERT_FALSE(outputs.ok()) << "the body read bool as float";
    EXPECT_NE(outputs.status().message().find("input 'x_in' is declared float but given bool"),
              std::string::npos)
        << outputs.status().message();
  }
}

}  // namespace
}  // namespace nxrt_test
