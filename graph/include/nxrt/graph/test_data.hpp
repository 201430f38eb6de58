// Reading and writing the tensor files of ONNX backend test cases
// (test_data_set_N/input_K.pb, output_K.pb). A file holds a TensorProto, a
// SequenceProto of tensors or an OptionalProto; each decodes into an owning
// TestValue the runner can feed to a session or compare against its outputs.
// `nxrt run` writes its outputs back as TensorProto files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "nxrt/graph/dtype.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// One dense tensor that owns its data.
struct TestTensor {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  std::vector<std::byte> bytes;      // ONNX raw little-endian layout; empty for strings
  std::vector<std::string> strings;  // DataType::kString only
};

enum class TestValueKind { kTensor, kSequence, kAbsentOptional };

// A decoded file: a tensor, a sequence of tensors, or an optional with no
// value. An optional that holds a value decodes as that value.
struct TestValue {
  TestValueKind kind = TestValueKind::kTensor;
  std::string name;
  TestTensor tensor;                              // kTensor
  std::vector<TestTensor> sequence;               // kSequence
  DataType element_dtype = DataType::kUndefined;  // kSequence: of each element
};

// Which protobuf message a test file holds.
enum class TestProtoKind { kGuess, kTensor, kSequence, kOptional };

// The message a file for a graph input or output of `kind` holds.
TestProtoKind TestProtoKindFor(ValueKind kind);

// Decodes `bytes` as `expected`. kGuess tries TensorProto, then SequenceProto,
// then OptionalProto, keeping the first that is self-consistent; an optional
// holding a tensor is indistinguishable from a one-tensor sequence by its
// bytes alone, so pass the model's declared kind when there is one.
// `display_name` names the file in errors.
Result<TestValue> DecodeTestValue(std::span<const std::byte> bytes, const std::string& display_name,
                                  TestProtoKind expected = TestProtoKind::kGuess);

Result<TestValue> ReadTestValueFile(const std::filesystem::path& file,
                                    TestProtoKind expected = TestProtoKind::kGuess);

// The serialized TensorProto of `tensor` (data in raw_data, strings in
// string_data).
Result<std::vector<std::byte>> EncodeTensorProto(const TestTensor& tensor);

Status WriteTensorProtoFile(const std::filesystem::path& file, const TestTensor& tensor);

}  // namespace nxrt::graph
