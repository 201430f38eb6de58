// Runs one node of any domain through a session on the CPU EP with
// nxrt::Tensor inputs (string tensors included) and returns every output, or
// the status that stopped the session being made or run, so tests can check
// both results and error messages. single_node_session.hpp is the shorthand
// for one output from raw bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attribute_builders.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"
#include "nxrt/tensor.hpp"

namespace nxrt_test {

struct TensorNode {
  std::string op{};
  std::string domain{};  // "" or "ai.onnx.ml"
  int64_t opset = 0;     // of `domain`
  std::string name = "node";
  std::vector<nxrt::NamedTensor> inputs{};       // an empty name: an absent optional input
  std::vector<nxrt::graph::DataType> outputs{};  // declared dtype of each output
  std::vector<nxrt::graph::Attribute> attributes{};
  std::vector<nxrt::NamedTensor> tensor_attributes{};              // by attribute name
  std::vector<std::pair<std::string, std::string>> cpu_options{};  // the cpu EP's options
  size_t memory_limit_bytes = 0;  // SessionOptions::memory_limit_bytes
};

nxrt::Result<std::vector<nxrt::Tensor>> RunTensorNode(TensorNode node);

// Runs `node` and expects it refused with `fault` in the error: the tests of
// inputs a kernel must not run on.
void ExpectRefused(TensorNode node, const std::string& fault);

// The session RunTensorNode runs once, with its inputs, for tests that run
// it again.
struct TensorNodeSession {
  std::unique_ptr<nxrt::Session> session;
  std::vector<nxrt::NamedTensor> inputs;
};
nxrt::Result<TensorNodeSession> MakeTensorNodeSession(TensorNode node);

nxrt::graph::Attribute StringsAttribute(const std::string& name, std::vector<std::string> values);
nxrt::graph::Attribute FloatsAttribute(const std::string& name, std::vector<float> values);

// Tensor inputs that cannot fail to build.
nxrt::Tensor Strings(std::vector<int64_t> dims, std::vector<std::string> values);
template <typename T>
nxrt::Tensor Values(std::vector<int64_t> dims, const std::vector<T>& values) {
  return nxrt::Tensor::FromValues<T>(std::move(dims), values).value();
}

}  // namespace nxrt_test
