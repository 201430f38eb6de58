// MatMul and Gemm through cuBLASLt. Row-major D = A·B is computed as the
// column-major D^T = B^T·A^T, so no operand is ever transposed in memory.
// Descriptors and the algorithm are chosen once per shape when the kernel is
// made; compute only enqueues the product (and Gemm's broadcast of C).
#include <cublasLt.h>

#include <string>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/launchers.hpp"

namespace nxrt::cuda {
namespace {

cudaDataType_t BlasType(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT32:
      return CUDA_R_32F;
    case NXRT_DTYPE_FLOAT16:
      return CUDA_R_16F;
    case NXRT_DTYPE_BFLOAT16:
      return CUDA_R_16BF;
    default:
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "no cuBLASLt product for " + DtypeName(dtype));
  }
}

// A column-major matrix operand: rows x cols with leading dimension rows,
// repeated `batch` times `stride` elements apart.
struct Operand {
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t stride = 0;
};

// One column-major product D = alpha·op(A)·op(B) + beta·C with C == D.
class LtProduct {
 public:
  LtProduct(const DeviceContext& context, nxrt_dtype dtype, bool transpose_a, bool transpose_b,
            Operand a, Operand b, Operand d, int32_t batch)
      : context_(context) {
    const cudaDataType_t type = BlasType(dtype);
    try {
      CheckCublas(cublasLtMatmulDescCreate(&operation_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                  "cublasLtMatmulDescCreate");
      const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
      const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
      CheckCublas(cublasLtMatmulDescSetAttribute(operation_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a,
                                                 sizeof(op_a)),
                  "cublasLtMatmulDescSetAttribute(TRANSA)");
      CheckCublas(cublasLtMatmulDescSetAttribute(operation_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b,
                                                 sizeof(op_b)),
                  "cublasLtMatmulDescSetAttribute(TRANSB)");
      a_ = MakeLayout(type, a, batch);
      b_ = MakeLayout(type, b, batch);
      d_ = MakeLayout(type, d, batch);
      ChooseAlgorithm();
    } catch (...) {
      Release();
      throw;
    }
  }
  ~LtProduct() { Release(); }
  LtProduct(const LtProduct&) = delete;
  LtProduct& operator=(const LtProduct&) = delete;

  void Run(float alpha, float beta, const void* a, const void* b, void* d) const {
    CheckCublas(cublasLtMatmul(context_.blas_lt, operation_, &alpha, a, a_, b, b_, &beta, d, d_, d,
                               d_, &algorithm_, context_.blas_workspace,
                               context_.blas_workspace_bytes, context_.stream),
                "cublasLtMatmul");
  }

 private:
  static cublasLtMatrixLayout_t MakeLayout(cudaDataType_t type, Operand operand, int32_t batch) {
    cublasLtMatrixLayout_t layout = nullptr;
    CheckCublas(cublasLtMatrixLayoutCreate(&layout, type, operand.rows, operand.cols,
                                           static_cast<int64_t>(operand.rows)),
                "cublasLtMatrixLayoutCreate");
    if (batch > 1) {
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                       sizeof(batch));
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                       &operand.stride, sizeof(operand.stride));
    }
    return layout;
  }

  void ChooseAlgorithm() {
    cublasLtMatmulPreference_t preference = nullptr;
    CheckCublas(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    const uint64_t workspace = context_.blas_workspace_bytes;
    cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                         &workspace, sizeof(workspace));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        context_.blas_lt, operation_, a_, b_, d_, d_, preference, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(preference);
    CheckCublas(status, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "cuBLASLt has no algorithm for this product");
    }
    algorithm_ = result.algo;
  }

  void Release() {
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (operation_) cublasLtMatmulDescDestroy(operation_);
    a_ = b_ = d_ = nullptr;
    operation_ = nullptr;
  }

  const DeviceContext& context_;
  cublasLtMatmulDesc_t operation_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr;
  cublasLtMatrixLayout_t b_ = nullptr;
  cublasLtMatrixLayout_t d_ = nullptr;
  cublasLtMatmulAlgo_t algorithm_{};
};

[[noreturn]] void Refuse(const sdk::Node& node, const std::string& why) {
  throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "node '" + std::string(node.name()) + "' (" +
                                                std::string(node.op_type()) + "): " + why);
}

class MatMulKernel : public CudaKernel {
 public:
  MatMulKernel(const DeviceContext& context, const sdk::Node& node, const nxrt_shape& a_shape,
               const nxrt_shape& b_shape)
      : CudaKernel(context), dtype_(a_shape.dtype) {
    const std::vector<int64_t> a = DimsOf(a_shape);
    const std::vector<int64_t> b = DimsOf(b_shape);
    if (a.size() < 2 || b.size() < 2) Refuse(node, "rank-1 operands stay on the host");
    const int64_t m = a[a.size() - 2];
    const int64_t k = a.back();
    const int64_t n = b.back();
    if (b[b.size() - 2] != k) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       "node '" + std::string(node.name()) + "': inner dimensions " +
                           std::to_string(k) + " and " + std::to_string(b[b.size() - 2]) +
                           " differ");
    }
    out_dims_.assign(a.begin(), a.end() - 2);
    int64_t batch = ElementCount(out_dims_);
    out_dims_.push_back(m);
    out_dims_.push_back(n);
    if (k == 0) Refuse(node, "an empty inner dimension");
    int64_t rows_of_a = m;
    int64_t b_stride = k * n;
    if (b.size() == 2) {
      // A shared B: fold A's batch into its rows.
      rows_of_a = m * batch;
      batch = 1;
      b_stride = 0;
    } else if (std::vector<int64_t>(b.begin(), b.end() - 2) !=
               std::vector<int64_t>(a.begin(), a.end() - 2)) {
      Refuse(node, "batch shapes of A and B differ");
    }
    if (batch > 0x7fffffff) Refuse(node, "more batches than cuBLASLt counts");
    empty_ = rows_of_a == 0 || n == 0 || batch == 0;
    if (empty_) return;
    product_ = std::make_unique<LtProduct>(
        context, dtype_, false, false,
        Operand{static_cast<uint64_t>(n), static_cast<uint64_t>(k), b_stride},
        Operand{static_cast<uint64_t>(k), static_cast<uint64_t>(rows_of_a), rows_of_a * k},
        Operand{static_cast<uint64_t>(n), static_cast<uint64_t>(rows_of_a), rows_of_a * n},
        static_cast<int32_t>(batch));
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, out_dims_);
    if (empty_) return;
    product_->Run(1.0f, 0.0f, inputs[1].tensor.data, inputs[0].tensor.data, out.data);
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> out_dims_;
  bool empty_ = false;
  std::unique_ptr<LtProduct> product_;
};

class GemmKernel : public CudaKernel {
 public:
  GemmKernel(const DeviceContext& context, const sdk::Node& node,
             std::span<const nxrt_shape> inputs)
      : CudaKernel(context),
        dtype_(inputs[0].dtype),
        alpha_(node.AttrFloat("alpha", 1.0f)),
        beta_(node.AttrFloat("beta", 1.0f)) {
    const bool transpose_a = node.AttrInt("transA", 0) != 0;
    const bool transpose_b = node.AttrInt("transB", 0) != 0;
    const std::vector<int64_t> a = DimsOf(inputs[0]);
    const std::vector<int64_t> b = DimsOf(inputs[1]);
    if (a.size() != 2 || b.size() != 2) Refuse(node, "A and B must be 2-D");
    const int64_t m = transpose_a ? a[1] : a[0];
    const int64_t k = transpose_a ? a[0] : a[1];
    const int64_t n = transpose_b ? b[0] : b[1];
    if ((transpose_b ? b[1] : b[0]) != k) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       "node '" + std::string(node.name()) + "': inner dimensions differ");
    }
    if (k == 0) Refuse(node, "an empty inner dimension");
    out_dims_ = {m, n};
    has_c_ = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
    if (has_c_) PlanBroadcastOfC(node, DimsOf(inputs[2]), m, n);
    empty_ = m == 0 || n == 0;
    if (empty_) return;
    // Column-major: D^T (n x m) = op(B)^T · op(A)^T.
    const Operand b_operand{static_cast<uint64_t>(transpose_b ? k : n),
                            static_cast<uint64_t>(transpose_b ? n : k), 0};
    const Operand a_operand{static_cast<uint64_t>(transpose_a ? m : k),
                            static_cast<uint64_t>(transpose_a ? k : m), 0};
    const Operand d_operand{static_cast<uint64_t>(n), static_cast<uint64_t>(m), 0};
    product_ = std::make_unique<LtProduct>(context, dtype_, transpose_b, transpose_a, b_operand,
                                           a_operand, d_operand, 1);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, out_dims_);
    if (empty_) return;
    if (has_c_) {
      LaunchStridedCopy(ElementSize(dtype_), inputs[2].tensor.data, out.data, broadcast_c_,
                        ElementCount(out_dims_), stream());
    }
    product_->Run(alpha_, has_c_ ? beta_ : 0.0f, inputs[1].tensor.data, inputs[0].tensor.data,
                  out.data);
  }
  bool CaptureSafe() const override { return true; }

 private:
  void PlanBroadcastOfC(const sdk::Node& node, const std::vector<int64_t>& c, int64_t m,
                        int64_t n) {
    std::vector<int64_t> full(2, 1);
    std::copy(c.begin(), c.end(), full.begin() + (2 - static_cast<ptrdiff_t>(c.size())));
    if ((full[0] != 1 && full[0] != m) || (full[1] != 1 && full[1] != n)) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       "node '" + std::string(node.name()) + "': C does not broadcast to [M, N]");
    }
    broadcast_c_.rank = 2;
    broadcast_c_.dims[0] = m;
    broadcast_c_.dims[1] = n;
    broadcast_c_.strides[0] = full[0] == 1 ? 0 : full[1];
    broadcast_c_.strides[1] = full[1] == 1 ? 0 : 1;
  }

  nxrt_dtype dtype_;
  float alpha_;
  float beta_;
  std::vector<int64_t> out_dims_;
  bool has_c_ = false;
  bool empty_ = false;
  CopyGeometry broadcast_c_;
  std::unique_ptr<LtProduct> product_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeMatMulKernel(const DeviceContext& context, const sdk::Node& node,
                                              std::span<const nxrt_shape> inputs, int64_t) {
  if (node.op_type() == "MatMul") {
    return std::make_unique<MatMulKernel>(context, node, inputs[0], inputs[1]);
  }
  if (node.op_type() == "Gemm") return std::make_unique<GemmKernel>(context, node, inputs);
  return nullptr;
}

}  // namespace nxrt::cuda
