// Conversions between the test-data form of a value (graph::TestValue, what
// .pb files decode into and encode from) and the Session's Value and Tensor,
// so commands can feed files to a session and write its outputs back.
#pragma once

#include <string>

#include "nxrt/graph/test_data.hpp"
#include "nxrt/support/status.hpp"
#include "nxrt/tensor.hpp"
#include "nxrt/value.hpp"

namespace nxrt::cli {

Result<Tensor> TensorFromTestTensor(const graph::TestTensor& tensor);
Result<Value> ValueFromTestValue(const graph::TestValue& value);

// An owning copy of a host tensor, named `name`.
graph::TestTensor TestTensorFromTensor(const Tensor& tensor, const std::string& name);

}  // namespace nxrt::cli
