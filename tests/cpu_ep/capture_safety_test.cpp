// The CPU EP's shape, indexing, movement, generator and reduction kernels
// inside device graphs, and those that run on oneDNN. Small models of Gather,
// Shape, ReduceSum, Sub, Cast, Reshape, Unsqueeze, Squeeze, Softmax, Identity,
// Transpose, Slice, Concat, Split, Where, Sum, Max, Range, ConstantOfShape, EyeLike,
// ArgMax, CumSum, Trilu, Conv, MaxPool, GlobalAveragePool, MatMul and Tanh
// run on the primary slot, are captured once with no segment falling back as
// not capture-safe, and their replays follow new input values written in
// place, checked against results computed here. A Reshape whose shape input
// is not a constant replays while the shape values stay, and once they change
// its replay fails and leaves the output alone, on one thread and on two. On
// two threads, replays of split products and of oneDNN ones give the eager
// run's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attribute_builders.hpp"
#include "cpu_environment.hpp"
#include "no_compute_services.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"
#include "plugin_host/compute_context.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"

namespace nxrt_test {
namespace {

using nxrt::EagerFallbackReason;
using nxrt::graph::AttributeType;
using nxrt::graph::DataType;
using nxrt::graph::Dim;
using nxrt::graph::ValueId;

constexpr int64_t kOnnxInt32 = 6;  // TensorProto.INT32, Cast's "to"

// Builds a graph of static-shaped inputs, int64 constants and nodes whose
// output shapes shape inference finds.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset) {
    graph_.model_path = "capture_safety.onnx";
    graph_.name = "capture_safety";
    graph_.opset_imports[""] = opset;
    graph_.weights = std::make_shared<nxrt::graph::WeightStore>();
  }

  ValueId Input(const std::string& name, DataType dtype, const std::vector<int64_t>& dims) {
    nxrt::graph::Shape shape;
    for (int64_t d : dims) shape.push_back(Dim::Static(d));
    const ValueId id = AddValue(name, dtype, shape);
    graph_.value(id).is_graph_input = true;
    graph_.inputs.push_back(id);
    return id;
  }

  ValueId Int64Constant(const std::string& name, const std::vector<int64_t>& dims,
                        const std::vector<int64_t>& values) {
    nxrt::graph::Shape shape;
    for (int64_t d : dims) shape.push_back(Dim::Static(d));
    const ValueId id = AddValue(name, DataType::kInt64, shape);
    std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    graph_.value(id).initializer =
        graph_.weights->AddOwned(DataType::kInt64, dims, std::move(bytes));
    return id;
  }

  ValueId FloatConstant(const std::string& name, const std::vector<int64_t>& dims,
                        const std::vector<float>& values) {
    nxrt::graph::Shape shape;
    for (int64_t d : dims) shape.push_back(Dim::Static(d));
    const ValueId id = AddValue(name, DataType::kFloat32, shape);
    std::vector<std::byte> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    graph_.value(id).initializer =
        graph_.weights->AddOwned(DataType::kFloat32, dims, std::move(bytes));
    return id;
  }

  ValueId Node(const std::string& op, const std::vector<ValueId>& inputs, const std::string& output,
               DataType dtype, std::vector<nxrt::graph::Attribute> attributes = {}) {
    return NodeOutputs(op, inputs, {output}, dtype, std::move(attributes)).front();
  }

  // A node of several outputs, all of `dtype`; named after the first.
  std::vector<ValueId> NodeOutputs(const std::string& op, const std::vector<ValueId>& inputs,
                                   const std::vector<std::string>& outputs, DataType dtype,
                                   std::vector<nxrt::graph::Attribute> attributes = {}) {
    nxrt::graph::Node n;
    n.op_type = op;
    n.name = outputs.front();
    n.attributes = std::move(attributes);
    for (ValueId input : inputs) n.inputs.push_back(input);
    std::vector<ValueId> ids;
    for (const std::string& output : outputs) {
      ids.push_back(AddValue(output, dtype, std::nullopt));
      n.outputs.push_back(ids.back());
    }
    graph_.AddNode(std::move(n));
    return ids;
  }

  void Output(ValueId id) { graph_.outputs.push_back(id); }
  nxrt::graph::Graph Take() { return std::move(graph_); }

 private:
  ValueId AddValue(const std::string& name, DataType dtype,
                   std::optional<nxrt::graph::Shape> shape) {
    nxrt::graph::Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = std::move(shape);
    return graph_.AddValue(std::move(v));
  }

  nxrt::graph::Graph graph_;
};

std::unique_ptr<nxrt::Session> CpuSession(nxrt::graph::Graph graph, int threads = 1) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", std::to_string(threads)}}}};
  auto session = nxrt::Session::Create(CpuEnvironment(), std::move(graph), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

template <typename T>
nxrt::NamedTensor Bind(const std::string& name, DataType dtype, std::vector<int64_t> dims,
                       std::vector<T>& values) {
  return {name,
          nxrt::Tensor::Borrow(dtype, std::move(dims), values.data(), values.size() * sizeof(T))};
}

template <typename T>
std::vector<T> ValuesOf(const nxrt::Tensor& t) {
  auto values = t.values<T>();
  return {values.begin(), values.end()};
}

// Runs on the primary slot; false (with a test failure) when the run fails.
bool RunPrimary(nxrt::Session& session, const std::vector<nxrt::NamedTensor>& inputs,
                std::vector<nxrt::Tensor>& outputs) {
  const nxrt::Status status = session.Run(nxrt::DeviceGraphSlot::kPrimary, inputs, {}, outputs);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return status.ok();
}

// One capture, every later run a replay, and no segment refused as not
// capture-safe.
void ExpectCapturedOnceAndReplayed(const nxrt::Session& session, uint64_t runs) {
  const auto counters = session.device_graph_counters();
  EXPECT_EQ(counters.fallbacks(EagerFallbackReason::kNotCaptureSafe), 0u);
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, runs - 1);
}

TEST(CpuCaptureSafety, GatherReplaysFollowNewTableAndIndices) {
  // rows = Gather(table, ids) on axis 0 with int64 ids; cols = Gather(table,
  // picks) on axis 1 with int32 ids, negative ones counted from the end.
  ModelBuilder b(13);
  const ValueId table = b.Input("table", DataType::kFloat32, {3, 4});
  const ValueId ids = b.Input("ids", DataType::kInt64, {2});
  const ValueId picks = b.Input("picks", DataType::kInt32, {3});
  b.Output(b.Node("Gather", {table, ids}, "rows", DataType::kFloat32, {IntAttribute("axis", 0)}));
  b.Output(b.Node("Gather", {table, picks}, "cols", DataType::kFloat32, {IntAttribute("axis", 1)}));
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<float> t(12);
  std::vector<int64_t> id{2, 0};
  std::vector<int32_t> pick{3, -4, 1};
  const std::vector<nxrt::NamedTensor> inputs{Bind("table", DataType::kFloat32, {3, 4}, t),
                                              Bind("ids", DataType::kInt64, {2}, id),
                                              Bind("picks", DataType::kInt32, {3}, pick)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    for (size_t i = 0; i < t.size(); ++i) t[i] = 10.0f * run + static_cast<float>(i) * 0.5f;
    id[0] = run % 3;
    id[1] = (run + 1) % 3;
    pick[0] = run % 4;
    pick[1] = -1 - run % 4;
    pick[2] = (run + 2) % 4;
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 2u);
    std::vector<float> rows;
    for (int64_t r : id) {
      for (int c = 0; c < 4; ++c) rows.push_back(t[r * 4 + c]);
    }
    std::vector<float> cols;
    for (int r = 0; r < 3; ++r) {
      for (int32_t p : pick) cols.push_back(t[r * 4 + (p < 0 ? p + 4 : p)]);
    }
    EXPECT_EQ(outputs[0].shape(), (std::vector<int64_t>{2, 4}));
    EXPECT_EQ(ValuesOf<float>(outputs[0]), rows) << "run " << run;
    EXPECT_EQ(outputs[1].shape(), (std::vector<int64_t>{3, 3}));
    EXPECT_EQ(ValuesOf<float>(outputs[1]), cols) << "run " << run;
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

TEST(CpuCaptureSafety, MaskLengthsReplayFollowNewMaskValues) {
  // A decoder's mask handling: seqlens = Cast(ReduceSum(mask, [1]) - 1) and
  // total = Cast(Gather(Shape(mask), 1)).
  ModelBuilder b(13);
  const ValueId mask = b.Input("mask", DataType::kInt64, {2, 6});
  const ValueId axis = b.Int64Constant("axis_1", {1}, {1});
  const ValueId one = b.Int64Constant("one", {}, {1});
  const ValueId sum =
      b.Node("ReduceSum", {mask, axis}, "sum", DataType::kInt64, {IntAttribute("keepdims", 0)});
  const ValueId less = b.Node("Sub", {sum, one}, "less", DataType::kInt64);
  b.Output(b.Node("Cast", {less}, "seqlens", DataType::kInt32, {IntAttribute("to", kOnnxInt32)}));
  const ValueId shape = b.Node("Shape", {mask}, "shape", DataType::kInt64);
  const ValueId length =
      b.Node("Gather", {shape, one}, "length", DataType::kInt64, {IntAttribute("axis", 0)});
  b.Output(b.Node("Cast", {length}, "total", DataType::kInt32, {IntAttribute("to", kOnnxInt32)}));
  b.Output(shape);
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<int64_t> m(12);
  const std::vector<nxrt::NamedTensor> inputs{Bind("mask", DataType::kInt64, {2, 6}, m)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    // Row 0 has run + 1 leading ones, row 1 six minus run.
    for (int c = 0; c < 6; ++c) {
      m[c] = c <= run ? 1 : 0;
      m[6 + c] = c < 6 - run ? 1 : 0;
    }
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 3u);
    EXPECT_EQ(ValuesOf<int32_t>(outputs[0]), (std::vector<int32_t>{run, 5 - run})) << "run " << run;
    EXPECT_TRUE(outputs[1].shape().empty());
    EXPECT_EQ(ValuesOf<int32_t>(outputs[1]), std::vector<int32_t>{6});
    EXPECT_EQ(ValuesOf<int64_t>(outputs[2]), (std::vector<int64_t>{2, 6}));
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

TEST(CpuCaptureSafety, RelabelReduceAndSoftmaxReplayFollowNewValues) {
  // sums = Squeeze(ReduceSum(Unsqueeze(Reshape(x, [3, -1]), [0]), [2]), [0])
  // and probs = Softmax(Identity(sums)), with every shape and axes input a
  // constant at opset 18.
  ModelBuilder b(18);
  const ValueId x = b.Input("x", DataType::kFloat32, {2, 3});
  const ValueId shape = b.Int64Constant("shape", {2}, {3, -1});
  const ValueId zero = b.Int64Constant("zero", {1}, {0});
  const ValueId two = b.Int64Constant("two", {1}, {2});
  const ValueId pairs = b.Node("Reshape", {x, shape}, "pairs", DataType::kFloat32);
  const ValueId batched = b.Node("Unsqueeze", {pairs, zero}, "batched", DataType::kFloat32);
  const ValueId summed = b.Node("ReduceSum", {batched, two}, "summed", DataType::kFloat32,
                                {IntAttribute("keepdims", 0)});
  const ValueId sums = b.Node("Squeeze", {summed, zero}, "sums", DataType::kFloat32);
  const ValueId same = b.Node("Identity", {sums}, "same", DataType::kFloat32);
  b.Output(sums);
  b.Output(b.Node("Softmax", {same}, "probs", DataType::kFloat32, {IntAttribute("axis", -1)}));
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<float> v(6);
  const std::vector<nxrt::NamedTensor> inputs{Bind("x", DataType::kFloat32, {2, 3}, v)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25f * static_cast<float>(i * run) - run;
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 2u);
    // The flat x read as three pairs.
    double expected_sums[3];
    double total = 0;
    for (int p = 0; p < 3; ++p) {
      expected_sums[p] = static_cast<double>(v[2 * p]) + v[2 * p + 1];
    }
    double max = expected_sums[0];
    for (double s : expected_sums) max = std::max(max, s);
    for (double s : expected_sums) total += std::exp(s - max);
    ASSERT_EQ(outputs[0].shape(), (std::vector<int64_t>{3}));
    ASSERT_EQ(outputs[1].shape(), (std::vector<int64_t>{3}));
    const std::vector<float> got_sums = ValuesOf<float>(outputs[0]);
    const std::vector<float> got_probs = ValuesOf<float>(outputs[1]);
    for (int p = 0; p < 3; ++p) {
      EXPECT_NEAR(got_sums[p], expected_sums[p], 1e-5) << "run " << run << " pair " << p;
      EXPECT_NEAR(got_probs[p], std::exp(expected_sums[p] - max) / total, 1e-6)
          << "run " << run << " pair " << p;
    }
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

TEST(CpuCaptureSafety, TransposeSliceAndConcatReplayFollowNewValues) {
  // joined = Concat(Transpose(x), Slice(Transpose(x), [1], [3], [0])) on
  // axis 0, with constant starts, ends and axes.
  ModelBuilder b(13);
  const ValueId x = b.Input("x", DataType::kFloat32, {2, 3});
  const ValueId starts = b.Int64Constant("starts", {1}, {1});
  const ValueId ends = b.Int64Constant("ends", {1}, {3});
  const ValueId axes = b.Int64Constant("axes", {1}, {0});
  const ValueId turned = b.Node("Transpose", {x}, "turned", DataType::kFloat32);
  const ValueId tail = b.Node("Slice", {turned, starts, ends, axes}, "tail", DataType::kFloat32);
  b.Output(
      b.Node("Concat", {turned, tail}, "joined", DataType::kFloat32, {IntAttribute("axis", 0)}));
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<float> v(6);
  const std::vector<nxrt::NamedTensor> inputs{Bind("x", DataType::kFloat32, {2, 3}, v)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(7 * run + 3 * i) - 4.5f;
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 1u);
    // Rows 0..2 of x transposed, then its rows 1 and 2 again.
    std::vector<float> expected;
    for (int row : {0, 1, 2, 1, 2}) {
      for (int col = 0; col < 2; ++col) expected.push_back(v[col * 3 + row]);
    }
    EXPECT_EQ(outputs[0].shape(), (std::vector<int64_t>{5, 2}));
    EXPECT_EQ(ValuesOf<float>(outputs[0]), expected) << "run " << run;
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

// Split works its parts out when the kernel is made, from num_outputs (even
// parts) or the split attribute, so its compute allocates nothing.
TEST(CpuCaptureSafety, SplitReplaysFollowNewValues) {
  struct Form {
    int64_t opset;
    std::vector<nxrt::graph::Attribute> attributes;
    std::vector<int64_t> widths;  // of the parts along axis 1
  };
  const Form forms[] = {
      {18, {IntAttribute("axis", 1), IntAttribute("num_outputs", 3)}, {2, 2, 2}},
      {11, {IntAttribute("axis", 1), IntsAttribute("split", {1, 2, 3})}, {1, 2, 3}}};
  for (const Form& form : forms) {
    ModelBuilder b(form.opset);
    const ValueId x = b.Input("x", DataType::kFloat32, {2, 6});
    for (ValueId part :
         b.NodeOutputs("Split", {x}, {"p0", "p1", "p2"}, DataType::kFloat32, form.attributes)) {
      b.Output(part);
    }
    auto session = CpuSession(b.Take());
    ASSERT_NE(session, nullptr);

    std::vector<float> v(12);
    const std::vector<nxrt::NamedTensor> inputs{Bind("x", DataType::kFloat32, {2, 6}, v)};
    std::vector<nxrt::Tensor> outputs;
    const int runs = 5;
    for (int run = 0; run < runs; ++run) {
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(5 * run + i) - 2.5f;
      ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
      ASSERT_EQ(outputs.size(), 3u);
      int64_t column = 0;
      for (size_t k = 0; k < 3; ++k) {
        const int64_t width = form.widths[k];
        std::vector<float> expected;
        for (int64_t row = 0; row < 2; ++row) {
          for (int64_t c = column; c < column + width; ++c) expected.push_back(v[row * 6 + c]);
        }
        EXPECT_EQ(outputs[k].shape(), (std::vector<int64_t>{2, width}));
        EXPECT_EQ(ValuesOf<float>(outputs[k]), expected)
            << "opset " << form.opset << ", part " << k << ", run " << run;
        column += width;
      }
    }
    ExpectCapturedOnceAndReplayed(*session, runs);
  }
}

TEST(CpuCaptureSafety, WhereSumAndMaxReplayFollowNewValues) {
  // picked = Where(keep, a, b) with b broadcast along rows, total = Sum(a, b)
  // and top = Max(a, b, picked).
  ModelBuilder b(13);
  const ValueId keep = b.Input("keep", DataType::kBool, {2, 3});
  const ValueId a = b.Input("a", DataType::kFloat32, {2, 3});
  const ValueId row = b.Input("row", DataType::kFloat32, {3});
  const ValueId picked = b.Node("Where", {keep, a, row}, "picked", DataType::kFloat32);
  b.Output(picked);
  b.Output(b.Node("Sum", {a, row}, "total", DataType::kFloat32));
  b.Output(b.Node("Max", {a, row, picked}, "top", DataType::kFloat32));
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<uint8_t> k(6);
  std::vector<float> av(6), rv(3);
  const std::vector<nxrt::NamedTensor> inputs{Bind("keep", DataType::kBool, {2, 3}, k),
                                              Bind("a", DataType::kFloat32, {2, 3}, av),
                                              Bind("row", DataType::kFloat32, {3}, rv)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    for (int i = 0; i < 6; ++i) {
      k[i] = (i + run) % 3 == 0 ? 1 : 0;
      av[i] = static_cast<float>(i * (run - 2)) + 0.5f;
    }
    for (int j = 0; j < 3; ++j) rv[j] = static_cast<float>(run - 3 * j);
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 3u);
    std::vector<float> picks, totals, tops;
    for (int i = 0; i < 6; ++i) {
      const float other = rv[i % 3];
      picks.push_back(k[i] ? av[i] : other);
      totals.push_back(av[i] + other);
      tops.push_back(std::max({av[i], other, picks.back()}));
    }
    EXPECT_EQ(ValuesOf<float>(outputs[0]), picks) << "run " << run;
    EXPECT_EQ(ValuesOf<float>(outputs[1]), totals) << "run " << run;
    EXPECT_EQ(ValuesOf<float>(outputs[2]), tops) << "run " << run;
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

TEST(CpuCaptureSafety, GeneratorsReplayAlongsideNewValues) {
  // steps = Range(2, 14, 3) + x and lifted = ConstantOfShape([2, 2]) + f +
  // EyeLike(f), with constant Range and shape inputs.
  ModelBuilder b(13);
  const ValueId x = b.Input("x", DataType::kInt64, {4});
  const ValueId f = b.Input("f", DataType::kFloat32, {2, 2});
  const ValueId start = b.Int64Constant("start", {}, {2});
  const ValueId limit = b.Int64Constant("limit", {}, {14});
  const ValueId delta = b.Int64Constant("delta", {}, {3});
  const ValueId dims = b.Int64Constant("dims", {2}, {2, 2});
  const ValueId range = b.Node("Range", {start, limit, delta}, "range", DataType::kInt64);
  b.Output(b.Node("Add", {range, x}, "steps", DataType::kInt64));
  const ValueId zeros = b.Node("ConstantOfShape", {dims}, "zeros", DataType::kFloat32);
  const ValueId eye = b.Node("EyeLike", {f}, "eye", DataType::kFloat32);
  const ValueId moved = b.Node("Add", {zeros, f}, "moved", DataType::kFloat32);
  b.Output(b.Node("Add", {moved, eye}, "lifted", DataType::kFloat32));
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<int64_t> xv(4);
  std::vector<float> fv(4);
  const std::vector<nxrt::NamedTensor> inputs{Bind("x", DataType::kInt64, {4}, xv),
                                              Bind("f", DataType::kFloat32, {2, 2}, fv)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    for (int i = 0; i < 4; ++i) {
      xv[i] = 100 * run - i;
      fv[i] = 0.5f * static_cast<float>(run * i) - 1.0f;
    }
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 2u);
    std::vector<int64_t> steps;
    for (int i = 0; i < 4; ++i) steps.push_back(2 + 3 * i + xv[i]);
    std::vector<float> lifted;
    for (int i = 0; i < 4; ++i) lifted.push_back(fv[i] + (i == 0 || i == 3 ? 1.0f : 0.0f));
    EXPECT_EQ(ValuesOf<int64_t>(outputs[0]), steps) << "run " << run;
    EXPECT_EQ(ValuesOf<float>(outputs[1]), lifted) << "run " << run;
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

TEST(CpuCaptureSafety, ArgMaxCumSumAndTriluReplayFollowNewValues) {
  // best = ArgMax(x, axis 1), running = CumSum(x, 1) and upper = Trilu(x).
  ModelBuilder b(14);
  const ValueId x = b.Input("x", DataType::kFloat32, {2, 3});
  const ValueId axis = b.Int64Constant("axis", {}, {1});
  b.Output(b.Node("ArgMax", {x}, "best", DataType::kInt64,
                  {IntAttribute("axis", 1), IntAttribute("keepdims", 0)}));
  b.Output(b.Node("CumSum", {x, axis}, "running", DataType::kFloat32));
  b.Output(b.Node("Trilu", {x}, "upper", DataType::kFloat32));
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<float> v(6);
  const std::vector<nxrt::NamedTensor> inputs{Bind("x", DataType::kFloat32, {2, 3}, v)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 6;
  for (int run = 0; run < runs; ++run) {
    for (int i = 0; i < 6; ++i) v[i] = static_cast<float>((i * (run + 2)) % 7) - 0.5f * run;
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 3u);
    std::vector<int64_t> best;
    std::vector<float> running, upper;
    for (int r = 0; r < 2; ++r) {
      int64_t arg = 0;
      float sum = 0;
      for (int c = 0; c < 3; ++c) {
        const float value = v[r * 3 + c];
        if (value > v[r * 3 + arg]) arg = c;
        sum += value;
        running.push_back(sum);
        upper.push_back(c >= r ? value : 0.0f);
      }
      best.push_back(arg);
    }
    EXPECT_EQ(ValuesOf<int64_t>(outputs[0]), best) << "run " << run;
    EXPECT_EQ(ValuesOf<float>(outputs[1]), running) << "run " << run;
    EXPECT_EQ(ValuesOf<float>(outputs[2]), upper) << "run " << run;
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

template <typename T>
nxrt_value TensorValue(nxrt_dtype dtype, std::vector<T>& data, const std::vector<int64_t>& dims) {
  nxrt_value v{};
  v.struct_size = sizeof(v);
  v.kind = NXRT_VALUE_TENSOR;
  v.tensor = nxrt_tensor{sizeof(nxrt_tensor), dtype,       NXRT_MEMORY_HOST,       dims.size(),
                         dims.data(),         data.data(), data.size() * sizeof(T)};
  return v;
}

TEST(CpuCaptureSafety, ConvPoolMatMulAndTanhReplayFollowNewValues) {
  // y = Tanh(MatMul(Reshape(MaxPool(Conv(x, w, bias)), [4, 16]), m)): a
  // padded 3x3 Conv of x [1, 2, 8, 8] into 4 maps, a 2x2 MaxPool, and a
  // four-row product with m [16, 5]; every weight a constant. Beside it,
  // means = GlobalAveragePool(Conv(...)).
  ModelBuilder b(17);
  std::vector<float> w(4 * 2 * 9), bias{0.1f, -0.2f, 0.3f, 0.0f}, m(16 * 5);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(int(i % 11) - 5);
  for (size_t i = 0; i < m.size(); ++i) m[i] = 0.02f * static_cast<float>(int(i % 13) - 6);
  const ValueId x = b.Input("x", DataType::kFloat32, {1, 2, 8, 8});
  const ValueId conv =
      b.Node("Conv", {x, b.FloatConstant("w", {4, 2, 3, 3}, w), b.FloatConstant("bias", {4}, bias)},
             "conv", DataType::kFloat32, {IntsAttribute("pads", {1, 1, 1, 1})});
  const ValueId pooled =
      b.Node("MaxPool", {conv}, "pooled", DataType::kFloat32,
             {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2})});
  const ValueId rows = b.Node("Reshape", {pooled, b.Int64Constant("shape", {2}, {4, 16})}, "rows",
                              DataType::kFloat32);
  const ValueId product =
      b.Node("MatMul", {rows, b.FloatConstant("m", {16, 5}, m)}, "product", DataType::kFloat32);
  b.Output(b.Node("Tanh", {product}, "y", DataType::kFloat32));
  b.Output(b.Node("GlobalAveragePool", {conv}, "means", DataType::kFloat32));
  auto session = CpuSession(b.Take());
  ASSERT_NE(session, nullptr);

  std::vector<float> v(2 * 8 * 8);
  const std::vector<nxrt::NamedTensor> inputs{Bind("x", DataType::kFloat32, {1, 2, 8, 8}, v)};
  std::vector<nxrt::Tensor> outputs;
  const int runs = 5;
  for (int run = 0; run < runs; ++run) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.3f * static_cast<float>(i + 7 * run));
    ASSERT_TRUE(RunPrimary(*session, inputs, outputs));
    ASSERT_EQ(outputs.size(), 2u);
    ASSERT_EQ(outputs[0].shape(), (std::vector<int64_t>{4, 5}));
    ASSERT_EQ(outputs[1].shape(), (std::vector<int64_t>{1, 4, 1, 1}));
    // The same computation in double.
    double feature[4][8][8];
    for (int o = 0; o < 4; ++o) {
      for (int r = 0; r < 8; ++r) {
        for (int c = 0; c < 8; ++c) {
          double sum = bias[o];
          for (int ch = 0; ch < 2; ++ch) {
            for (int p = 0; p < 3; ++p) {
              for (int q = 0; q < 3; ++q) {
                const int rr = r + p - 1, cc = c + q - 1;
                if (rr < 0 || rr >= 8 || cc < 0 || cc >= 8) continue;
                sum += double{v[(ch * 8 + rr) * 8 + cc]} * w[((o * 2 + ch) * 3 + p) * 3 + q];
              }
            }
          }
          feature[o][r][c] = sum;
        }
      }
    }
    const std::vector<float> got = ValuesOf<float>(outputs[0]);
    for (int row = 0; row < 4; ++row) {
      for (int col = 0; col < 5; ++col) {
        double sum = 0;
        for (int k = 0; k < 16; ++k) {
          const int r = k / 4, c = k % 4;
          const double pooled_value =
              std::max({feature[row][2 * r][2 * c], feature[row][2 * r][2 * c + 1],
                        feature[row][2 * r + 1][2 * c], feature[row][2 * r + 1][2 * c + 1]});
          sum += pooled_value * m[k * 5 + col];
        }
        EXPECT_NEAR(got[row * 5 + col], std::tanh(sum), 1e-5) << "run " << run;
      }
    }
    const std::vector<float> means = ValuesOf<float>(outputs[1]);
    for (int o = 0; o < 4; ++o) {
      double sum = 0;
      for (int r = 0; r < 8; ++r) {
        for (int c = 0; c < 8; ++c) sum += feature[o][r][c];
      }
      EXPECT_NEAR(means[o], sum / 64, 1e-5) << "run " << run << " map " << o;
    }
  }
  ExpectCapturedOnceAndReplayed(*session, runs);
}

// On an EP of `threads`: with two, the refusal is thrown inside the replay's
// parallel region and must still come back as a status.
void CheckReshapeReplayRefusesShapeValuesThatChanged(const std::string& threads) {
  auto plugin =
      nxrt::plugin_host::Plugin::Load(std::filesystem::path(NXRT_BINARY_DIR) / "lib/libep_cpu.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto ep = nxrt::plugin_host::ExecutionProvider::Create(plugin.value(), {{"threads", threads}});
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();

  // y = Reshape(x, shape) with both graph inputs, so no shape is constant.
  auto graph = std::make_shared<nxrt::graph::Graph>();
  graph->opset_imports[""] = 14;
  nxrt::graph::Node node;
  node.op_type = "Reshape";
  node.name = "reshape";
  const std::vector<std::pair<const char*, DataType>> input_values{{"x", DataType::kFloat32},
                                                                   {"shape", DataType::kInt64}};
  for (const auto& [name, dtype] : input_values) {
    nxrt::graph::Value v;
    v.name = name;
    v.dtype = dtype;
    v.is_graph_input = true;
    node.inputs.push_back(graph->AddValue(std::move(v)));
  }
  nxrt::graph::Value out;
  out.name = "y";
  out.dtype = DataType::kFloat32;
  node.outputs.push_back(graph->AddValue(std::move(out)));
  const auto id = graph->AddNode(std::move(node));
  auto view = std::make_shared<const nxrt::plugin_host::NodeView>(*graph, id);
  const std::vector<int64_t> x_dims{6}, shape_dims{2};
  const std::vector<nxrt_shape> shapes{
      nxrt_shape{sizeof(nxrt_shape), NXRT_DTYPE_FLOAT32, 1, x_dims.data()},
      nxrt_shape{sizeof(nxrt_shape), NXRT_DTYPE_INT64, 1, shape_dims.data()}};
  auto kernel = (*ep)->CreateKernel({}, view, shapes, 14);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();

  std::vector<float> x{1, 2, 3, 4, 5, 6}, y(6, 0.0f);
  std::vector<int64_t> shape{2, 3};
  const std::vector<int64_t> y_dims{2, 3};
  std::vector<nxrt_value> inputs{TensorValue(NXRT_DTYPE_FLOAT32, x, x_dims),
                                 TensorValue(NXRT_DTYPE_INT64, shape, shape_dims)};
  std::vector<nxrt_value> outputs{TensorValue(NXRT_DTYPE_FLOAT32, y, y_dims)};
  NoServices services;
  ASSERT_TRUE((*kernel)->capture_safe());
  const nxrt::Status eager = (*kernel)->Compute(services, inputs, outputs);
  ASSERT_TRUE(eager.ok()) << eager.ToString();
  EXPECT_EQ(y, x);

  ASSERT_TRUE((*ep)->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE((*kernel)->Compute(services, inputs, outputs).ok());
  auto token = (*ep)->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok()) << token.status().ToString();

  // Same shape values, new data: the replay copies it.
  x = {-1, -2, -3, -4, -5, -6};
  ASSERT_TRUE((*ep)->Replay(*token).ok());
  EXPECT_EQ(y, x);

  // The same element count under other dims no longer matches the capture.
  shape = {3, 2};
  x = {7, 8, 9, 10, 11, 12};
  const nxrt::Status refused = (*ep)->Replay(*token);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("Reshape"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.message().find("capture again"), std::string::npos) << refused.ToString();
  EXPECT_EQ(y, (std::vector<float>{-1, -2, -3, -4, -5, -6}));
  ASSERT_TRUE((*ep)->Reset(*token).ok());
}

TEST(CpuCaptureSafety, ReshapeReplayRefusesShapeValuesThatChanged) {
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(std::string("threads=") + threads);
    CheckReshapeReplayRefusesShapeValuesThatChanged(threads);
  }
}

// A two-layer product over `rows` rows (x[rows,256] x W1[256,1024], Relu,
// x W2[1024,256]) with constant weights: one row runs on split gemvs, several
// on oneDNN.
nxrt::graph::Graph TwoLayerProduct(int64_t rows) {
  ModelBuilder b(17);
  std::vector<float> w1(256 * 1024), w2(1024 * 256);
  for (size_t i = 0; i < w1.size(); ++i)
    w1[i] = static_cast<float>(static_cast<int>(i % 37) - 18) / 64;
  for (size_t i = 0; i < w2.size(); ++i)
    w2[i] = static_cast<float>(static_cast<int>(i % 29) - 14) / 64;
  const ValueId x = b.Input("x", DataType::kFloat32, {rows, 256});
  const ValueId hidden =
      b.Node("MatMul", {x, b.FloatConstant("w1", {256, 1024}, w1)}, "hidden", DataType::kFloat32);
  const ValueId active = b.Node("Relu", {hidden}, "active", DataType::kFloat32);
  b.Output(
      b.Node("MatMul", {active, b.FloatConstant("w2", {1024, 256}, w2)}, "y", DataType::kFloat32));
  return b.Take();
}

// On a two-thread EP a replay runs its split products with a crew inside
// one parallel region (parallel_blocks.hpp), and a oneDNN product in it
// makes later replays go without; either way every replay must give the
// eager run's bits, for new values each run.
TEST(CpuCaptureSafety, TwoThreadReplaysGiveTheEagerRunsBits) {
  for (const int64_t rows : {1, 4}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    auto replayed = CpuSession(TwoLayerProduct(rows), 2);
    auto eager = CpuSession(TwoLayerProduct(rows), 2);
    ASSERT_NE(replayed, nullptr);
    ASSERT_NE(eager, nullptr);
    std::vector<float> x(rows * 256);
    const std::vector<nxrt::NamedTensor> inputs{Bind("x", DataType::kFloat32, {rows, 256}, x)};
    std::vector<nxrt::Tensor> replay_outputs, eager_outputs;
    const int runs = 6;
    for (int run = 0; run < runs; ++run) {
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(static_cast<int>((i + 7 * run) % 11) - 5) / 8;
      }
      ASSERT_TRUE(RunPrimary(*replayed, inputs, replay_outputs));
      ASSERT_TRUE(eager->Run(inputs, {}, eager_outputs).ok());
      ASSERT_EQ(replay_outputs.size(), 1u);
      ASSERT_EQ(eager_outputs.size(), 1u);
      EXPECT_EQ(ValuesOf<float>(replay_outputs[0]), ValuesOf<float>(eager_outputs[0]))
          << "run " << run;
    }
    ExpectCapturedOnceAndReplayed(*replayed, runs);
  }
}

}  // namespace
}  // namespace nxrt_test
