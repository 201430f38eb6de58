// com.microsoft MatMulNBits: Y[..., N] = A[..., K] x W^T with W [N, K]
// quantized in blocks along K (quantized/nbits_matrix.hpp), ONNX Runtime's
// weight-only form for decoders. The codes are read where the model keeps
// them, so every shape of the node streams the one copy.
//
// A single row (a decode step) takes one pass over the codes, widening each
// block in registers against the row (on AVX-512 four columns at a time,
// quantized/four_bit_avx512.hpp), its columns split into contiguous runs
// across the EP's threads; a few rows take one such pass per eight (per
// four without AVX-512). Many rows dequantize panels of columns into a
// per-thread buffer that oneDNN's sgemm multiplies. At accuracy_level 4,
// 4-bit codes with code zero points meet rows quantized to int8 per block
// (quantized/int8_row.hpp), as in ONNX Runtime: in integers for a few rows,
// widened back to float for the panels. Everything else computes in
// float32, which meets every level's minimum.
#include <algorithm>
#include <string>
#include <vector>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "onednn/sgemm.hpp"
#include "parallel_blocks.hpp"
#include "quantized/int8_row.hpp"
#include "quantized/nbits_matrix.hpp"

namespace nxrt::cpu {
namespace {

enum NBitsInput : size_t {
  kA = 0,
  kCodes = 1,
  kScales = 2,
  kZeroPoints = 3,
  kBlockIndex = 4,
  kBias = 5,
};

using NBitsFloatTypes = TypeList<float, Float16, BFloat16>;

// The least share of the codes, in weights, worth handing to another thread.
constexpr int64_t kWeightsPerThread = 64 * 1024;
// Below this many rows a product streams the codes once per eight rows (four
// for the rest); from it on, dequantized panels and oneDNN's product are
// faster. On AVX-512, one thread, 512x1536 codes: 8 rows 120 against 190 us
// for two passes of four, 16 rows 300-315 against 485 for the panels, 24
// rows 455 against 540-555, 32 rows alike; 256x768 codes: 16 rows 70-90
// against 105, 24 rows 133 against 123.
constexpr int64_t kStreamedRowsBelow = 24;
// Floats in one thread's panel of dequantized columns, a megabyte: wider
// panels measured no faster.
constexpr int64_t kPanelFloats = 256 * 1024;

int64_t RunStart(int64_t extent, int index, int count) {
  return extent * index / count;
}

class MatMulNBitsKernel : public CpuKernel {
 public:
  MatMulNBitsKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(true), name_(NodeText(node)), dtype_(shapes[kA].dtype) {
    w_.columns = node.AttrInt("N", 0);
    w_.depth = node.AttrInt("K", 0);
    w_.bits = static_cast<int>(node.AttrInt("bits", 4));
    w_.block = node.AttrInt("block_size", 0);
    w_.blocks_per_column = (w_.depth + w_.block - 1) / w_.block;
    // accuracy_level 4 allows int8 activations, which 4-bit codes multiply
    // exactly in integers; the other levels compute in float32.
    int8_rows_ =
        node.AttrInt("accuracy_level", 0) == 4 && w_.bits == 4 &&
        !(kBlockIndex < shapes.size() && shapes[kBlockIndex].dtype != NXRT_DTYPE_UNDEFINED);
    const int64_t n = w_.columns, blocks = w_.blocks_per_column;
    const std::string op = name_;
    RequireElements(shapes, kCodes, n * blocks * w_.BytesPerBlock(), op,
                    "B, [N, K / block_size, block_size * bits / 8]");
    RequireElements(shapes, kScales, n * blocks, op, "scales, N * K / block_size");
    if (kZeroPoints < shapes.size() && shapes[kZeroPoints].dtype == NXRT_DTYPE_UINT8) {
      RequireElements(shapes, kZeroPoints, n * ((blocks * w_.bits + 7) / 8), op,
                      "packed zero_points, N * ceil(K / block_size * bits / 8)");
    } else {
      RequireElements(shapes, kZeroPoints, n * blocks, op, "zero_points, N * K / block_size");
    }
    RequireElements(shapes, kBlockIndex, w_.depth, op, "g_idx, K");
    RequireElements(shapes, kBias, n, op, "bias, N");
  }
  bool ServesOtherShapes() const override { return true; }
  void ApplySettings(const EpSettings& settings, std::string_view /*node_name*/) override {
    threads_ = settings.threads;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& a = inputs[kA].tensor;
    const std::span<const int64_t> a_dims = DimsSpan(a);
    if (a_dims.empty() || a_dims.back() != w_.depth) {
      Fail("A is " + DimsText(a_dims) + "; its last dim must be K = " + std::to_string(w_.depth));
    }
    out_dims_.assign(a_dims.begin(), a_dims.end());
    out_dims_.back() = w_.columns;
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    const int64_t rows = ElementCount(a_dims) / std::max<int64_t>(w_.depth, 1);
    if (rows == 0) return;
    BindWeights(inputs);
    Dispatch(NBitsFloatTypes{}, dtype_, "MatMulNBits", [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float>) {
        Multiply(rows, DataAs<float>(a), MutableDataAs<float>(y));
      } else {
        float* wide_a = Scratch(wide_a_, rows * w_.depth);
        float* wide_y = Scratch(wide_y_, rows * w_.columns);
        Widen(DataAs<T>(a), rows * w_.depth, wide_a);
        Multiply(rows, wide_a, wide_y);
        T* out = MutableDataAs<T>(y);
        for (int64_t i = 0; i < rows * w_.columns; ++i) out[i] = T(wide_y[i]);
      }
    });
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { FailInvalid(name_ + ": " + what); }

  // Points w_ at this call's codes, scales, zero points and block indices,
  // widening the 16-bit float ones.
  void BindWeights(std::span<const nxrt_value> inputs) {
    const int64_t per_column = w_.columns * w_.blocks_per_column;
    // The kernel serves other shapes of A; weights fed as inputs are
    // checked on every call, since it reads them by position.
    RequireCount(inputs, kCodes, per_column * w_.BytesPerBlock(), "B");
    RequireCount(inputs, kScales, per_column, "scales");
    if (IsPresent(inputs, kZeroPoints)) {
      const bool packed = inputs[kZeroPoints].tensor.dtype == NXRT_DTYPE_UINT8;
      RequireCount(inputs, kZeroPoints,
                   packed ? w_.columns * ((w_.blocks_per_column * w_.bits + 7) / 8) : per_column,
                   "zero_points");
    }
    RequireCount(inputs, kBlockIndex, w_.depth, "g_idx");
    RequireCount(inputs, kBias, w_.columns, "bias");
    w_.codes = DataAs<uint8_t>(inputs[kCodes].tensor);
    w_.scales = FloatView(inputs[kScales].tensor, per_column, wide_scales_);
    w_.packed_zero_points = nullptr;
    w_.float_zero_points = nullptr;
    if (IsPresent(inputs, kZeroPoints)) {
      const nxrt_tensor& zero = inputs[kZeroPoints].tensor;
      if (zero.dtype == NXRT_DTYPE_UINT8) {
        w_.packed_zero_points = DataAs<uint8_t>(zero);
      } else {
        w_.float_zero_points = FloatView(zero, per_column, wide_zero_points_);
      }
    }
    w_.block_of_k = nullptr;
    if (IsPresent(inputs, kBlockIndex)) {
      const int32_t* block_of_k = DataAs<int32_t>(inputs[kBlockIndex].tensor);
      for (int64_t k = 0; k < w_.depth; ++k) {
        if (block_of_k[k] < 0 || block_of_k[k] >= w_.blocks_per_column) {
          Fail("g_idx[" + std::to_string(k) + "] = " + std::to_string(block_of_k[k]) +
               " is not a block index below " + std::to_string(w_.blocks_per_column));
        }
      }
      w_.block_of_k = block_of_k;
    }
    bias_ = IsPresent(inputs, kBias) ? FloatView(inputs[kBias].tensor, w_.columns, wide_bias_)
                                     : nullptr;
  }

  void RequireCount(std::span<const nxrt_value> inputs, size_t index, int64_t count,
                    const char* what) const {
    if (IsPresent(inputs, index) && ElementCount(inputs[index].tensor) != count) {
      Fail(std::string(what) + " has " + std::to_string(ElementCount(inputs[index].tensor)) +
           " elements; it needs " + std::to_string(count));
    }
  }

  // `t`'s `count` values as float: in place for float, else widened into
  // `scratch`.
  const float* FloatView(const nxrt_tensor& t, int64_t count, std::vector<float>& scratch) {
    if (t.dtype == NXRT_DTYPE_FLOAT32) return DataAs<float>(t);
    float* wide = Scratch(scratch, count);
    Dispatch(NBitsFloatTypes{}, t.dtype, "MatMulNBits", [&](auto tag) {
      using T = typename decltype(tag)::type;
      Widen(DataAs<T>(t), count, wide);
    });
    return wide;
  }

  void Multiply(int64_t rows, const float* a, float* y) {
    if (int8_rows_ && TakesInt8Rows(w_) && rows < kStreamedRowsBelow) {
      for (int64_t r = 0; r < rows; ++r) {
        QuantizeRow(w_, a + r * w_.depth, int8_row_);
        float* out = y + r * w_.columns;
        const int blocks = ThreadBlocks(w_.columns * w_.depth, w_.columns);
        RunBlocks(blocks, [&](int block) {
          const int64_t first = RunStart(w_.columns, block, blocks);
          const int64_t last = RunStart(w_.columns, block + 1, blocks);
          Int8RowTimesColumns(w_, int8_row_, first, last, out + first);
        });
      }
    } else if (rows < kStreamedRowsBelow && StreamsInBlocks(w_)) {
      if (rows_.size() < static_cast<size_t>(rows)) rows_.resize(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) PrepareRow(w_, a + r * w_.depth, rows_[r]);
      const int blocks = ThreadBlocks(rows * w_.columns * w_.depth, w_.columns);
      RunBlocks(blocks, [&](int block) {
        const int64_t first = RunStart(w_.columns, block, blocks);
        const int64_t last = RunStart(w_.columns, block + 1, blocks);
        RowsTimesColumns(w_, rows_.data(), static_cast<int>(rows), first, last, y + first,
                         w_.columns);
      });
    } else if (int8_rows_ && TakesInt8Rows(w_)) {
      // The int8 rows' values in float, so a row's result does not depend
      // on how many rows came with it.
      float* rounded = Scratch(rounded_a_, rows * w_.depth);
      for (int64_t r = 0; r < rows; ++r) {
        RoundThroughInt8(w_, a + r * w_.depth, rounded + r * w_.depth);
      }
      MultiplyPanels(rows, rounded, y);
    } else {
      MultiplyPanels(rows, a, y);
    }
    if (bias_ == nullptr) return;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = y + r * w_.columns;
      for (int64_t n = 0; n < w_.columns; ++n) row[n] += bias_[n];
    }
  }

  // Many rows (or a g_idx): panels of dequantized columns times A, both in
  // phase order.
  void MultiplyPanels(int64_t rows, const float* a, float* y) {
    const int64_t k = PhaseOrderLength(w_), n = w_.columns;
    float* ordered = Scratch(ordered_a_, rows * k);
    for (int64_t r = 0; r < rows; ++r) ToPhaseOrder(w_, a + r * w_.depth, ordered + r * k);
    const int64_t width = std::clamp<int64_t>(kPanelFloats / k, 8, n);
    const int64_t panels = (n + width - 1) / width;
    const int blocks = ThreadBlocks(rows * n * k, panels);
    float* scratch = Scratch(panel_, blocks * width * k);
    RunBlocks(blocks, [&](int block) {
      float* panel = scratch + block * width * k;
      for (int64_t p = RunStart(panels, block, blocks); p < RunStart(panels, block + 1, blocks);
           ++p) {
        const int64_t first = p * width;
        const int64_t count = std::min(width, n - first);
        DequantizeColumns(w_, first, first + count, panel);
        onednn::Sgemm(false, true, rows, count, k, 1.0f, ordered, k, panel, k, 0.0f, y + first, n,
                      1);
      }
    });
  }

  // Threads worth using for `work` multiply-adds split into at most `parts`.
  int ThreadBlocks(int64_t work, int64_t parts) const {
    return static_cast<int>(
        std::clamp<int64_t>(work / kWeightsPerThread, 1, std::min<int64_t>(threads_, parts)));
  }

  std::string name_;
  nxrt_dtype dtype_;
  NBitsMatrix w_;
  bool int8_rows_ = false;  // a few rows go through Int8RowTimesColumns
  Int8Row int8_row_;
  std::vector<NBitsRow> rows_;  // A's rows laid out for RowsTimesColumns
  const float* bias_ = nullptr;
  int threads_ = 1;
  Dims out_dims_;
  std::vector<float> wide_a_, wide_y_, wide_scales_, wide_zero_points_, wide_bias_;
  std::vector<float> rounded_a_;  // A through int8, for the panels at accuracy_level 4
  std::vector<float> ordered_a_;  // A in phase order, for the panels
  std::vector<float> panel_;
};

sdk::ClaimResult ClaimMatMulNBits(const sdk::Node& node, int64_t,
                                  std::span<const nxrt_value_info> inputs) {
  const std::string op(node.op_type());
  if (auto reason = CheckInputDtype(node, inputs, kA, NBitsFloatTypes{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  if (auto reason = CheckInputDtype(node, inputs, kCodes, TypeList<uint8_t>{})) {
    return sdk::ClaimResult::Declined(*reason + " for B; B holds uint8 codes");
  }
  if (auto reason = CheckInputDtype(node, inputs, kScales, TypeList<float, Float16, BFloat16>{})) {
    return sdk::ClaimResult::Declined(*reason + " for scales");
  }
  const nxrt_dtype a_dtype = inputs[kA].dtype;
  for (size_t i : {size_t{kScales}, size_t{kBias}}) {
    if (i < inputs.size() && inputs[i].kind != NXRT_VALUE_NONE && inputs[i].dtype != a_dtype) {
      return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) +
                                        " must have A's dtype " + DtypeName(a_dtype));
    }
  }
  if (kZeroPoints < inputs.size() && inputs[kZeroPoints].kind != NXRT_VALUE_NONE &&
      inputs[kZeroPoints].dtype != NXRT_DTYPE_UINT8 && inputs[kZeroPoints].dtype != a_dtype) {
    return sdk::ClaimResult::Declined(op + ": zero_points must be uint8 codes or A's dtype");
  }
  if (kBlockIndex < inputs.size() && inputs[kBlockIndex].kind != NXRT_VALUE_NONE &&
      inputs[kBlockIndex].dtype != NXRT_DTYPE_INT32) {
    return sdk::ClaimResult::Declined(op + ": g_idx must be int32");
  }
  const int64_t bits = node.AttrInt("bits", 4);
  if (bits != 2 && bits != 4 && bits != 8) {
    return sdk::ClaimResult::Declined(op + ": bits=" + std::to_string(bits) +
                                      " not implemented; 2, 4 and 8 are");
  }
  const int64_t block = node.AttrInt("block_size", 0);
  if (block < 16 || (block & (block - 1)) != 0) {
    return sdk::ClaimResult::Declined(op + ": block_size " + std::to_string(block) +
                                      " must be a power of two of at least 16");
  }
  if (node.AttrInt("K", 0) <= 0 || node.AttrInt("N", 0) <= 0) {
    return sdk::ClaimResult::Declined(op + ": attributes K and N must be positive");
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterMatMulNBitsOps(OpRegistry& r) {
  r.Add("MatMulNBits",
        {1, ClaimMatMulNBits,
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<MatMulNBitsKernel>(node, shapes);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
