#include "claim_rules.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "dtype.hpp"
#include "kernels/attention_limits.hpp"

namespace nxrt::cuda {
namespace {

using sdk::ClaimResult;
using Inputs = std::span<const nxrt_value_info>;
using Rule = std::function<ClaimResult(const sdk::Node&, int64_t opset, Inputs)>;

constexpr int64_t kMaxRank = 8;

bool Present(Inputs inputs, size_t index) {
  return index < inputs.size() && inputs[index].kind != NXRT_VALUE_NONE;
}

// The first reason input `index` cannot be computed, if any.
std::optional<std::string> TensorProblem(Inputs inputs, size_t index, bool float_only) {
  if (!Present(inputs, index)) return "input " + std::to_string(index) + " is absent";
  const nxrt_value_info& info = inputs[index];
  if (info.kind != NXRT_VALUE_TENSOR) return "input " + std::to_string(index) + " is a sequence";
  if (float_only && !IsComputeFloat(info.dtype)) {
    return "input " + std::to_string(index) + " is " + DtypeName(info.dtype) +
           "; CUDA computes float32, float16 and bfloat16 here";
  }
  if (ElementSize(info.dtype) == 0) {
    return "input " + std::to_string(index) + " is " + DtypeName(info.dtype) +
           ", which has no fixed element size on the device";
  }
  if (info.rank > kMaxRank) {
    return "input " + std::to_string(index) + " has rank " + std::to_string(info.rank) +
           "; CUDA kernels here handle up to " + std::to_string(kMaxRank);
  }
  return std::nullopt;
}

ClaimResult RequireTensors(Inputs inputs, std::initializer_list<size_t> indices, bool float_only) {
  for (size_t index : indices) {
    if (auto problem = TensorProblem(inputs, index, float_only)) {
      return ClaimResult::Declined(*problem);
    }
  }
  return ClaimResult::Claimed();
}

ClaimResult RequireSameDtype(Inputs inputs, size_t a, size_t b) {
  if (inputs[a].dtype != inputs[b].dtype) {
    return ClaimResult::Declined("inputs " + std::to_string(a) + " and " + std::to_string(b) +
                                 " differ in type (" + DtypeName(inputs[a].dtype) + " and " +
                                 DtypeName(inputs[b].dtype) + ")");
  }
  return ClaimResult::Claimed();
}

ClaimResult OnlyFirstOutput(const sdk::Node& node) {
  for (size_t i = 1; i < node.output_count(); ++i) {
    if (node.output_name(i) && !node.output_name(i)->empty()) {
      return ClaimResult::Declined("output " + std::to_string(i) +
                                   " (statistics) is not produced on CUDA");
    }
  }
  return ClaimResult::Claimed();
}

// Whether `axis` names the last axis of a tensor of rank `rank`.
ClaimResult RequireLastAxis(int64_t axis, int64_t rank, const char* what) {
  if (rank < 1) return ClaimResult::Declined(std::string(what) + " needs a known rank");
  if (axis != -1 && axis != rank - 1) {
    return ClaimResult::Declined(std::string(what) + " over axis " + std::to_string(axis) +
                                 " of rank " + std::to_string(rank) +
                                 "; CUDA handles the last axis only");
  }
  return ClaimResult::Claimed();
}

#define NXRT_CLAIM_CHECK(expression)      \
  do {                                    \
    ClaimResult checked = (expression);   \
    if (!checked.claimed) return checked; \
  } while (false)

ClaimResult ClaimUnary(const sdk::Node&, int64_t, Inputs inputs) {
  return RequireTensors(inputs, {0}, true);
}

ClaimResult ClaimGelu(const sdk::Node& node, int64_t opset, Inputs inputs) {
  const std::string approximate = node.AttrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return ClaimResult::Declined("Gelu approximate='" + approximate + "' is not known");
  }
  return ClaimUnary(node, opset, inputs);
}

ClaimResult ClaimBinary(const sdk::Node&, int64_t, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0, 1}, true));
  return RequireSameDtype(inputs, 0, 1);
}

ClaimResult ClaimMatMul(const sdk::Node&, int64_t, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0, 1}, true));
  NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 1));
  const nxrt_value_info& a = inputs[0];
  const nxrt_value_info& b = inputs[1];
  if (a.rank < 2 || b.rank < 2) {
    return ClaimResult::Declined("MatMul with a rank-1 or unknown-rank operand stays on the host");
  }
  if (b.rank == 2) return ClaimResult::Claimed();
  if (a.rank != b.rank) {
    return ClaimResult::Declined("MatMul batch broadcasting between ranks " +
                                 std::to_string(a.rank) + " and " + std::to_string(b.rank));
  }
  for (int64_t d = 0; d + 2 < a.rank; ++d) {
    const nxrt_dim& da = a.dims[d];
    const nxrt_dim& db = b.dims[d];
    const bool same_static = da.value >= 0 && da.value == db.value;
    const bool same_symbol =
        da.symbol != nullptr && db.symbol != nullptr && std::string_view(da.symbol) == db.symbol;
    if (!same_static && !same_symbol) {
      return ClaimResult::Declined("MatMul batch axis " + std::to_string(d) +
                                   " may broadcast; CUDA needs equal batch shapes or a 2-D B");
    }
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimGemm(const sdk::Node&, int64_t, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0, 1}, true));
  NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 1));
  if (inputs[0].rank != 2 || inputs[1].rank != 2) {
    return ClaimResult::Declined("Gemm needs 2-D A and B");
  }
  if (Present(inputs, 2)) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {2}, true));
    NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 2));
    if (inputs[2].rank > 2) return ClaimResult::Declined("Gemm C has rank above 2");
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimSoftmax(const sdk::Node& node, int64_t opset, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0}, true));
  const int64_t axis = node.AttrInt("axis", opset >= 13 ? -1 : 1);
  // Before opset 13 Softmax flattens at `axis`; over the last axis that is the same.
  return RequireLastAxis(axis, inputs[0].rank, "Softmax");
}

ClaimResult ClaimNormalization(const sdk::Node& node, Inputs inputs, bool with_bias) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0, 1}, true));
  NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 1));
  if (with_bias && Present(inputs, 2)) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {2}, true));
    NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 2));
  }
  NXRT_CLAIM_CHECK(OnlyFirstOutput(node));
  NXRT_CLAIM_CHECK(
      RequireLastAxis(node.AttrInt("axis", -1), inputs[0].rank, node.op_type().data()));
  if (inputs[1].rank > 1) {
    return ClaimResult::Declined("scale of rank " + std::to_string(inputs[1].rank) +
                                 "; CUDA normalises with a 1-D scale over the last axis");
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimReduce(const sdk::Node& node, int64_t opset, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0}, true));
  const bool axes_from_input = node.op_type() == "ReduceSum" ? opset >= 13 : opset >= 18;
  if (axes_from_input) {
    return ClaimResult::Declined(std::string(node.op_type()) + "-" + std::to_string(opset) +
                                 " takes its axes as an input; CUDA claims the attribute form");
  }
  const std::vector<int64_t> axes = node.AttrInts("axes");
  if (axes.size() != 1) {
    return ClaimResult::Declined(
        "reduction over " +
        (axes.empty() ? std::string("all axes") : std::to_string(axes.size()) + " axes") +
        "; CUDA reduces the last axis only");
  }
  return RequireLastAxis(axes[0], inputs[0].rank, node.op_type().data());
}

ClaimResult ClaimGather(const sdk::Node&, int64_t, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0, 1}, false));
  if (inputs[1].dtype != NXRT_DTYPE_INT32 && inputs[1].dtype != NXRT_DTYPE_INT64) {
    return ClaimResult::Declined("Gather indices are " + DtypeName(inputs[1].dtype));
  }
  if (inputs[0].rank < 1) return ClaimResult::Declined("Gather needs data of known rank");
  return ClaimResult::Claimed();
}

ClaimResult ClaimMovement(const sdk::Node&, int64_t, Inputs inputs) {
  return RequireTensors(inputs, {0}, false);
}

ClaimResult ClaimConcat(const sdk::Node&, int64_t, Inputs inputs) {
  if (inputs.empty()) return ClaimResult::Declined("Concat without inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {i}, false));
    NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, i));
  }
  if (inputs[0].rank < 1) return ClaimResult::Declined("Concat needs inputs of known rank");
  return ClaimResult::Claimed();
}

ClaimResult ClaimSlice(const sdk::Node& node, int64_t opset, Inputs inputs) {
  if (opset < 10)
    return ClaimResult::Declined("Slice before opset 10 keeps its bounds in attributes");
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0}, false));
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (Present(inputs, i) && !node.input_is_constant(i)) {
      return ClaimResult::Declined(
          "Slice input " + std::to_string(i) +
          " is computed; CUDA needs constant bounds to avoid a device sync");
    }
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimCast(const sdk::Node& node, int64_t, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0}, false));
  const auto to = static_cast<nxrt_dtype>(node.AttrInt("to", NXRT_DTYPE_UNDEFINED));
  if (!IsCastable(inputs[0].dtype) || !IsCastable(to)) {
    return ClaimResult::Declined("Cast from " + DtypeName(inputs[0].dtype) + " to " +
                                 DtypeName(to) +
                                 "; CUDA casts among float32, float16, bfloat16, int32, int64");
  }
  return ClaimResult::Claimed();
}

// com.microsoft GroupQueryAttention inputs.
enum GqaInput : size_t {
  kGqaQuery = 0,
  kGqaKey = 1,
  kGqaValue = 2,
  kGqaPastKey = 3,
  kGqaPastValue = 4,
  kGqaSeqlensK = 5,
  kGqaTotalSequenceLength = 6,
  kGqaCosCache = 7,
  kGqaSinCache = 8,
  kGqaPositionIds = 9,
};

ClaimResult ClaimGroupQueryAttention(const sdk::Node& node, int64_t, Inputs inputs) {
  const std::string op = "GroupQueryAttention '" + std::string(node.name()) + "'";
  const int64_t heads = node.AttrInt("num_heads", 0);
  const int64_t kv_heads = node.AttrInt("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0) {
    return ClaimResult::Declined(op + ": num_heads must be a positive multiple of kv_num_heads");
  }
  if (!Present(inputs, kGqaKey) || !Present(inputs, kGqaValue)) {
    return ClaimResult::Declined(op +
                                 ": packed QKV is not implemented on CUDA; give key and value");
  }
  for (size_t i :
       {kGqaQuery, kGqaKey, kGqaValue, kGqaPastKey, kGqaPastValue, kGqaCosCache, kGqaSinCache}) {
    if (i != kGqaQuery && !Present(inputs, i)) continue;
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {i}, true));
    if (inputs[i].dtype != NXRT_DTYPE_FLOAT32) {
      return ClaimResult::Declined(op + ": input " + std::to_string(i) + " is " +
                                   DtypeName(inputs[i].dtype) +
                                   "; CUDA GroupQueryAttention computes float32 only");
    }
  }
  if (Present(inputs, kGqaPastKey) != Present(inputs, kGqaPastValue)) {
    return ClaimResult::Declined(op + ": past_key and past_value must be given together");
  }
  for (size_t i : {kGqaSeqlensK, kGqaTotalSequenceLength}) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {i}, false));
    if (inputs[i].dtype != NXRT_DTYPE_INT32) {
      return ClaimResult::Declined(op + ": input " + std::to_string(i) + " must be int32");
    }
  }
  for (size_t i = kGqaPositionIds; i < inputs.size(); ++i) {
    if (Present(inputs, i)) {
      return ClaimResult::Declined(
          op + ": input " + std::to_string(i) +
          " (position_ids, attention_bias, head_sink or later) is not implemented on CUDA");
    }
  }
  const nxrt_value_info& query = inputs[kGqaQuery];
  if (query.rank != 3) return ClaimResult::Declined(op + ": query must be rank 3");
  if (query.dims[2].value > 0 && query.dims[2].value / heads > kGqaMaxDepth) {
    return ClaimResult::Declined(op + ": head size above " + std::to_string(kGqaMaxDepth) +
                                 " is not implemented on CUDA");
  }
  if (Present(inputs, kGqaPastKey) && inputs[kGqaPastKey].rank == 4 &&
      inputs[kGqaPastKey].dims[2].value > kGqaMaxCapacity) {
    return ClaimResult::Declined(op + ": a KV cache above " + std::to_string(kGqaMaxCapacity) +
                                 " rows is not implemented on CUDA");
  }
  if (node.AttrInt("do_rotary", 0) == 1 &&
      (!Present(inputs, kGqaCosCache) || !Present(inputs, kGqaSinCache))) {
    return ClaimResult::Declined(op + ": do_rotary=1 needs cos_cache and sin_cache inputs");
  }
  if (node.output_count() > 3 && !node.output_name(3).value_or("").empty()) {
    return ClaimResult::Declined(op + ": output 3 (output_qk) is not produced on CUDA");
  }
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (i >= node.output_count() || node.output_name(i).value_or("").empty()) {
      return ClaimResult::Declined(op + ": present_key and present_value outputs are required");
    }
  }
  if (node.AttrFloat("softcap", 0.0f) != 0.0f) {
    return ClaimResult::Declined(op + ": softcap is not implemented on CUDA");
  }
  if (node.AttrInt("local_window_size", -1) != -1) {
    return ClaimResult::Declined(op + ": local_window_size is not implemented on CUDA");
  }
  for (const char* attr :
       {"smooth_softmax", "qk_output", "sliding_window_cache", "kv_cache_bit_width"}) {
    if (node.AttrInt(attr, 0) != 0) {
      return ClaimResult::Declined(op + ": attribute " + attr + " is not implemented on CUDA");
    }
  }
  if (node.AttrInt("causal", 1) != 1) {
    return ClaimResult::Declined(op + ": causal=0 is not implemented on CUDA");
  }
  for (const char* attr : {"k_quant_type", "v_quant_type"}) {
    if (node.AttrString(attr, "NONE") != "NONE") {
      return ClaimResult::Declined(op + ": attribute " + attr +
                                   " (quantized KV cache) is not implemented on CUDA");
    }
  }
  return ClaimResult::Claimed();
}

const std::map<std::string, Rule, std::less<>>& Rules() {
  static const std::map<std::string, Rule, std::less<>> rules = {
      {"Relu", ClaimUnary},
      {"Sigmoid", ClaimUnary},
      {"Tanh", ClaimUnary},
      {"Neg", ClaimUnary},
      {"Exp", ClaimUnary},
      {"Sqrt", ClaimUnary},
      {"Erf", ClaimUnary},
      {"Gelu", ClaimGelu},
      {"Add", ClaimBinary},
      {"Sub", ClaimBinary},
      {"Mul", ClaimBinary},
      {"Div", ClaimBinary},
      {"Pow", ClaimBinary},
      {"MatMul", ClaimMatMul},
      {"Gemm", ClaimGemm},
      {"Softmax", ClaimSoftmax},
      {"LayerNormalization",
       [](const sdk::Node& n, int64_t, Inputs in) { return ClaimNormalization(n, in, true); }},
      {"SimplifiedLayerNormalization",
       [](const sdk::Node& n, int64_t, Inputs in) { return ClaimNormalization(n, in, false); }},
      {"RMSNormalization",
       [](const sdk::Node& n, int64_t, Inputs in) { return ClaimNormalization(n, in, false); }},
      {"ReduceMean", ClaimReduce},
      {"ReduceSum", ClaimReduce},
      {"Gather", ClaimGather},
      {"Identity", ClaimMovement},
      {"Reshape", ClaimMovement},
      {"Squeeze", ClaimMovement},
      {"Unsqueeze", ClaimMovement},
      {"Flatten", ClaimMovement},
      {"Transpose", ClaimMovement},
      {"Concat", ClaimConcat},
      {"Slice", ClaimSlice},
      {"Cast", ClaimCast},
  };
  return rules;
}

// Ops of the com.microsoft domain.
const std::map<std::string, Rule, std::less<>>& MicrosoftRules() {
  static const std::map<std::string, Rule, std::less<>> rules = {
      {"GroupQueryAttention", ClaimGroupQueryAttention},
  };
  return rules;
}

}  // namespace

sdk::ClaimResult ClaimOnCuda(const sdk::Node& node, int64_t opset,
                             std::span<const nxrt_value_info> inputs,
                             std::span<const nxrt_layout> layouts) {
  const std::string_view domain = node.domain();
  if (!domain.empty() && domain != "com.microsoft") {
    return ClaimResult::Declined("domain '" + std::string(domain) + "' has no CUDA kernels");
  }
  const auto& rules = domain.empty() ? Rules() : MicrosoftRules();
  const auto rule = rules.find(node.op_type());
  if (rule == rules.end()) {
    return ClaimResult::Declined((domain.empty() ? "" : std::string(domain) + " ") +
                                 std::string(node.op_type()) + " has no CUDA kernel");
  }
  for (nxrt_layout layout : layouts) {
    if (layout != NXRT_LAYOUT_CONTIGUOUS) {
      return ClaimResult::Declined("CUDA kernels read contiguous inputs only");
    }
  }
  return rule->second(node, opset, inputs);
}

std::vector<std::string_view> CudaOpTypes() {
  std::vector<std::string_view> names;
  for (const auto& entry : Rules()) names.push_back(entry.first);
  return names;
}

}  // namespace nxrt::cuda
