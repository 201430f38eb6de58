// Data movement: the view ops (Identity, Reshape, Squeeze, Unsqueeze,
// Flatten) copy their bytes into the output, Transpose and Slice are one
// strided gather, Concat one 2-D copy per input, Gather an index lookup.
//
// Shape-carrying inputs (Reshape's shape, Squeeze/Unsqueeze axes, Slice
// bounds) are read from their constant bytes when the host prepares them. A
// view whose shape input is computed reads it back from the device only when
// the host did not preallocate the output; such a kernel says it is not
// capture-safe.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/launchers.hpp"
#include "kernels/node_values.hpp"

namespace nxrt::cuda {
namespace {

class ViewKernel : public CudaKernel {
 public:
  ViewKernel(const DeviceContext& context, const sdk::Node& node, const nxrt_shape& input,
             int64_t opset)
      : CudaKernel(context),
        label_(NodeLabel(node)),
        op_(node.op_type()),
        dtype_(input.dtype),
        in_dims_(DimsOf(input)) {
    if (op_ == "Identity") {
      out_dims_ = in_dims_;
    } else if (op_ == "Flatten") {
      const int64_t rank = static_cast<int64_t>(in_dims_.size());
      int64_t axis = node.AttrInt("axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis > rank) {
        throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": axis outside the input");
      }
      const auto split = in_dims_.begin() + axis;
      out_dims_ = {ElementCount(std::vector<int64_t>(in_dims_.begin(), split)),
                   ElementCount(std::vector<int64_t>(split, in_dims_.end()))};
    } else if (op_ == "Reshape") {
      allow_zero_ = node.AttrInt("allowzero", 0) != 0;
    } else if (opset < 13 || !node.input_name(1)) {
      // Axes come from the attribute (or, for Squeeze, every unit axis).
      if (op_ == "Unsqueeze" && opset >= 13) {
        throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": Unsqueeze needs axes");
      }
      out_dims_ = DimsFromValues(node.AttrInts("axes"));
    }
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& constant : constants) {
      if (constant.input_index != 1 || op_ == "Identity" || op_ == "Flatten") continue;
      out_dims_ = DimsFromValues(ReadIntegers(constant.dtype, constant.bytes, constant.byte_size));
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_value& out_value = outputs[0];
    if (out_value.tensor.data == nullptr) {
      if (!out_dims_) out_dims_ = DimsFromValues(ReadDeviceIntegers(inputs[1].tensor));
      Output(ctx, outputs, 0, dtype_, *out_dims_);
    }
    const nxrt_tensor& out = out_value.tensor;
    if (out.byte_size != in.byte_size) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       label_ + ": output holds " + std::to_string(out.byte_size) +
                           " bytes, input " + std::to_string(in.byte_size));
    }
    if (in.byte_size != 0 && out.data != in.data) {
      CheckCuda(
          cudaMemcpyAsync(out.data, in.data, in.byte_size, cudaMemcpyDeviceToDevice, stream()),
          "cudaMemcpyAsync(view)");
    }
  }

  bool CaptureSafe() const override { return out_dims_.has_value(); }

 private:
  std::vector<int64_t> ReadDeviceIntegers(const nxrt_tensor& tensor) const {
    std::vector<std::byte> bytes(tensor.byte_size);
    if (!bytes.empty()) {
      CheckCuda(cudaMemcpyAsync(bytes.data(), tensor.data, bytes.size(), cudaMemcpyDeviceToHost,
                                stream()),
                "cudaMemcpyAsync(shape input)");
      CheckCuda(cudaStreamSynchronize(stream()), "cudaStreamSynchronize(shape input)");
    }
    return ReadIntegers(tensor.dtype, bytes.data(), bytes.size());
  }

  std::vector<int64_t> DimsFromValues(const std::vector<int64_t>& values) const {
    if (op_ == "Reshape") return ReshapeDims(values);
    if (op_ == "Squeeze") return SqueezeDims(values);
    return UnsqueezeDims(values);
  }

  std::vector<int64_t> ReshapeDims(const std::vector<int64_t>& shape) const {
    std::vector<int64_t> dims(shape.size());
    std::optional<size_t> inferred;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == -1) {
        if (inferred) throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": two -1 dims");
        inferred = i;
        continue;
      }
      dims[i] = shape[i] == 0 && !allow_zero_ && i < in_dims_.size() ? in_dims_[i] : shape[i];
      if (dims[i] < 0) throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": negative dim");
      known *= dims[i];
    }
    const int64_t total = ElementCount(in_dims_);
    if (inferred) {
      if (known == 0 || total % known != 0) {
        throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": cannot infer the -1 dim");
      }
      dims[*inferred] = total / known;
    } else if (known != total) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       label_ + ": shape holds " + std::to_string(known) + " elements, input " +
                           std::to_string(total));
    }
    return dims;
  }

  std::vector<int64_t> SqueezeDims(const std::vector<int64_t>& axes) const {
    const int64_t rank = static_cast<int64_t>(in_dims_.size());
    std::vector<bool> drop(in_dims_.size(), false);
    for (int64_t axis : axes) drop[NormalizeAxis(axis, rank, label_)] = true;
    std::vector<int64_t> dims;
    for (size_t d = 0; d < in_dims_.size(); ++d) {
      const bool squeezed = axes.empty() ? in_dims_[d] == 1 : drop[d];
      if (squeezed && in_dims_[d] != 1) {
        throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                         label_ + ": axis " + std::to_string(d) + " is not 1");
      }
      if (!squeezed) dims.push_back(in_dims_[d]);
    }
    return dims;
  }

  std::vector<int64_t> UnsqueezeDims(const std::vector<int64_t>& axes) const {
    const int64_t rank = static_cast<int64_t>(in_dims_.size() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(rank), false);
    for (int64_t axis : axes) inserted[NormalizeAxis(axis, rank, label_)] = true;
    std::vector<int64_t> dims;
    size_t next = 0;
    for (int64_t d = 0; d < rank; ++d) {
      dims.push_back(inserted[d] ? 1 : in_dims_.at(next++));
    }
    return dims;
  }

  std::string label_;
  std::string op_;
  nxrt_dtype dtype_;
  std::vector<int64_t> in_dims_;
  bool allow_zero_ = false;
  std::optional<std::vector<int64_t>> out_dims_;
};

class TransposeKernel : public CudaKernel {
 public:
  TransposeKernel(const DeviceContext& context, const sdk::Node& node, const nxrt_shape& input)
      : CudaKernel(context), dtype_(input.dtype) {
    const std::vector<int64_t> in = DimsOf(input);
    const int64_t rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> perm = node.AttrInts("perm");
    if (perm.empty()) {
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    }
    if (static_cast<int64_t>(perm.size()) != rank || rank > kMaxDims) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, NodeLabel(node) + ": perm does not fit");
    }
    const std::vector<int64_t> strides = RowMajorStrides(in);
    geometry_.rank = static_cast<int>(rank);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t from = NormalizeAxis(perm[d], rank, NodeLabel(node));
      dims_.push_back(in[from]);
      geometry_.dims[d] = in[from];
      geometry_.strides[d] = strides[from];
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    LaunchStridedCopy(ElementSize(dtype_), inputs[0].tensor.data, out.data, geometry_,
                      ElementCount(dims_), stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> dims_;
  CopyGeometry geometry_;
};

class SliceKernel : public CudaKernel {
 public:
  SliceKernel(const DeviceContext& context, const sdk::Node& node, std::span<const nxrt_shape> in)
      : CudaKernel(context), label_(NodeLabel(node)), dtype_(in[0].dtype), in_dims_(DimsOf(in[0])) {
    if (in_dims_.size() > static_cast<size_t>(kMaxDims)) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       label_ + ": rank above " + std::to_string(kMaxDims));
    }
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    std::vector<std::vector<int64_t>> values(5);
    for (const nxrt_constant_input& constant : constants) {
      if (constant.input_index >= 1 && constant.input_index <= 4) {
        values[constant.input_index] =
            ReadIntegers(constant.dtype, constant.bytes, constant.byte_size);
      }
    }
    Plan(values[1], values[2], values[3], values[4]);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    if (!planned_) {
      throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                       label_ + ": bounds were not handed over as constants");
    }
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    LaunchStridedCopy(ElementSize(dtype_), inputs[0].tensor.data, out.data, geometry_,
                      ElementCount(dims_), stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  void Plan(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
            std::vector<int64_t> axes, std::vector<int64_t> steps) {
    const int64_t rank = static_cast<int64_t>(in_dims_.size());
    if (axes.empty()) {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size()) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": bounds differ in length");
    }
    std::vector<int64_t> first(in_dims_.size(), 0), step(in_dims_.size(), 1);
    dims_ = in_dims_;
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t axis = NormalizeAxis(axes[i], rank, label_);
      const int64_t extent = in_dims_[axis];
      if (steps[i] == 0) throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": step 0");
      int64_t start = std::clamp(starts[i], -extent - 1, extent + 1);
      int64_t end = std::clamp(ends[i], -extent - 1, extent + 1);
      if (start < 0) start += extent;
      if (end < 0) end += extent;
      if (steps[i] > 0) {
        start = std::clamp<int64_t>(start, 0, extent);
        end = std::clamp<int64_t>(end, 0, extent);
        dims_[axis] = end > start ? (end - start + steps[i] - 1) / steps[i] : 0;
      } else {
        start = std::clamp<int64_t>(start, 0, extent - 1);
        end = std::clamp<int64_t>(end, -1, extent - 1);
        dims_[axis] = start > end ? (start - end - steps[i] - 1) / -steps[i] : 0;
      }
      first[axis] = start;
      step[axis] = steps[i];
    }
    const std::vector<int64_t> strides = RowMajorStrides(in_dims_);
    geometry_ = CopyGeometry{};
    geometry_.rank = static_cast<int>(rank);
    for (int64_t d = 0; d < rank; ++d) {
      geometry_.dims[d] = dims_[d];
      geometry_.strides[d] = strides[d] * step[d];
      geometry_.offset += strides[d] * first[d];
    }
    planned_ = true;
  }

  std::string label_;
  nxrt_dtype dtype_;
  std::vector<int64_t> in_dims_;
  std::vector<int64_t> dims_;
  CopyGeometry geometry_;
  bool planned_ = false;
};

class ConcatKernel : public CudaKernel {
 public:
  ConcatKernel(const DeviceContext& context, const sdk::Node& node,
               std::span<const nxrt_shape> inputs)
      : CudaKernel(context), dtype_(inputs[0].dtype) {
    dims_ = DimsOf(inputs[0]);
    const int64_t rank = static_cast<int64_t>(dims_.size());
    const int64_t axis = NormalizeAxis(node.AttrInt("axis", 0), rank, NodeLabel(node));
    const size_t element = ElementSize(dtype_);
    outer_ = ElementCount(std::vector<int64_t>(dims_.begin(), dims_.begin() + axis));
    const int64_t inner = ElementCount(std::vector<int64_t>(dims_.begin() + axis + 1, dims_.end()));
    dims_[axis] = 0;
    for (const nxrt_shape& shape : inputs) {
      const std::vector<int64_t> d = DimsOf(shape);
      if (static_cast<int64_t>(d.size()) != rank) {
        throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, NodeLabel(node) + ": ranks differ");
      }
      chunk_bytes_.push_back(static_cast<size_t>(d[axis] * inner) * element);
      dims_[axis] += d[axis];
    }
    row_bytes_ = static_cast<size_t>(dims_[axis] * inner) * element;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    size_t offset = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const size_t chunk = chunk_bytes_[i];
      if (chunk != 0 && outer_ != 0) {
        CheckCuda(
            cudaMemcpy2DAsync(static_cast<std::byte*>(out.data) + offset, row_bytes_,
                              inputs[i].tensor.data, chunk, chunk, static_cast<size_t>(outer_),
                              cudaMemcpyDeviceToDevice, stream()),
            "cudaMemcpy2DAsync(concat)");
      }
      offset += chunk;
    }
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> dims_;
  int64_t outer_ = 0;
  size_t row_bytes_ = 0;
  std::vector<size_t> chunk_bytes_;
};

class GatherKernel : public CudaKernel {
 public:
  GatherKernel(const DeviceContext& context, const sdk::Node& node, const nxrt_shape& data,
               const nxrt_shape& indices)
      : CudaKernel(context), dtype_(data.dtype), indices_int64_(indices.dtype == NXRT_DTYPE_INT64) {
    const std::vector<int64_t> d = DimsOf(data);
    const std::vector<int64_t> index_dims = DimsOf(indices);
    const int64_t axis =
        NormalizeAxis(node.AttrInt("axis", 0), static_cast<int64_t>(d.size()), NodeLabel(node));
    outer_ = ElementCount(std::vector<int64_t>(d.begin(), d.begin() + axis));
    axis_extent_ = d[axis];
    inner_ = ElementCount(std::vector<int64_t>(d.begin() + axis + 1, d.end()));
    index_count_ = ElementCount(index_dims);
    dims_.assign(d.begin(), d.begin() + axis);
    dims_.insert(dims_.end(), index_dims.begin(), index_dims.end());
    dims_.insert(dims_.end(), d.begin() + axis + 1, d.end());
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    LaunchGather(ElementSize(dtype_), inputs[0].tensor.data, inputs[1].tensor.data, indices_int64_,
                 out.data, outer_, axis_extent_, index_count_, inner_, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  bool indices_int64_;
  int64_t outer_ = 0;
  int64_t axis_extent_ = 0;
  int64_t index_count_ = 0;
  int64_t inner_ = 0;
  std::vector<int64_t> dims_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeMovementKernel(const DeviceContext& context, const sdk::Node& node,
                                                std::span<const nxrt_shape> inputs, int64_t opset) {
  const std::string_view op = node.op_type();
  if (op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Flatten") {
    return std::make_unique<ViewKernel>(context, node, inputs[0], opset);
  }
  if (op == "Transpose") return std::make_unique<TransposeKernel>(context, node, inputs[0]);
  if (op == "Slice") return std::make_unique<SliceKernel>(context, node, inputs);
  if (op == "Concat") return std::make_unique<ConcatKernel>(context, node, inputs);
  if (op == "Gather") return std::make_unique<GatherKernel>(context, node, inputs[0], inputs[1]);
  return nullptr;
}

}  // namespace nxrt::cuda
