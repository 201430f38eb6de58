#include "claim_rules.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "dtype.hpp"
#include "kernels/attention_limits.hpp"
#include "window_geometry.hpp"

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
  if (!IsDeviceWord(info.dtype)) {
    return "input " + std::to_string(index) + " is " + DtypeName(info.dtype) +
           ", which the CUDA kernels here do not move (they move 1-, 2-, 4- and 8-byte elements)";
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

bool IsInteger(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_INT32 || dtype == NXRT_DTYPE_INT64;
}

// Float types for all; int32 and int64 for Add, Sub and Mul, which are exact
// in integers (integer Div and Pow have no CUDA kernel).
ClaimResult ClaimBinary(const sdk::Node& node, int64_t, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0, 1}, false));
  NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 1));
  const nxrt_dtype dtype = inputs[0].dtype;
  const std::string_view op = node.op_type();
  if (IsComputeFloat(dtype)) return ClaimResult::Claimed();
  if (IsInteger(dtype) && (op == "Add" || op == "Sub" || op == "Mul")) {
    return ClaimResult::Claimed();
  }
  return ClaimResult::Declined(std::string(op) + " over " + DtypeName(dtype) +
                               "; CUDA computes float32, float16 and bfloat16 here, and int32 "
                               "and int64 for Add, Sub and Mul");
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

// Integer ReduceSum reduces any axes; given as an input they must be a
// constant, read when the kernel is prepared.
ClaimResult ClaimIntegerReduceSum(const sdk::Node& node, int64_t opset, Inputs inputs) {
  if (opset >= 13 && Present(inputs, 1) && !node.input_is_constant(1)) {
    return ClaimResult::Declined(
        "ReduceSum axes are computed; CUDA needs constant axes to avoid a device sync");
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimReduce(const sdk::Node& node, int64_t opset, Inputs inputs) {
  if (node.op_type() == "ReduceSum" && Present(inputs, 0) && IsInteger(inputs[0].dtype)) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {0}, false));
    return ClaimIntegerReduceSum(node, opset, inputs);
  }
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

ClaimResult ClaimSplit(const sdk::Node& node, int64_t opset, Inputs inputs) {
  if (opset < 2) return ClaimResult::Declined("Split-1 is not implemented on CUDA (opset 2 on is)");
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0}, false));
  if (opset >= 13 && Present(inputs, 1) && !node.input_is_constant(1)) {
    return ClaimResult::Declined(
        "Split sizes are computed; CUDA needs constant sizes to avoid a device sync");
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    if (node.output_name(i).value_or("").empty()) {
      return ClaimResult::Declined("Split output " + std::to_string(i) +
                                   " is omitted; CUDA writes every part");
    }
  }
  return ClaimResult::Claimed();
}

// Shape reads only the input's extents, which the kernel knows when made.
ClaimResult ClaimShape(const sdk::Node&, int64_t, Inputs inputs) {
  return RequireTensors(inputs, {0}, false);
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
    if (inputs[i].dtype != inputs[kGqaQuery].dtype) {
      return ClaimResult::Declined(op + ": input " + std::to_string(i) + " is " +
                                   DtypeName(inputs[i].dtype) + " but query is " +
                                   DtypeName(inputs[kGqaQuery].dtype) +
                                   "; CUDA GroupQueryAttention needs one float type throughout");
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
  if (query.dims[2].value > 0 && query.dims[2].value / heads > kAttentionMaxDepth) {
    return ClaimResult::Declined(op + ": head size above " + std::to_string(kAttentionMaxDepth) +
                                 " is not implemented on CUDA");
  }
  if (Present(inputs, kGqaPastKey) && inputs[kGqaPastKey].rank == 4 &&
      inputs[kGqaPastKey].dims[2].value > kAttentionMaxKeys) {
    return ClaimResult::Declined(op + ": a KV cache above " + std::to_string(kAttentionMaxKeys) +
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

// RotaryEmbedding: the default domain's (opset 23: X, cos_cache, sin_cache,
// position_ids) or com.microsoft's (input, position_ids, cos_cache,
// sin_cache).
ClaimResult ClaimRotaryEmbedding(const sdk::Node& node, int64_t opset, Inputs inputs) {
  const bool contrib = node.domain() == "com.microsoft";
  const std::string op = "RotaryEmbedding '" + std::string(node.name()) + "'";
  if (!contrib && opset < 23) {
    return ClaimResult::Declined(op + ": the default domain has RotaryEmbedding from opset 23");
  }
  const size_t cos = contrib ? 2 : 1;
  const size_t positions = contrib ? 1 : 3;
  for (size_t i : {size_t{0}, cos, cos + 1}) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {i}, true));
    NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, i));
  }
  const int64_t rank = inputs[0].rank;
  if (rank != 3 && rank != 4) {
    return ClaimResult::Declined(op + ": input must have rank 3 or 4");
  }
  if (Present(inputs, positions)) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {positions}, false));
    if (inputs[positions].dtype != NXRT_DTYPE_INT64) {
      return ClaimResult::Declined(op + ": position_ids must be int64");
    }
  } else if (contrib) {
    return ClaimResult::Declined(op + ": com.microsoft RotaryEmbedding needs position_ids");
  }
  if (!contrib && rank == 3 && node.AttrInt("num_heads", 0) <= 0) {
    return ClaimResult::Declined(op + ": a rank-3 input needs the num_heads attribute");
  }
  if (contrib && node.AttrInt("is_packed_batching", 0) != 0) {
    return ClaimResult::Declined(op + ": is_packed_batching=1 is not implemented on CUDA");
  }
  if (contrib && node.AttrFloat("scale", 1.0f) != 1.0f) {
    return ClaimResult::Declined(op + ": scale other than 1 is not implemented on CUDA");
  }
  return ClaimResult::Claimed();
}

// Default-domain Attention inputs (opset 23; nonpad_kv_seqlen from 24).
enum AttentionInput : size_t {
  kAttnQ = 0,
  kAttnK = 1,
  kAttnV = 2,
  kAttnMask = 3,
  kAttnPastKey = 4,
  kAttnPastValue = 5,
  kAttnNonpadKvSeqlen = 6,
};

// Whether static extents exceed `limit`; symbolic ones are checked when the
// kernel is made.
bool StaticAbove(const nxrt_value_info& info, int64_t axis, int64_t limit) {
  return info.rank > axis && info.dims[axis].value > limit;
}

ClaimResult ClaimAttention(const sdk::Node& node, int64_t opset, Inputs inputs) {
  const std::string op = "Attention '" + std::string(node.name()) + "'";
  if (opset < 23 || opset > 24) {
    return ClaimResult::Declined(op + ": Attention-" + std::to_string(opset) +
                                 " is not implemented on CUDA (opsets 23 and 24 are)");
  }
  for (size_t i : {kAttnQ, kAttnK, kAttnV, kAttnPastKey, kAttnPastValue}) {
    if (i > kAttnV && !Present(inputs, i)) continue;
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {i}, true));
    NXRT_CLAIM_CHECK(RequireSameDtype(inputs, kAttnQ, i));
  }
  if (Present(inputs, kAttnPastKey) != Present(inputs, kAttnPastValue)) {
    return ClaimResult::Declined(op + ": past_key and past_value must be given together");
  }
  const int64_t rank = inputs[kAttnQ].rank;
  if ((rank != 3 && rank != 4) || inputs[kAttnK].rank != rank || inputs[kAttnV].rank != rank) {
    return ClaimResult::Declined(op + ": Q, K and V must all be rank 3 or all rank 4");
  }
  if (Present(inputs, kAttnMask)) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {kAttnMask}, false));
    const nxrt_dtype mask = inputs[kAttnMask].dtype;
    if (mask != NXRT_DTYPE_BOOL && !IsComputeFloat(mask)) {
      return ClaimResult::Declined(op + ": attn_mask is " + DtypeName(mask) +
                                   "; CUDA takes bool, float32, float16 or bfloat16 masks");
    }
    if (inputs[kAttnMask].rank > 4) {
      return ClaimResult::Declined(op + ": attn_mask has more than 4 dimensions");
    }
  }
  if (Present(inputs, kAttnNonpadKvSeqlen)) {
    return ClaimResult::Declined(op + ": nonpad_kv_seqlen is not implemented on CUDA");
  }
  for (const char* attr : {"left_window_size", "right_window_size"}) {
    if (node.AttrInt(attr, -1) != -1) {
      return ClaimResult::Declined(op + ": attribute " + attr + " is not implemented on CUDA");
    }
  }
  const int64_t mode = node.AttrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) {
    return ClaimResult::Declined(op + ": qk_matmul_output_mode " + std::to_string(mode) +
                                 " is not defined (0 to 3)");
  }
  if (node.output_count() > 3 && !node.output_name(3).value_or("").empty()) {
    return ClaimResult::Declined(op + ": output 3 (qk_matmul_output) is not produced on CUDA");
  }
  if (rank == 3) {
    const int64_t heads = node.AttrInt("q_num_heads", 0);
    const int64_t kv_heads = node.AttrInt("kv_num_heads", 0);
    if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0) {
      return ClaimResult::Declined(op +
                                   ": rank-3 inputs need q_num_heads a positive multiple of "
                                   "kv_num_heads");
    }
    if (inputs[kAttnQ].dims[2].value / heads > kAttentionMaxDepth ||
        inputs[kAttnV].dims[2].value / kv_heads > kAttentionMaxDepth) {
      return ClaimResult::Declined(op + ": head size above " + std::to_string(kAttentionMaxDepth) +
                                   " is not implemented on CUDA");
    }
  } else {
    const int64_t heads = inputs[kAttnQ].dims[1].value;
    const int64_t kv_heads = inputs[kAttnK].dims[1].value;
    if (heads > 0 && kv_heads > 0 && heads % kv_heads != 0) {
      return ClaimResult::Declined(op + ": the query head count is not a multiple of K's");
    }
    if (StaticAbove(inputs[kAttnQ], 3, kAttentionMaxDepth) ||
        StaticAbove(inputs[kAttnV], 3, kAttentionMaxDepth)) {
      return ClaimResult::Declined(op + ": head size above " + std::to_string(kAttentionMaxDepth) +
                                   " is not implemented on CUDA");
    }
  }
  if (StaticAbove(inputs[kAttnK], rank - 2, kAttentionMaxKeys) ||
      (Present(inputs, kAttnPastKey) && StaticAbove(inputs[kAttnPastKey], 2, kAttentionMaxKeys))) {
    return ClaimResult::Declined(op + ": more than " + std::to_string(kAttentionMaxKeys) +
                                 " keys is not implemented on CUDA");
  }
  return ClaimResult::Claimed();
}

// Conv and the pools run through cuDNN in float32 and float16 over NCHW with
// one or two spatial axes (global pools: any number).
ClaimResult RequireCudnnInput(const sdk::Node& node, Inputs inputs, bool any_spatial_rank) {
  const std::string op(node.op_type());
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0}, true));
  if (inputs[0].dtype == NXRT_DTYPE_BFLOAT16) {
    return ClaimResult::Declined(op +
                                 " in bfloat16 is not implemented on CUDA; cuDNN computes "
                                 "float32 and float16 here");
  }
  const int64_t rank = inputs[0].rank;
  if (rank < 0) return ClaimResult::Declined(op + " needs an input of known rank");
  if (rank < 3) return ClaimResult::Declined(op + " needs N, C and spatial axes");
  if (!any_spatial_rank && rank > 4) {
    return ClaimResult::Declined(op + " over " + std::to_string(rank - 2) +
                                 " spatial axes; CUDA handles 1 and 2");
  }
  return ClaimResult::Claimed();
}

ClaimResult RequireKnownAutoPad(const sdk::Node& node) {
  const std::string auto_pad = node.AttrString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return ClaimResult::Declined(std::string(node.op_type()) + " auto_pad='" + auto_pad +
                                 "' is not known");
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimConv(const sdk::Node& node, int64_t, Inputs inputs) {
  NXRT_CLAIM_CHECK(RequireCudnnInput(node, inputs, false));
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {1}, true));
  NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 1));
  if (Present(inputs, 2)) {
    NXRT_CLAIM_CHECK(RequireTensors(inputs, {2}, true));
    NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 0, 2));
  }
  if (inputs[1].rank >= 0 && inputs[1].rank != inputs[0].rank) {
    return ClaimResult::Declined("Conv weights of rank " + std::to_string(inputs[1].rank) +
                                 " for an input of rank " + std::to_string(inputs[0].rank));
  }
  return RequireKnownAutoPad(node);
}

// The spatial extents of X when all are static.
std::optional<std::vector<int64_t>> StaticSpatialDims(const nxrt_value_info& x) {
  std::vector<int64_t> dims;
  for (int64_t d = 2; d < x.rank; ++d) {
    if (x.dims[d].value < 0) return std::nullopt;
    dims.push_back(x.dims[d].value);
  }
  return dims;
}

// Whether cuDNN averages as ONNX does: decided exactly at static extents;
// at symbolic ones, only pads that are the same at every shape pass.
ClaimResult RequireCudnnAverage(const sdk::Node& node, const nxrt_value_info& x) {
  const bool include_pad = node.AttrInt("count_include_pad", 0) != 0;
  const WindowAttributes attributes = WindowAttributes::Read(node);
  if (const auto spatial = StaticSpatialDims(x)) {
    try {
      const std::vector<WindowAxis> axes =
          ResolveWindow(attributes, *spatial, attributes.kernel_shape, "AveragePool");
      if (auto problem = AverageWindowProblem(axes, include_pad)) {
        return ClaimResult::Declined("AveragePool " + *problem + " is not implemented on CUDA");
      }
    } catch (const sdk::Error& error) {
      return ClaimResult::Declined(error.what());
    }
    return ClaimResult::Claimed();
  }
  if (attributes.ceil_mode) {
    return ClaimResult::Declined(
        "AveragePool ceil_mode=1 at symbolic input extents is not "
        "implemented on CUDA");
  }
  if (include_pad) return ClaimResult::Claimed();
  const size_t half = attributes.pads.size() / 2;
  const bool symmetric = std::equal(attributes.pads.begin(), attributes.pads.begin() + half,
                                    attributes.pads.begin() + half, attributes.pads.end());
  if (attributes.auto_pad.starts_with("SAME") || !symmetric) {
    return ClaimResult::Declined(
        "AveragePool count_include_pad=0 with pads that may differ "
        "between the ends of an axis is not implemented on CUDA");
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimPool(const sdk::Node& node, int64_t, Inputs inputs) {
  const std::string op(node.op_type());
  NXRT_CLAIM_CHECK(RequireCudnnInput(node, inputs, false));
  NXRT_CLAIM_CHECK(RequireKnownAutoPad(node));
  if (node.AttrInts("kernel_shape").size() != static_cast<size_t>(inputs[0].rank - 2)) {
    return ClaimResult::Declined(op + " needs kernel_shape for each spatial axis");
  }
  for (int64_t dilation : node.AttrInts("dilations")) {
    if (dilation != 1) {
      return ClaimResult::Declined(op + " with dilations is not implemented on CUDA");
    }
  }
  if (op == "AveragePool") return RequireCudnnAverage(node, inputs[0]);
  // storage_order only orders the Indices, which are declined here.
  if (node.output_count() > 1 && !node.output_name(1).value_or("").empty()) {
    return ClaimResult::Declined("MaxPool output 1 (Indices) is not produced on CUDA");
  }
  return ClaimResult::Claimed();
}

ClaimResult ClaimGlobalPool(const sdk::Node& node, int64_t, Inputs inputs) {
  return RequireCudnnInput(node, inputs, true);
}

ClaimResult ClaimBatchNormalization(const sdk::Node& node, int64_t opset, Inputs inputs) {
  // Training normalises with the batch's own statistics and updates the
  // running ones; CUDA implements inference only.
  const bool training = opset >= 14 ? node.AttrInt("training_mode", 0) != 0
                        : opset < 7 ? node.AttrInt("is_test", 0) == 0
                                    : false;
  if (training) {
    return ClaimResult::Declined("BatchNormalization in training mode is not implemented on CUDA");
  }
  if (node.output_count() > 1 && !node.output_name(1).value_or("").empty()) {
    return ClaimResult::Declined(
        "BatchNormalization outputs 1 and up (running statistics, "
        "training mode) are not produced on CUDA");
  }
  if (opset < 9 && node.AttrInt("spatial", 1) == 0) {
    return ClaimResult::Declined("BatchNormalization spatial=0 is not implemented on CUDA");
  }
  NXRT_CLAIM_CHECK(RequireTensors(inputs, {0, 1, 2, 3, 4}, true));
  if (inputs[0].rank >= 0 && inputs[0].rank < 2) {
    return ClaimResult::Declined("BatchNormalization needs an input with N and C axes");
  }
  for (size_t i = 2; i < 5; ++i) NXRT_CLAIM_CHECK(RequireSameDtype(inputs, 1, i));
  if (inputs[1].dtype != inputs[0].dtype && inputs[1].dtype != NXRT_DTYPE_FLOAT32) {
    return ClaimResult::Declined("BatchNormalization parameters of " + DtypeName(inputs[1].dtype) +
                                 " for X of " + DtypeName(inputs[0].dtype) +
                                 "; CUDA takes parameters of X's type or float32");
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
      {"Split", ClaimSplit},
      {"Shape", ClaimShape},
      {"Cast", ClaimCast},
      {"RotaryEmbedding", ClaimRotaryEmbedding},
      {"Attention", ClaimAttention},
      {"Conv", ClaimConv},
      {"MaxPool", ClaimPool},
      {"AveragePool", ClaimPool},
      {"GlobalMaxPool", ClaimGlobalPool},
      {"GlobalAveragePool", ClaimGlobalPool},
      {"BatchNormalization", ClaimBatchNormalization},
  };
  return rules;
}

// Ops of the com.microsoft domain.
const std::map<std::string, Rule, std::less<>>& MicrosoftRules() {
  static const std::map<std::string, Rule, std::less<>> rules = {
      {"GroupQueryAttention", ClaimGroupQueryAttention},
      {"RotaryEmbedding", ClaimRotaryEmbedding},
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
