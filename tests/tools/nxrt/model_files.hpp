// Small models and test-case folders written to disk for the command-line
// tests, with the ONNX protobuf API and nxrt's own TensorProto writer.
#pragma once

#include <onnx/onnx_pb.h>

#include <unistd.h>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nxrt/graph/test_data.hpp"

namespace nxrt_test {

// A fresh folder under the system temp folder, removed with the object.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("nxrt_tools_" + name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Dims of a value: a number, or a symbol name.
struct DimSpec {
  int64_t extent = -1;
  std::string symbol;
  DimSpec(int64_t e) : extent(e) {}      // NOLINT: implicit for brevity
  DimSpec(const char* s) : symbol(s) {}  // NOLINT: implicit for brevity
};

inline void SetFloatTensorType(onnx::ValueInfoProto* info, const std::string& name,
                               const std::vector<DimSpec>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (d.symbol.empty()) {
      dim->set_dim_value(d.extent);
    } else {
      dim->set_dim_param(d.symbol);
    }
  }
}

// y = Relu(a + b) (nodes "add" and "relu"), every value float of `dims`;
// `domain_op`, when given, replaces Relu by that op of domain "com.example".
inline void WriteAddReluModel(const std::filesystem::path& file, const std::vector<DimSpec>& dims,
                              const std::string& domain_op = "") {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* standard = model.add_opset_import();
  standard->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("add_relu");
  SetFloatTensorType(graph->add_input(), "a", dims);
  SetFloatTensorType(graph->add_input(), "b", dims);
  SetFloatTensorType(graph->add_output(), "y", dims);
  auto* add = graph->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("a");
  add->add_input("b");
  add->add_output("sum");
  auto* second = graph->add_node();
  second->set_name("relu");
  second->set_op_type(domain_op.empty() ? "Relu" : domain_op);
  if (!domain_op.empty()) {
    second->set_domain("com.example");
    auto* custom = model.add_opset_import();
    custom->set_domain("com.example");
    custom->set_version(1);
  }
  second->add_input("sum");
  second->add_output("y");
  std::ofstream out(file, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out)) << file;
}

inline nxrt::graph::TestTensor FloatTensor(const std::string& name, std::vector<int64_t> dims,
                                           const std::vector<float>& values) {
  nxrt::graph::TestTensor tensor;
  tensor.name = name;
  tensor.dtype = nxrt::graph::DataType::kFloat32;
  tensor.dims = std::move(dims);
  tensor.bytes.resize(values.size() * sizeof(float));
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

// onnx's Range case expanded into a Loop (start, limit, delta: int32
// scalars), from Debian's libonnx-testdata.
inline const std::filesystem::path kRangeAsLoopCase =
    "/usr/share/libonnx-testdata/data/node/test_range_int32_type_negative_delta_expanded";

// A scalar (rank 0) int32 tensor.
inline nxrt::graph::TestTensor Int32Scalar(const std::string& name, int32_t value) {
  nxrt::graph::TestTensor tensor;
  tensor.name = name;
  tensor.dtype = nxrt::graph::DataType::kInt32;
  tensor.bytes.resize(sizeof(value));
  std::memcpy(tensor.bytes.data(), &value, sizeof(value));
  return tensor;
}

inline std::vector<float> FloatValues(const nxrt::graph::TestTensor& tensor) {
  std::vector<float> values(tensor.bytes.size() / sizeof(float));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

inline void WriteTensorFile(const std::filesystem::path& file,
                            const nxrt::graph::TestTensor& tensor) {
  std::filesystem::create_directories(file.parent_path());
  const nxrt::Status written = nxrt::graph::WriteTensorProtoFile(file, tensor);
  ASSERT_TRUE(written.ok()) << written.message();
}

// Relu(a + b), element by element: what the add-relu model must answer.
inline std::vector<float> AddRelu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i] > 0 ? a[i] + b[i] : 0.0f;
  return y;
}

}  // namespace nxrt_test
