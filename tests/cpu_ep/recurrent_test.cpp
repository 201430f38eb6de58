// RNN, GRU and LSTM on the ONNX node test cases, and where those cases do
// not look: reverse and bidirectional runs with sequence_lens shorter than
// the sequence (and zero), layout=1, batches above one, every activation
// function with its alpha and beta, clip, linear_before_reset, input_forget,
// peepholes, double, each output left out, and a device-graph replay on new
// values. Results are checked against a reference written here with plain
// loops in double, step by step per batch row. Also the reasons the ops
// decline and the error for a sequence length out of range.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "attribute_builders.hpp"
#include "node_case_runner.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::AttributeType;
using nxrt::graph::DataType;
using nxrt::graph::Dim;
using nxrt::graph::ValueId;

TEST(CpuEpRecurrent, NodeCases) {
  ExpectFamilyPasses("recurrent", {"RNN", "GRU", "LSTM"});
}

// An activation with the alpha and beta it takes (0, 1 or 2 of them).
struct Act {
  std::string name;
  float alpha = 0;
  float beta = 0;
  int takes = 0;
};

// One recurrent node: its op, sizes, attributes, which optional inputs it
// has and which outputs it names.
struct Case {
  std::string op = "LSTM";
  int64_t seq = 4;
  int64_t batch = 3;
  int64_t input = 3;
  int64_t hidden = 2;
  std::string direction = "forward";
  bool batch_major = false;
  std::vector<Act> activations;  // empty: the op's defaults
  std::optional<float> clip;
  bool linear_before_reset = false;
  bool input_forget = false;
  bool bias = true;
  std::vector<int32_t> lengths;  // empty: no sequence_lens input
  bool initial_h = true;
  bool initial_c = true;
  bool peepholes = false;
  std::array<bool, 3> outputs{true, true, true};  // Y, Y_h, Y_c
  DataType dtype = DataType::kFloat32;

  int64_t directions() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t gates() const { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }
  bool lstm() const { return op == "LSTM"; }
};

// The inputs of a case, in double.
struct Inputs {
  std::vector<double> x, w, r, b, initial_h, initial_c, p;
};

struct Outputs {
  std::vector<double> y, y_h, y_c;
};

std::vector<double> Random(size_t count, std::mt19937& gen) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> values(count);
  for (double& v : values) v = dist(gen);
  return values;
}

Inputs MakeInputs(const Case& c, uint32_t seed) {
  std::mt19937 gen(seed);
  const int64_t d = c.directions();
  const int64_t gh = c.gates() * c.hidden;
  Inputs in;
  in.x = Random(c.seq * c.batch * c.input, gen);
  in.w = Random(d * gh * c.input, gen);
  in.r = Random(d * gh * c.hidden, gen);
  if (c.bias) in.b = Random(d * 2 * gh, gen);
  if (c.initial_h) in.initial_h = Random(d * c.batch * c.hidden, gen);
  if (c.lstm() && c.initial_c) in.initial_c = Random(d * c.batch * c.hidden, gen);
  if (c.lstm() && c.peepholes) in.p = Random(d * 3 * c.hidden, gen);
  return in;
}

std::vector<Act> DefaultActs(const Case& c) {
  if (c.op == "RNN") return {{"Tanh"}};
  if (c.op == "GRU") return {{"Sigmoid"}, {"Tanh"}};
  return {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
}

double Activate(const Act& a, double v, double clip) {
  v = std::min(std::max(v, -clip), clip);
  const double alpha = a.alpha;
  const double beta = a.beta;
  if (a.name == "Relu") return v > 0 ? v : 0;
  if (a.name == "Tanh") return std::tanh(v);
  if (a.name == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (a.name == "Affine") return alpha * v + beta;
  if (a.name == "LeakyRelu") return v >= 0 ? v : alpha * v;
  if (a.name == "ThresholdedRelu") return v >= alpha ? v : 0;
  if (a.name == "ScaledTanh") return alpha * std::tanh(beta * v);
  if (a.name == "HardSigmoid") return std::min(std::max(alpha * v + beta, 0.0), 1.0);
  if (a.name == "Elu") return v >= 0 ? v : alpha * (std::exp(v) - 1);
  if (a.name == "Softsign") return v / (1 + std::abs(v));
  if (a.name == "Softplus") return std::log(1 + std::exp(v));
  ADD_FAILURE() << "no reference for " << a.name;
  return 0;
}

// The ONNX equations, one batch row and one time step at a time.
Outputs Reference(const Case& c, const Inputs& in) {
  const int64_t S = c.seq, N = c.batch, I = c.input, H = c.hidden, D = c.directions();
  const int64_t G = c.gates();
  auto x_at = [&](int64_t t, int64_t b, int64_t i) {
    return in.x[(c.batch_major ? b * S + t : t * N + b) * I + i];
  };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return (c.batch_major ? (b * S + t) * D + d : (t * D + d) * N + b) * H;
  };
  auto state_at = [&](int64_t d, int64_t b) { return (c.batch_major ? b * D + d : d * N + b) * H; };
  std::vector<Act> acts = c.activations.empty() ? DefaultActs(c) : c.activations;
  const size_t per_direction = DefaultActs(c).size();
  if (acts.size() == per_direction && D == 2) {
    const std::vector<Act> forward = acts;
    acts.insert(acts.end(), forward.begin(), forward.end());
  }
  const double clip = c.clip ? *c.clip : std::numeric_limits<double>::infinity();

  Outputs out;
  out.y.assign(S * D * N * H, 0.0);
  out.y_h.assign(D * N * H, 0.0);
  out.y_c.assign(D * N * H, 0.0);
  for (int64_t d = 0; d < D; ++d) {
    const bool backward = D == 2 ? d == 1 : c.direction == "reverse";
    auto act = [&](size_t k) -> const Act& { return acts[d * per_direction + k]; };
    for (int64_t b = 0; b < N; ++b) {
      std::vector<double> h(H, 0.0), cell(H, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (c.initial_h) h[j] = in.initial_h[state_at(d, b) + j];
        if (c.lstm() && c.initial_c) cell[j] = in.initial_c[state_at(d, b) + j];
      }
      const int64_t length = c.lengths.empty() ? S : c.lengths[b];
      for (int64_t s = 0; s < length; ++s) {
        const int64_t t = backward ? length - 1 - s : s;
        // Gate `gate`, unit j: W x + Wb, and R v + Rb.
        auto wx = [&](int64_t gate, int64_t j) {
          const int64_t row = d * G * H + gate * H + j;
          double sum = c.bias ? in.b[d * 2 * G * H + gate * H + j] : 0.0;
          for (int64_t i = 0; i < I; ++i) sum += in.w[row * I + i] * x_at(t, b, i);
          return sum;
        };
        auto rv = [&](int64_t gate, int64_t j, const std::vector<double>& v) {
          const int64_t row = d * G * H + gate * H + j;
          double sum = c.bias ? in.b[d * 2 * G * H + G * H + gate * H + j] : 0.0;
          for (int64_t k = 0; k < H; ++k) sum += in.r[row * H + k] * v[k];
          return sum;
        };
        std::vector<double> next(H);
        if (c.op == "RNN") {
          for (int64_t j = 0; j < H; ++j) next[j] = Activate(act(0), wx(0, j) + rv(0, j, h), clip);
        } else if (c.op == "GRU") {
          std::vector<double> z(H), r(H), reset_h(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = Activate(act(0), wx(0, j) + rv(0, j, h), clip);
            r[j] = Activate(act(0), wx(1, j) + rv(1, j, h), clip);
            reset_h[j] = r[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double pre = c.linear_before_reset ? wx(2, j) + r[j] * rv(2, j, h)
                                                     : wx(2, j) + rv(2, j, reset_h);
            const double candidate = Activate(act(1), pre, clip);
            next[j] = (1 - z[j]) * candidate + z[j] * h[j];
          }
        } else {
          auto peep = [&](int64_t k, int64_t j, double v) {
            return c.peepholes ? in.p[d * 3 * H + k * H + j] * v : 0.0;
          };
          for (int64_t j = 0; j < H; ++j) {
            const double i_gate =
                Activate(act(0), wx(0, j) + rv(0, j, h) + peep(0, j, cell[j]), clip);
            const double f_gate =
                c.input_forget
                    ? 1 - i_gate
                    : Activate(act(0), wx(2, j) + rv(2, j, h) + peep(2, j, cell[j]), clip);
            const double c_gate = Activate(act(1), wx(3, j) + rv(3, j, h), clip);
            const double new_cell = f_gate * cell[j] + i_gate * c_gate;
            const double o_gate =
                Activate(act(0), wx(1, j) + rv(1, j, h) + peep(1, j, new_cell), clip);
            next[j] = o_gate * Activate(act(2), new_cell, clip);
            cell[j] = new_cell;
          }
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) out.y[y_at(t, d, b) + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        out.y_h[state_at(d, b) + j] = h[j];
        out.y_c[state_at(d, b) + j] = cell[j];
      }
    }
  }
  return out;
}

// The dims of input `name` of a case.
std::vector<int64_t> InputDims(const Case& c, const std::string& name) {
  const int64_t d = c.directions();
  const int64_t gh = c.gates() * c.hidden;
  if (name == "X") {
    return c.batch_major ? std::vector<int64_t>{c.batch, c.seq, c.input}
                         : std::vector<int64_t>{c.seq, c.batch, c.input};
  }
  if (name == "W") return {d, gh, c.input};
  if (name == "R") return {d, gh, c.hidden};
  if (name == "B") return {d, 2 * gh};
  if (name == "sequence_lens") return {c.batch};
  if (name == "P") return {d, 3 * c.hidden};
  // initial_h and initial_c
  return c.batch_major ? std::vector<int64_t>{c.batch, d, c.hidden}
                       : std::vector<int64_t>{d, c.batch, c.hidden};
}

// The node's attributes; activation_alpha and activation_beta list the
// values of the activations that take them, in order.
std::vector<nxrt::graph::Attribute> Attributes(const Case& c) {
  std::vector<nxrt::graph::Attribute> attrs{IntAttribute("hidden_size", c.hidden)};
  nxrt::graph::Attribute direction;
  direction.name = "direction";
  direction.type = AttributeType::kString;
  direction.s = c.direction;
  attrs.push_back(direction);
  if (c.batch_major) attrs.push_back(IntAttribute("layout", 1));
  if (c.linear_before_reset) attrs.push_back(IntAttribute("linear_before_reset", 1));
  if (c.input_forget) attrs.push_back(IntAttribute("input_forget", 1));
  if (c.clip) {
    nxrt::graph::Attribute clip;
    clip.name = "clip";
    clip.type = AttributeType::kFloat;
    clip.f = *c.clip;
    attrs.push_back(clip);
  }
  if (!c.activations.empty()) {
    nxrt::graph::Attribute names, alphas, betas;
    names.name = "activations";
    names.type = AttributeType::kStrings;
    alphas.name = "activation_alpha";
    alphas.type = AttributeType::kFloats;
    betas.name = "activation_beta";
    betas.type = AttributeType::kFloats;
    for (const Act& a : c.activations) {
      names.strings.push_back(a.name);
      if (a.takes >= 1) alphas.floats.push_back(a.alpha);
      if (a.takes == 2) betas.floats.push_back(a.beta);
    }
    attrs.push_back(names);
    if (!alphas.floats.empty()) attrs.push_back(alphas);
    if (!betas.floats.empty()) attrs.push_back(betas);
  }
  return attrs;
}

// A graph of the one node, its present inputs as graph inputs and its named
// outputs as graph outputs.
nxrt::graph::Graph OneNodeGraph(const Case& c) {
  nxrt::graph::Graph graph;
  graph.model_path = "recurrent.onnx";
  graph.name = "recurrent";
  graph.opset_imports[""] = 22;
  graph.weights = std::make_shared<nxrt::graph::WeightStore>();
  struct Slot {
    const char* name;
    bool present;
    DataType dtype;
  };
  const std::vector<Slot> slots{
      {"X", true, c.dtype},
      {"W", true, c.dtype},
      {"R", true, c.dtype},
      {"B", c.bias, c.dtype},
      {"sequence_lens", !c.lengths.empty(), DataType::kInt32},
      {"initial_h", c.initial_h, c.dtype},
      {"initial_c", c.lstm() && c.initial_c, c.dtype},
      {"P", c.lstm() && c.peepholes, c.dtype},
  };
  nxrt::graph::Node node;
  node.op_type = c.op;
  node.name = c.op + "_node";
  node.attributes = Attributes(c);
  const size_t input_count = c.lstm() ? slots.size() : 6;
  for (size_t i = 0; i < input_count; ++i) {
    if (!slots[i].present) {
      node.inputs.push_back(std::nullopt);
      continue;
    }
    nxrt::graph::Value v;
    v.name = slots[i].name;
    v.dtype = slots[i].dtype;
    nxrt::graph::Shape shape;
    for (int64_t dim : InputDims(c, slots[i].name)) shape.push_back(Dim::Static(dim));
    v.shape = shape;
    v.is_graph_input = true;
    const ValueId id = graph.AddValue(std::move(v));
    graph.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  const char* output_names[] = {"Y", "Y_h", "Y_c"};
  const size_t output_count = c.lstm() ? 3 : 2;
  for (size_t i = 0; i < output_count; ++i) {
    if (!c.outputs[i]) {
      node.outputs.push_back(std::nullopt);
      continue;
    }
    nxrt::graph::Value v;
    v.name = output_names[i];
    v.dtype = c.dtype;
    const ValueId id = graph.AddValue(std::move(v));
    graph.outputs.push_back(id);
    node.outputs.push_back(id);
  }
  graph.AddNode(std::move(node));
  return graph;
}

nxrt::Result<std::unique_ptr<nxrt::Session>> CpuSession(nxrt::graph::Graph graph) {
  nxrt::EnvironmentOptions environment_options;
  environment_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  auto environment = nxrt::Environment::Create(environment_options);
  if (!environment.ok()) return environment.status();
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {}}};
  return nxrt::Session::Create(*environment, std::move(graph), options);
}

// Host buffers of a case's inputs in its dtype, bound by name.
class BoundInputs {
 public:
  BoundInputs(const Case& c, const Inputs& in) : case_(c) {
    Add("X", in.x);
    Add("W", in.w);
    Add("R", in.r);
    Add("B", in.b);
    Add("initial_h", in.initial_h);
    Add("initial_c", in.initial_c);
    Add("P", in.p);
    if (!c.lengths.empty()) {
      lengths_ = c.lengths;
      named_.push_back(
          {"sequence_lens", nxrt::Tensor::Borrow(DataType::kInt32, {c.batch}, lengths_.data(),
                                                 lengths_.size() * sizeof(int32_t))});
    }
  }
  const std::vector<nxrt::NamedTensor>& named() const { return named_; }

  // Rewrites the bound buffers in place with `in` and `lengths`.
  void Refill(const Inputs& in, const std::vector<int32_t>& lengths) {
    size_t next = 0;
    for (const std::vector<double>* values :
         {&in.x, &in.w, &in.r, &in.b, &in.initial_h, &in.initial_c, &in.p}) {
      if (!values->empty()) Write(*values, storage_[next++]);
    }
    std::copy(lengths.begin(), lengths.end(), lengths_.begin());
  }

 private:
  void Add(const std::string& name, const std::vector<double>& values) {
    if (values.empty()) return;
    auto& bytes =
        storage_.emplace_back(values.size() * (case_.dtype == DataType::kFloat64 ? 8 : 4));
    Write(values, bytes);
    named_.push_back({name, nxrt::Tensor::Borrow(case_.dtype, InputDims(case_, name), bytes.data(),
                                                 bytes.size())});
  }
  void Write(const std::vector<double>& values, std::vector<std::byte>& bytes) const {
    if (case_.dtype == DataType::kFloat64) {
      std::memcpy(bytes.data(), values.data(), bytes.size());
      return;
    }
    std::vector<float> narrow(values.begin(), values.end());
    std::memcpy(bytes.data(), narrow.data(), bytes.size());
  }
  const Case& case_;
  std::vector<std::vector<std::byte>> storage_;
  std::vector<int32_t> lengths_;
  std::vector<nxrt::NamedTensor> named_;
};

std::vector<double> ValuesOf(const nxrt::Tensor& t, DataType dtype) {
  if (dtype == DataType::kFloat64) {
    auto v = t.values<double>();
    return {v.begin(), v.end()};
  }
  auto v = t.values<float>();
  return {v.begin(), v.end()};
}

void ExpectClose(const std::vector<double>& actual, const std::vector<double>& expected,
                 DataType dtype, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  const double tolerance = dtype == DataType::kFloat64 ? 1e-10 : 2e-5;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance * (1 + std::abs(expected[i])))
        << what << " element " << i;
  }
}

// The named outputs of one run against the reference.
void ExpectOutputs(const Case& c, const Inputs& in, const std::vector<nxrt::Tensor>& outputs) {
  const Outputs want = Reference(c, in);
  const std::vector<double>* expected[] = {&want.y, &want.y_h, &want.y_c};
  const char* names[] = {"Y", "Y_h", "Y_c"};
  size_t next = 0;
  for (size_t i = 0; i < (c.lstm() ? 3u : 2u); ++i) {
    if (!c.outputs[i]) continue;
    ASSERT_LT(next, outputs.size());
    ExpectClose(ValuesOf(outputs[next++], c.dtype), *expected[i], c.dtype, names[i]);
  }
  EXPECT_EQ(next, outputs.size());
}

// Runs a case on random inputs and checks every named output.
void ExpectMatchesReference(const Case& c, uint32_t seed = 7) {
  auto session = CpuSession(OneNodeGraph(c));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const Inputs in = MakeInputs(c, seed);
  BoundInputs bound(c, in);
  auto outputs = (*session)->Run(bound.named());
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ExpectOutputs(c, in, *outputs);
}

TEST(CpuEpRecurrent, BidirectionalLstmWithShortSequences) {
  Case c;
  c.seq = 5;
  c.batch = 4;
  c.direction = "bidirectional";
  c.lengths = {5, 3, 0, 1};
  c.peepholes = true;
  ExpectMatchesReference(c);
}

TEST(CpuEpRecurrent, ReverseGruWithShortSequencesBothResets) {
  for (bool linear_before_reset : {false, true}) {
    SCOPED_TRACE(linear_before_reset ? "linear_before_reset=1" : "linear_before_reset=0");
    Case c;
    c.op = "GRU";
    c.direction = "reverse";
    c.hidden = 3;
    c.lengths = {2, 4, 3};
    c.linear_before_reset = linear_before_reset;
    ExpectMatchesReference(c);
  }
}

// The form torch exports (linear_before_reset, one direction, whole
// sequences) runs on oneDNN's GRU: with and without a bias and initial_h,
// forward and reverse, and each output alone.
TEST(CpuEpRecurrent, LinearBeforeResetGruOfWholeSequences) {
  for (const char* direction : {"forward", "reverse"}) {
    for (bool bias : {true, false}) {
      for (bool initial_h : {true, false}) {
        SCOPED_TRACE(std::string(direction) + (bias ? " with B" : " without B") +
                     (initial_h ? " with initial_h" : " without initial_h"));
        Case c;
        c.op = "GRU";
        c.linear_before_reset = true;
        c.direction = direction;
        c.seq = 6;
        c.batch = 2;
        c.input = 5;
        c.hidden = 4;
        c.bias = bias;
        c.initial_h = initial_h;
        ExpectMatchesReference(c);
      }
    }
  }
  for (size_t only = 0; only < 2; ++only) {
    Case c;
    c.op = "GRU";
    c.linear_before_reset = true;
    c.outputs = {only == 0, only == 1, false};
    ExpectMatchesReference(c);
  }
}

TEST(CpuEpRecurrent, BatchMajorLayoutForEveryCell) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    Case c;
    c.op = op;
    c.batch_major = true;
    c.direction = "bidirectional";
    c.lengths = {4, 2, 3};
    c.linear_before_reset = true;
    ExpectMatchesReference(c);
  }
}

TEST(CpuEpRecurrent, SingleBatchRowTakesTheVectorPath) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    Case c;
    c.op = op;
    c.batch = 1;
    c.seq = 6;
    c.hidden = 5;
    c.input = 4;
    c.direction = "reverse";
    ExpectMatchesReference(c);
  }
}

// A float layer of batch 1 whose R is constant keeps R^T and runs each
// step's products on oneDNN's sgemm, GRU's product of the reset state
// included; the values are those of R as an input.
TEST(CpuEpRecurrent, ConstantRecurrentWeightsOfOneBatchRow) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (bool linear_before_reset : {false, true}) {
      if (linear_before_reset && std::string(op) != "GRU") continue;
      SCOPED_TRACE(std::string(op) + (linear_before_reset ? " linear_before_reset" : ""));
      Case c;
      c.op = op;
      c.batch = 1;
      c.seq = 7;
      c.hidden = 6;
      c.input = 5;
      c.direction = "bidirectional";
      c.linear_before_reset = linear_before_reset;
      c.peepholes = c.lstm();
      const Inputs in = MakeInputs(c, 11);
      nxrt::graph::Graph graph = OneNodeGraph(c);
      const auto r = std::find_if(graph.inputs.begin(), graph.inputs.end(),
                                  [&](ValueId id) { return graph.value(id).name == "R"; });
      ASSERT_NE(r, graph.inputs.end());
      const std::vector<float> values(in.r.begin(), in.r.end());
      std::vector<std::byte> bytes(values.size() * sizeof(float));
      std::memcpy(bytes.data(), values.data(), bytes.size());
      graph.value(*r).initializer =
          graph.weights->AddOwned(DataType::kFloat32, InputDims(c, "R"), std::move(bytes));
      graph.value(*r).is_graph_input = false;
      graph.inputs.erase(r);
      auto session = CpuSession(std::move(graph));
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      Inputs fed = in;
      fed.r.clear();
      BoundInputs bound(c, fed);
      auto outputs = (*session)->Run(bound.named());
      ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
      ExpectOutputs(c, in, *outputs);
    }
  }
}

TEST(CpuEpRecurrent, EveryActivationWithItsAlphaAndBeta) {
  const std::vector<Act> all{{"Relu"},
                             {"Tanh"},
                             {"Sigmoid"},
                             {"Affine", 0.7f, -0.2f, 2},
                             {"LeakyRelu", 0.3f, 0, 1},
                             {"ThresholdedRelu", 0.1f, 0, 1},
                             {"ScaledTanh", 1.5f, 0.8f, 2},
                             {"HardSigmoid", 0.3f, 0.4f, 2},
                             {"Elu", 0.9f, 0, 1},
                             {"Softsign"},
                             {"Softplus"}};
  for (const Act& a : all) {
    SCOPED_TRACE(a.name);
    // The named activation on the forward direction of an RNN, and as the
    // LSTM's g after an alpha-taking f, so the lists are consumed in order.
    Case rnn;
    rnn.op = "RNN";
    rnn.direction = "bidirectional";
    rnn.activations = {a, {"LeakyRelu", 0.05f, 0, 1}};
    ExpectMatchesReference(rnn);
    Case lstm;
    lstm.activations = {{"HardSigmoid", 0.25f, 0.45f, 2}, a, {"Tanh"}};
    ExpectMatchesReference(lstm);
  }
}

TEST(CpuEpRecurrent, DefaultAlphaAndBetaWhenTheListsRunShort) {
  Case c;
  c.op = "GRU";
  // HardSigmoid takes an alpha and no beta: its beta and Elu's alpha are the
  // defaults (0.5 and 1).
  c.activations = {{"HardSigmoid", 0.3f, 0.5f, 1}, {"Elu", 1.0f, 0, 0}};
  ExpectMatchesReference(c);
}

TEST(CpuEpRecurrent, OneActivationSetServesBothDirections) {
  Case c;
  c.op = "GRU";
  c.direction = "bidirectional";
  c.activations = {{"HardSigmoid", 0.3f, 0.6f, 2}, {"Softsign"}};
  ExpectMatchesReference(c);
}

TEST(CpuEpRecurrent, ClipBoundsTheInputOfEveryActivation) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    Case c;
    c.op = op;
    c.clip = 0.4f;
    c.activations = op == std::string("RNN")   ? std::vector<Act>{{"Relu"}}
                    : op == std::string("GRU") ? std::vector<Act>{{"Sigmoid"}, {"Affine", 2, 0, 2}}
                                               : std::vector<Act>{{"Sigmoid"}, {"Tanh"}, {"Relu"}};
    ExpectMatchesReference(c);
  }
}

TEST(CpuEpRecurrent, LstmInputForgetWithPeepholes) {
  Case c;
  c.input_forget = true;
  c.peepholes = true;
  c.lengths = {3, 4, 1};
  ExpectMatchesReference(c);
}

TEST(CpuEpRecurrent, DoubleWithoutOptionalInputs) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    Case c;
    c.op = op;
    c.dtype = DataType::kFloat64;
    c.bias = false;
    c.initial_h = false;
    c.initial_c = false;
    c.direction = "bidirectional";
    ExpectMatchesReference(c);
  }
}

TEST(CpuEpRecurrent, EachOutputAlone) {
  for (size_t only = 0; only < 3; ++only) {
    SCOPED_TRACE("output " + std::to_string(only));
    Case c;
    c.outputs = {only == 0, only == 1, only == 2};
    c.lengths = {1, 4, 2};
    c.direction = "reverse";
    ExpectMatchesReference(c);
  }
}

TEST(CpuEpRecurrent, DeviceGraphReplaysFollowNewValues) {
  Case c;
  c.direction = "bidirectional";
  c.lengths = {4, 2, 3};
  auto session = CpuSession(OneNodeGraph(c));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  BoundInputs bound(c, MakeInputs(c, 100));
  std::vector<nxrt::Tensor> outputs;
  const uint32_t runs = 5;
  for (uint32_t run = 0; run < runs; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    c.lengths = {static_cast<int32_t>(4 - run % 4), 2, static_cast<int32_t>(run % 4)};
    const Inputs in = MakeInputs(c, 100 + run);
    bound.Refill(in, c.lengths);
    const nxrt::Status status =
        (*session)->Run(nxrt::DeviceGraphSlot::kPrimary, bound.named(), {}, outputs);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ExpectOutputs(c, in, outputs);
  }
  const auto counters = (*session)->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, runs - 1);
}

TEST(CpuEpRecurrent, SequenceLengthOutOfRangeFailsTheRun) {
  Case c;
  c.op = "RNN";
  c.lengths = {2, 5, 1};
  auto session = CpuSession(OneNodeGraph(c));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const Inputs in = MakeInputs(c, 3);
  BoundInputs bound(c, in);
  auto outputs = (*session)->Run(bound.named());
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("sequence_lens[1] is 5"), std::string::npos)
      << outputs.status().ToString();
}

TEST(CpuEpRecurrent, DeclinesWithReasons) {
  struct Decline {
    Case c;
    std::string reason;
  };
  std::vector<Decline> declines;
  declines.push_back({Case{}, "activation 'Swish' not implemented"});
  declines.back().c.activations = {{"Sigmoid"}, {"Swish"}, {"Tanh"}};
  declines.push_back({Case{}, "direction 'sideways' not implemented"});
  declines.back().c.direction = "sideways";
  declines.push_back({Case{}, "expected 2 per direction"});
  declines.back().c.op = "GRU";
  declines.back().c.activations = {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
  declines.push_back({Case{}, "dtype float16 not supported"});
  declines.back().c.dtype = DataType::kFloat16;
  for (const Decline& d : declines) {
    SCOPED_TRACE(d.reason);
    auto session = CpuSession(OneNodeGraph(d.c));
    ASSERT_FALSE(session.ok());
    EXPECT_NE(session.status().message().find(d.reason), std::string::npos)
        << session.status().ToString();
  }
}

}  // namespace
}  // namespace nxrt_test
