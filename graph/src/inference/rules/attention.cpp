// Attention ops whose KV-cache axes the capture classifier tracks:
// com.microsoft GroupQueryAttention, pkg.nxrt IndexShare (same layout),
// the default-domain Attention (opset 23, 3-D and 4-D forms) and
// CompressedSparseAttention. The present sequence extent is derived as
// past_seq + new_seq through Lower, so it records where it came from.
#include <algorithm>
#include <vector>

#include "inference/body_inference.hpp"
#include "inference/dim_algebra.hpp"
#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

std::optional<Dim> Quotient(NodeContext& ctx, Dim whole, int64_t parts) {
  const Dim divisor = Dim::Static(parts);
  return ExactQuotient(ctx.symbols(), std::span<const Dim>(&whole, 1),
                       std::span<const Dim>(&divisor, 1));
}

// The present sequence extent of a GQA-layout op, after onnxruntime's
// contrib-op inference. Past and present are one buffer (present keeps the
// past extent) with a sliding-window cache, with a fixed-capacity (static)
// past, or when the model declares present with the past's sequence symbol;
// otherwise present grows to past + new, derived so that it records both.
// Without a past, present holds total_sequence_length when its value is
// known, else the new tokens.
Dim PresentSequence(NodeContext& ctx, const Shape* past, size_t present_output, Dim new_seq) {
  std::optional<Dim> total;
  if (const Elements* e = ctx.input_elements(6); e != nullptr && e->size() == 1 && (*e)[0]) {
    total = ctx.symbols().AsExtent(*(*e)[0]);
  }
  if (past == nullptr || past->size() != 4) return total.value_or(new_seq);
  const Dim past_seq = (*past)[2];
  if (ctx.Int("sliding_window_cache", 0) == 1) return past_seq;
  if (past_seq.is_static()) {
    if (total && total->is_static())
      return Dim::Static(std::max(past_seq.extent(), total->extent()));
    if (past_seq.extent() == 0) return total.value_or(new_seq);
    return past_seq;
  }
  if (const Shape* present = ctx.declared_output_shape(present_output);
      present != nullptr && present->size() == 4 && (*present)[2] == past_seq) {
    return past_seq;
  }
  return ctx.symbols().Add(past_seq, new_seq);
}

Status GroupQueryAttention(NodeContext& ctx) {
  // A quantized cache keeps its own element type.
  const DataType cache_type = ctx.has_input(3) ? ctx.input_dtype(3) : ctx.input_dtype(0);
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  ctx.SetOutputDtype(1, cache_type);
  ctx.SetOutputDtype(2, cache_type);
  const Shape* query = ctx.input_shape(0);
  const Shape* key = ctx.input_shape(1);
  const Shape* past = ctx.input_shape(3);
  if (query == nullptr || query->size() != 3) return ctx.Unknown("query is not rank 3");
  const int64_t heads = ctx.Int("num_heads", 0);
  const int64_t kv_heads = ctx.Int("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0) return ctx.ModelError("num_heads and kv_num_heads must be set");
  const Dim batch = (*query)[0], seq = (*query)[1], hidden = (*query)[2];
  const bool packed = !ctx.has_input(1);
  std::optional<Dim> head_size;
  if (past != nullptr && past->size() == 4)
    head_size = (*past)[3];
  else
    head_size = Quotient(ctx, hidden, packed ? heads + 2 * kv_heads : heads);
  if (!head_size) return ctx.ModelError("query hidden " + ctx.ShapeText(*query) + " not divisible");
  const Dim out_hidden = packed ? ctx.symbols().Mul(*head_size, Dim::Static(heads)) : hidden;
  ctx.SetOutput(0, ctx.input_dtype(0), {batch, seq, out_hidden});
  const Dim new_seq = key != nullptr && key->size() >= 2 ? (*key)[1] : seq;
  const Dim present_seq = PresentSequence(ctx, past, 1, new_seq);
  const Shape present{batch, Dim::Static(kv_heads), present_seq, *head_size};
  ctx.SetOutput(1, cache_type, present);
  ctx.SetOutput(2, cache_type, present);
  return Status::Ok();
}

Status Attention(NodeContext& ctx) {
  for (size_t i = 0; i < 4; ++i) ctx.SetOutputDtype(i, ctx.input_dtype(0));
  const Shape* q = ctx.input_shape(0);
  const Shape* k = ctx.input_shape(1);
  const Shape* v = ctx.input_shape(2);
  const Shape* past_key = ctx.input_shape(4);
  if (q == nullptr || k == nullptr || v == nullptr) return ctx.Unknown("Q, K or V rank unknown");
  if (q->size() != k->size() || q->size() != v->size() || (q->size() != 3 && q->size() != 4)) {
    return ctx.ModelError("Q, K and V must all be rank 3 or all rank 4");
  }
  const Dim batch = (*q)[0];
  Dim q_heads = Dim::Static(0), kv_heads = Dim::Static(0), q_seq = Dim::Static(0);
  Dim kv_seq = Dim::Static(0), head_size = Dim::Static(0), v_head_size = Dim::Static(0);
  if (q->size() == 4) {
    q_heads = (*q)[1], q_seq = (*q)[2], kv_heads = (*k)[1], kv_seq = (*k)[2];
    head_size = (*k)[3], v_head_size = (*v)[3];
  } else {
    const int64_t qh = ctx.Int("q_num_heads", 0), kvh = ctx.Int("kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0) return ctx.ModelError("3-D Attention needs q_num_heads, kv_num_heads");
    q_heads = Dim::Static(qh), kv_heads = Dim::Static(kvh), q_seq = (*q)[1], kv_seq = (*k)[1];
    auto hs = Quotient(ctx, (*k)[2], kvh);
    auto vhs = Quotient(ctx, (*v)[2], kvh);
    if (!hs || !vhs) return ctx.ModelError("K or V hidden size not divisible by kv_num_heads");
    head_size = *hs, v_head_size = *vhs;
  }
  SymbolInterner& s = ctx.symbols();
  if (q->size() == 4)
    ctx.SetOutput(0, ctx.input_dtype(0), {batch, q_heads, q_seq, v_head_size});
  else
    ctx.SetOutput(0, ctx.input_dtype(0), {batch, q_seq, s.Mul(q_heads, v_head_size)});
  const Dim total =
      past_key != nullptr && past_key->size() == 4 ? s.Add((*past_key)[2], kv_seq) : kv_seq;
  ctx.SetOutput(1, ctx.input_dtype(0), {batch, kv_heads, total, head_size});
  ctx.SetOutput(2, ctx.input_dtype(0), {batch, kv_heads, total, v_head_size});
  ctx.SetOutput(3, ctx.input_dtype(0), {batch, q_heads, q_seq, total});
  return Status::Ok();
}

// CompressedSparseAttention. Output 0 has the query's shape; outputs 1 and 3
// are cache records [query[0], records, width] with records = ceil(total /
// ratio) from the total_sequence_length input (index 6) when its value is
// known, else minted, and width the last dim of key (1) or value (3); output
// 5 is [query[0], index_heads, query_seq, selections], where selections is a
// fresh symbol when ratio is 4 (it grows with the sequence) and the
// `selections` attribute otherwise.
Status CompressedSparseAttention(NodeContext& ctx) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ctx.SetOutputDtype(i, i == 5 ? DataType::kInt32 : ctx.input_dtype(0));
  }
  const Shape* query = ctx.input_shape(0);
  if (query == nullptr || query->size() < 2) return ctx.Unknown("query rank unknown");
  ctx.SetOutput(0, ctx.input_dtype(0), *query);
  SymbolInterner& s = ctx.symbols();
  const int64_t ratio = ctx.Int("ratio", 1);
  if (ratio <= 0) return ctx.ModelError("ratio must be positive");
  Dim records = s.Mint("records");
  if (const Elements* e = ctx.input_elements(6); e != nullptr && e->size() == 1 && (*e)[0]) {
    records = s.CeilDiv(*(*e)[0], Dim::Static(ratio));
  }
  for (size_t out : {size_t{1}, size_t{3}}) {
    const Shape* source = ctx.input_shape(out == 1 ? 1 : 2);
    Dim width = source != nullptr && !source->empty() ? source->back() : s.Mint("width");
    ctx.SetOutput(out, ctx.input_dtype(0), {(*query)[0], records, width});
  }
  const Dim index_heads = Dim::Static(ctx.Int("index_heads", 1));
  const Dim selections = ratio == 4 ? s.Mint("selections") : Dim::Static(ctx.Int("selections", 1));
  ctx.SetOutput(5, DataType::kInt32, {(*query)[0], index_heads, (*query)[1], selections});
  return Status::Ok();
}

// ai.onnx.preview FlexAttention: Y [batch, q_heads, q_len, v_head_size] in
// Q's type, from Q [batch, q_heads, q_len, head_size], K [.., kv_len, ..]
// and V [..., v_head_size]. The score_mod and prob_mod bodies each take and
// give the scores [batch, q_heads, q_len, kv_len] in the softmax's type
// (softmax_precision, else float, double for double inputs).
Status FlexAttention(NodeContext& ctx) {
  const Shape* query = ctx.input_shape(0);
  const Shape* key = ctx.input_shape(1);
  const Shape* value = ctx.input_shape(2);
  const DataType dtype = ctx.input_dtype(0);
  const DataType softmax =
      ctx.attr("softmax_precision") != nullptr
          ? static_cast<DataType>(ctx.Int("softmax_precision", 0))
          : (dtype == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32);
  std::optional<Shape> scores;
  if (query != nullptr && key != nullptr && query->size() == 4 && key->size() == 4) {
    scores = Shape{(*query)[0], (*query)[1], (*query)[2], (*key)[2]};
  }
  Status bodies = Status::Ok();
  for (const char* name : {"score_mod", "prob_mod"}) {
    Graph* body = Body(ctx, name);
    if (body == nullptr) continue;
    SetInput(ctx, *body, 0, softmax, scores);
    Status inferred = InferBody(ctx, *body);
    if (bodies.ok() && !inferred.ok()) bodies = inferred.WithContext(name);
  }
  if (query == nullptr || value == nullptr) return ctx.Unknown("Q or V rank unknown");
  if (query->size() != 4 || value->size() != 4) return ctx.ModelError("Q and V must have rank 4");
  ctx.SetOutput(0, dtype, {(*query)[0], (*query)[1], (*query)[2], (*value)[3]});
  return bodies.ok() ? Status::Ok() : ctx.Unknown(bodies.message());
}

}  // namespace

void AddAttentionRules(RuleTable& t) {
  t.Add("ai.onnx.preview", "FlexAttention", FlexAttention);
  t.Add("com.microsoft", "GroupQueryAttention", GroupQueryAttention);
  t.Add("pkg.nxrt", "IndexShare", GroupQueryAttention);
  t.Add("", "Attention", Attention);
  t.Add("pkg.nxrt", "CompressedSparseAttention", CompressedSparseAttention);
  t.Add("com.microsoft", "CompressedSparseAttention", CompressedSparseAttention);
}

}  // namespace nxrt::graph::inference
