// RNN, GRU and LSTM in float and double, at every opset (layout=1 from 14):
// the claim checks dtypes and attributes, the kernel checks shapes and runs
// one SequenceLayer (recurrent/sequence_layer.hpp), or, for the GRU form
// torch exports, oneDNN's (ops/linear_before_reset_gru.hpp). Y, Y_h and Y_c are each
// produced only when the node names them.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cpu_kernel.hpp"
#include "ops/linear_before_reset_gru.hpp"
#include "recurrent/sequence_layer.hpp"

namespace nxrt::cpu {
namespace {

enum RecurrentInput : size_t {
  kX = 0,
  kW = 1,
  kR = 2,
  kB = 3,
  kSequenceLens = 4,
  kInitialH = 5,
  kInitialC = 6,  // LSTM only, like P
  kPeepholes = 7,
};
enum RecurrentOutput : size_t { kY = 0, kYH = 1, kYC = 2 };

using RecurrentTypes = TypeList<float, double>;

std::vector<std::string> DefaultActivations(CellKind cell) {
  switch (cell) {
    case CellKind::kRnn:
      return {"Tanh"};
    case CellKind::kGru:
      return {"Sigmoid", "Tanh"};
    case CellKind::kLstm:
      return {"Sigmoid", "Tanh", "Tanh"};
  }
  return {};
}

// The node's attributes as a LayerConfig (hidden 0 when hidden_size is
// absent), or the reason one is not implemented.
std::optional<std::string> ReadConfig(const sdk::Node& node, CellKind cell, LayerConfig* config) {
  const std::string op(node.op_type());
  config->cell = cell;
  config->hidden = node.AttrInt("hidden_size", 0);
  if (config->hidden < 0) return op + ": hidden_size must not be negative";
  const std::string direction = node.AttrString("direction", "forward");
  if (direction == "bidirectional") {
    config->directions = 2;
  } else if (direction == "reverse") {
    config->reverse = true;
  } else if (direction != "forward") {
    return op + ": direction '" + direction + "' not implemented";
  }
  const int64_t layout = node.AttrInt("layout", 0);
  if (layout != 0 && layout != 1) {
    return op + ": layout=" + std::to_string(layout) + " not implemented";
  }
  config->batch_major = layout == 1;
  if (node.attr_type("clip") != NXRT_ATTR_UNDEFINED) {
    config->clip = node.AttrFloat("clip", 0.0f);
    if (!(config->clip > 0)) return op + ": clip must be positive";
  }
  if (cell == CellKind::kGru) {
    config->linear_before_reset = node.AttrInt("linear_before_reset", 0) != 0;
  }
  if (cell == CellKind::kLstm) config->input_forget = node.AttrInt("input_forget", 0) != 0;

  std::vector<std::string> names = node.AttrStrings("activations");
  if (names.empty()) names = DefaultActivations(cell);
  if (auto reason = ResolveActivations(names, node.AttrFloats("activation_alpha"),
                                       node.AttrFloats("activation_beta"), &config->activations)) {
    return op + ": " + *reason;
  }
  const size_t per_direction = static_cast<size_t>(ActivationCount(cell));
  // One set of activations serves both directions.
  if (config->directions == 2 && config->activations.size() == per_direction) {
    for (size_t k = 0; k < per_direction; ++k) {
      config->activations.push_back(config->activations[k]);
    }
  }
  if (config->activations.size() != per_direction * static_cast<size_t>(config->directions)) {
    return op + ": activations lists " + std::to_string(names.size()) + " functions; expected " +
           std::to_string(per_direction) + " per direction";
  }
  return std::nullopt;
}

ClaimFn ClaimRecurrent(CellKind cell) {
  return [cell](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    const std::string op(node.op_type());
    for (size_t i : {kX, kW, kR}) {
      if (auto reason = CheckInputDtype(node, inputs, i, RecurrentTypes{})) {
        return sdk::ClaimResult::Declined(*reason);
      }
    }
    const size_t input_limit = cell == CellKind::kLstm ? kPeepholes + 1 : kInitialH + 1;
    if (inputs.size() > input_limit) {
      return sdk::ClaimResult::Declined(op + ": takes at most " + std::to_string(input_limit) +
                                        " inputs");
    }
    for (size_t i = kW; i < inputs.size(); ++i) {
      if (inputs[i].kind == NXRT_VALUE_NONE) continue;
      if (inputs[i].kind != NXRT_VALUE_TENSOR) {
        return sdk::ClaimResult::Declined(op + ": sequence inputs not supported");
      }
      const nxrt_dtype want = i == kSequenceLens ? NXRT_DTYPE_INT32 : inputs[kX].dtype;
      if (inputs[i].dtype != want) {
        return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) + " is " +
                                          DtypeName(inputs[i].dtype) + "; expected " +
                                          DtypeName(want));
      }
    }
    LayerConfig config;
    return ClaimUnless(ReadConfig(node, cell, &config));
  };
}

template <typename T>
class RecurrentKernel : public CpuKernel {
 public:
  RecurrentKernel(LayerConfig config, LayerDims dims, Dims y_dims, Dims state_dims)
      : CpuKernel(true),
        layer_(std::move(config), dims),
        y_dims_(std::move(y_dims)),
        state_dims_(std::move(state_dims)) {}

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index == kR) layer_.PrepareRecurrentWeights(static_cast<const T*>(c.bytes));
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    LayerTensors<T> io;
    io.x = DataAs<T>(TensorOf(inputs, kX));
    io.w = DataAs<T>(TensorOf(inputs, kW));
    io.r = DataAs<T>(TensorOf(inputs, kR));
    if (IsPresent(inputs, kB)) io.b = DataAs<T>(TensorOf(inputs, kB));
    if (IsPresent(inputs, kSequenceLens)) {
      io.lengths = DataAs<int32_t>(TensorOf(inputs, kSequenceLens));
    }
    if (IsPresent(inputs, kInitialH)) io.initial_h = DataAs<T>(TensorOf(inputs, kInitialH));
    if (IsPresent(inputs, kInitialC)) io.initial_c = DataAs<T>(TensorOf(inputs, kInitialC));
    if (IsPresent(inputs, kPeepholes)) io.peepholes = DataAs<T>(TensorOf(inputs, kPeepholes));
    io.y = Output(ctx, outputs, kY, y_dims_);
    io.y_h = Output(ctx, outputs, kYH, state_dims_);
    io.y_c = Output(ctx, outputs, kYC, state_dims_);
    layer_.Run(io);
  }

 private:
  // Output `index` ready to write, or null when the node leaves it out.
  static T* Output(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                   const Dims& dims) {
    if (index >= outputs.size() || outputs[index].kind != NXRT_VALUE_TENSOR) return nullptr;
    return MutableDataAs<T>(PrepareOutput(ctx, outputs, index, kDtypeOf<T>, dims));
  }

  SequenceLayer<T> layer_;
  Dims y_dims_;
  Dims state_dims_;
};

std::unique_ptr<CpuKernel> MakeRecurrentKernel(CellKind cell, const sdk::Node& node,
                                               std::span<const nxrt_shape> inputs) {
  const std::string op(node.op_type());
  LayerConfig config;
  if (auto reason = ReadConfig(node, cell, &config)) FailUnsupported(*reason);
  auto present = [&](size_t i) {
    return i < inputs.size() && inputs[i].dtype != NXRT_DTYPE_UNDEFINED;
  };
  auto dims_of = [&](size_t i) {
    return inputs[i].rank ? Dims(inputs[i].dims, inputs[i].dims + inputs[i].rank) : Dims();
  };
  const Dims x = dims_of(kX);
  const Dims r = dims_of(kR);
  if (x.size() != 3 || r.size() != 3) {
    FailInvalid(op + ": X and R must have rank 3; got " + DimsText(x) + " and " + DimsText(r));
  }
  const bool batch_major = config.batch_major;
  const LayerDims dims{batch_major ? x[1] : x[0], batch_major ? x[0] : x[1], x[2]};
  if (config.hidden == 0) config.hidden = r[2];
  const int64_t hidden = config.hidden;
  const int64_t directions = config.directions;
  const int64_t gates = GateCount(cell) * hidden;
  auto expect = [&](size_t index, const char* name, const Dims& want) {
    if (!present(index) || dims_of(index) == want) return;
    FailInvalid(op + ": " + name + " is " + DimsText(dims_of(index)) + "; expected " +
                DimsText(want));
  };
  const Dims state =
      batch_major ? Dims{dims.batch, directions, hidden} : Dims{directions, dims.batch, hidden};
  expect(kW, "W", {directions, gates, dims.input});
  expect(kR, "R", {directions, gates, hidden});
  expect(kB, "B", {directions, 2 * gates});
  expect(kSequenceLens, "sequence_lens", {dims.batch});
  expect(kInitialH, "initial_h", state);
  if (cell == CellKind::kLstm) {
    expect(kInitialC, "initial_c", state);
    expect(kPeepholes, "P", {directions, 3 * hidden});
  }
  const Dims y = batch_major ? Dims{dims.batch, dims.seq, directions, hidden}
                             : Dims{dims.seq, directions, dims.batch, hidden};
  if (cell == CellKind::kGru) {
    if (std::unique_ptr<CpuKernel> gru =
            MakeLinearBeforeResetGru(inputs[kX].dtype, config, dims, present(kB),
                                     present(kSequenceLens), present(kInitialH), y, state)) {
      return gru;
    }
  }
  return Dispatch(RecurrentTypes{}, inputs[kX].dtype, op,
                  [&](auto tag) -> std::unique_ptr<CpuKernel> {
                    using T = typename decltype(tag)::type;
                    return std::make_unique<RecurrentKernel<T>>(std::move(config), dims, y, state);
                  });
}

}  // namespace

void RegisterRecurrentOps(OpRegistry& r) {
  struct Op {
    const char* name;
    CellKind cell;
  };
  for (const Op op :
       {Op{"RNN", CellKind::kRnn}, Op{"GRU", CellKind::kGru}, Op{"LSTM", CellKind::kLstm}}) {
    const CellKind cell = op.cell;
    r.Add(op.name, {1, ClaimRecurrent(cell),
                    [cell](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                      return MakeRecurrentKernel(cell, node, inputs);
                    }});
  }
}

}  // namespace nxrt::cpu
