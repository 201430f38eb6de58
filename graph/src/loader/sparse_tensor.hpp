// Densifying ONNX sparse tensors. nxrt keeps every constant dense, so a
// sparse initializer or attribute becomes an ordinary TensorProto whose
// unlisted elements are zero (empty for strings).
#pragma once

#include <onnx/onnx_pb.h>

#include "nxrt/support/status.hpp"

namespace nxrt::graph {

Result<onnx::TensorProto> DensifySparseTensor(const onnx::SparseTensorProto& sparse);

}  // namespace nxrt::graph
