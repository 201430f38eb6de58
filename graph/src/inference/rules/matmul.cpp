// Matrix products: MatMul (and its integer and quantized forms), Gemm and
// Einsum. Batch dims, Gemm's C and Einsum's ellipsis broadcast through the
// BroadcastDim chokepoint.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

// Contracted extents must agree; two different statics prove the model wrong.
Status CheckContraction(NodeContext& ctx, Dim a, Dim b, const Shape& sa, const Shape& sb) {
  if (a.is_static() && b.is_static() && a.extent() != b.extent()) {
    return ctx.ModelError("contracted extents differ: " + ctx.ShapeText(sa) + " x " +
                          ctx.ShapeText(sb) + "; fix the weight or the input shape");
  }
  return Status::Ok();
}

// Swaps the last two dims (a no-op below rank 2).
Shape Transposed(Shape s) {
  if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

Status MatMulShape(NodeContext& ctx, DataType dtype, size_t lhs, size_t rhs,
                   bool transpose_a = false, bool transpose_b = false) {
  ctx.SetOutputDtype(0, dtype);
  const Shape* a_in = ctx.input_shape(lhs);
  const Shape* b_in = ctx.input_shape(rhs);
  if (a_in == nullptr || b_in == nullptr) return ctx.Unknown("an operand has unknown rank");
  if (a_in->empty() || b_in->empty()) return ctx.ModelError("MatMul operands must not be scalars");
  Shape a = transpose_a ? Transposed(*a_in) : *a_in;
  Shape b = transpose_b ? Transposed(*b_in) : *b_in;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim::Static(1));
  if (b_vector) b.push_back(Dim::Static(1));
  NXRT_RETURN_IF_ERROR(CheckContraction(ctx, a.back(), b[b.size() - 2], *a_in, *b_in));
  Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  NXRT_ASSIGN_OR_RETURN(Shape out, ctx.BroadcastShapes(a_batch, b_batch));
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status MatMul(NodeContext& ctx) {
  return MatMulShape(ctx, ctx.input_dtype(0), 0, 1);
}
Status MatMulInteger(NodeContext& ctx) {
  return MatMulShape(ctx, DataType::kInt32, 0, 1);
}
Status MatMulIntegerToFloat(NodeContext& ctx) {
  return MatMulShape(ctx, ctx.input_dtype(2), 0, 1);
}
Status QLinearMatMul(NodeContext& ctx) {
  return MatMulShape(ctx, ctx.input_dtype(7), 0, 3);
}
Status FusedMatMul(NodeContext& ctx) {
  return MatMulShape(ctx, ctx.input_dtype(0), 0, 1, ctx.Int("transA", 0) != 0,
                     ctx.Int("transB", 0) != 0);
}

// Gemm's shape of A (input `a`), B (input `b`) and C (input `c`), in `dtype`.
Status GemmShape(NodeContext& ctx, DataType dtype, size_t a_index, size_t b_index, size_t c_index) {
  ctx.SetOutputDtype(0, dtype);
  const Shape* a = ctx.input_shape(a_index);
  const Shape* b = ctx.input_shape(b_index);
  if (a == nullptr || b == nullptr) return ctx.Unknown("an operand has unknown rank");
  if (a->size() != 2 || b->size() != 2) return ctx.ModelError("Gemm operands must be matrices");
  const bool ta = ctx.Int("transA", 0) != 0, tb = ctx.Int("transB", 0) != 0;
  Dim m = (*a)[ta ? 1 : 0], ka = (*a)[ta ? 0 : 1];
  Dim kb = (*b)[tb ? 1 : 0], n = (*b)[tb ? 0 : 1];
  NXRT_RETURN_IF_ERROR(CheckContraction(ctx, ka, kb, *a, *b));
  Shape out{m, n};
  if (const Shape* c = ctx.has_input(c_index) ? ctx.input_shape(c_index) : nullptr) {
    NXRT_ASSIGN_OR_RETURN(Shape broadcast, ctx.BroadcastShapes(out, *c));
    if (broadcast.size() != 2) return ctx.ModelError("Gemm C must broadcast to [M, N]");
    out = broadcast;
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status Gemm(NodeContext& ctx) {
  return GemmShape(ctx, ctx.input_dtype(0), 0, 1, 2);
}

// com.microsoft QGemm: A is input 0, B input 3, C input 6; 8-bit out with a
// y_zero_point (input 8), float otherwise.
Status QGemm(NodeContext& ctx) {
  return GemmShape(ctx, ctx.has_input(8) ? ctx.input_dtype(8) : DataType::kFloat32, 0, 3, 6);
}

std::string StripSpaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += c;
  }
  return out;
}

std::vector<std::string> SplitTerms(const std::string& s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == ',')
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

Status Einsum(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const std::string equation = StripSpaces(ctx.String("equation", ""));
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms = SplitTerms(equation.substr(0, arrow));
  if (terms.size() != ctx.num_inputs()) return ctx.ModelError("equation does not match inputs");
  std::map<char, Dim> letters;
  std::map<char, int> counts;
  std::optional<Shape> ellipsis;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape* shape = ctx.input_shape(i);
    if (shape == nullptr) return ctx.Unknown("an operand has unknown rank");
    std::string term = terms[i];
    const size_t dots = term.find("...");
    size_t named = term.size() - (dots == std::string::npos ? 0 : 3);
    if (named > shape->size()) return ctx.ModelError("operand rank below the equation's");
    size_t ell_rank = dots == std::string::npos ? 0 : shape->size() - named;
    if (dots == std::string::npos && named != shape->size()) {
      return ctx.ModelError("operand " + std::to_string(i) + " rank does not match the equation");
    }
    size_t axis = 0;
    for (size_t k = 0; k < term.size(); ++k) {
      if (term[k] == '.') {
        Shape part(shape->begin() + axis, shape->begin() + axis + ell_rank);
        if (!ellipsis) {
          ellipsis = part;
        } else {
          NXRT_ASSIGN_OR_RETURN(ellipsis, ctx.BroadcastShapes(*ellipsis, part));
        }
        axis += ell_rank;
        k += 2;
        continue;
      }
      Dim d = (*shape)[axis++];
      auto [it, fresh] = letters.emplace(term[k], d);
      if (!fresh) {
        NXRT_ASSIGN_OR_RETURN(it->second, ctx.Broadcast(it->second, d));
      }
      ++counts[term[k]];
    }
  }
  Shape out;
  if (arrow == std::string::npos) {
    if (ellipsis) out = *ellipsis;
    for (const auto& [letter, count] : counts) {
      if (count == 1) out.push_back(letters.at(letter));
    }
  } else {
    const std::string rhs = equation.substr(arrow + 2);
    for (size_t k = 0; k < rhs.size(); ++k) {
      if (rhs[k] == '.') {
        if (ellipsis) out.insert(out.end(), ellipsis->begin(), ellipsis->end());
        k += 2;
        continue;
      }
      auto it = letters.find(rhs[k]);
      if (it == letters.end()) return ctx.ModelError("output letter missing from the inputs");
      out.push_back(it->second);
    }
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// com.microsoft MatMulNBits: A [..., K] times a block-quantized [N, K] weight
// gives [..., N], with N an attribute.
Status MatMulNBits(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* a = ctx.input_shape(0);
  if (a == nullptr || a->empty()) return ctx.Unknown("input A has unknown rank");
  const int64_t n = ctx.Int("N", 0);
  const int64_t k = ctx.Int("K", 0);
  if (n <= 0) return ctx.ModelError("attribute N must be positive");
  if (k > 0 && a->back().is_static() && a->back().extent() != k) {
    return ctx.ModelError("A " + ctx.ShapeText(*a) + " does not end in K=" + std::to_string(k));
  }
  Shape out = *a;
  out.back() = Dim::Static(n);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

}  // namespace

void AddMatMulRules(RuleTable& t) {
  t.Add("com.microsoft", "MatMulNBits", MatMulNBits);
  t.Add("com.microsoft", "FusedMatMul", FusedMatMul);
  t.Add("", "MatMul", MatMul);
  t.Add("", "MatMulInteger", MatMulInteger);
  t.Add("com.microsoft", "MatMulIntegerToFloat", MatMulIntegerToFloat);
  t.Add("", "QLinearMatMul", QLinearMatMul);
  t.Add("", "Gemm", Gemm);
  t.Add("com.microsoft", "QGemm", QGemm);
  t.Add("", "Einsum", Einsum);
}

}  // namespace nxrt::graph::inference
