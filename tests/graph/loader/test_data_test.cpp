// Decoding the tensor files of ONNX backend test cases, checked against the
// types each case's model declares and, where .venv has the onnx package,
// against what onnx's own Python reader makes of the same files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <onnx/onnx-data_pb.h>

#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/test_data.hpp"
#include "test_case_folders.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeCases = testing::kDebianTestData / "node";

// 64-bit FNV-1a, computed the same way by the Python side below.
uint64_t Fnv1a(std::span<const std::byte> bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) {
    hash ^= static_cast<uint8_t>(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

struct CaseFile {
  fs::path path;
  ValueId declared;  // the model input or output the file feeds or checks
};

// Every input_K.pb / output_K.pb of every data set of `case_dir`.
std::vector<CaseFile> FilesOfCase(const fs::path& case_dir, const Graph& graph) {
  std::vector<CaseFile> files;
  for (const auto& set : fs::directory_iterator(case_dir)) {
    if (!set.is_directory()) continue;
    for (size_t k = 0; k < graph.inputs.size(); ++k) {
      fs::path p = set.path() / ("input_" + std::to_string(k) + ".pb");
      if (fs::exists(p)) files.push_back({p, graph.inputs[k]});
    }
    for (size_t k = 0; k < graph.outputs.size(); ++k) {
      fs::path p = set.path() / ("output_" + std::to_string(k) + ".pb");
      if (fs::exists(p)) files.push_back({p, graph.outputs[k]});
    }
  }
  return files;
}

// Two known inconsistencies of the onnx 1.12 data, which Python's onnx
// reads the same way (TensorFilesAgreeWithPythonOnnx covers these files):
// numpy had no bfloat16, so the Cast cases store bfloat16 bit patterns as
// uint16 tensors; and CastLike's "like" input holds one element whatever
// shape the model declares.
bool IsBfloat16StoredAsUint16(const TestTensor& tensor, const Value& declared,
                              const fs::path& file) {
  const std::string case_name = file.parent_path().parent_path().filename().string();
  return declared.dtype == DataType::kBfloat16 && tensor.dtype == DataType::kUint16 &&
         case_name.rfind("test_cast", 0) == 0;
}
bool IsCastLikeTarget(const fs::path& file) {
  const std::string case_name = file.parent_path().parent_path().filename().string();
  return case_name.rfind("test_castlike", 0) == 0 && file.filename() == "input_1.pb";
}

// Checks one decoded tensor against a declared dtype and shape.
void ExpectMatches(const TestTensor& tensor, const Value& declared, const fs::path& file) {
  if (declared.dtype != DataType::kUndefined && !IsBfloat16StoredAsUint16(tensor, declared, file)) {
    EXPECT_EQ(tensor.dtype, declared.dtype) << file;
  }
  if (tensor.dtype == DataType::kString) {
    uint64_t count = 1;
    for (int64_t d : tensor.dims) count *= static_cast<uint64_t>(d);
    EXPECT_EQ(tensor.strings.size(), count) << file;
  }
  if (!declared.shape || declared.kind == ValueKind::kSequence ||
      declared.kind == ValueKind::kOptionalSequence || IsCastLikeTarget(file)) {
    return;
  }
  ASSERT_EQ(tensor.dims.size(), declared.shape->size()) << file;
  for (size_t i = 0; i < tensor.dims.size(); ++i) {
    const Dim& d = (*declared.shape)[i];
    if (d.is_static()) {
      EXPECT_EQ(tensor.dims[i], d.extent()) << file << " axis " << i;
    }
  }
}

void ExpectMatches(const TestValue& value, const Value& declared, const fs::path& file) {
  switch (declared.kind) {
    case ValueKind::kTensor:
      ASSERT_EQ(value.kind, TestValueKind::kTensor) << file;
      ExpectMatches(value.tensor, declared, file);
      break;
    case ValueKind::kSequence:
      ASSERT_EQ(value.kind, TestValueKind::kSequence) << file;
      for (const TestTensor& t : value.sequence) ExpectMatches(t, declared, file);
      break;
    case ValueKind::kOptionalTensor:
      ASSERT_NE(value.kind, TestValueKind::kSequence) << file;
      if (value.kind == TestValueKind::kTensor) ExpectMatches(value.tensor, declared, file);
      break;
    case ValueKind::kOptionalSequence:
      ASSERT_NE(value.kind, TestValueKind::kTensor) << file;
      for (const TestTensor& t : value.sequence) ExpectMatches(t, declared, file);
      break;
    case ValueKind::kUnknown:
      break;
  }
}

// Decodes every data file of every case under `cases` with the kind its
// model declares and checks it against the declared type.
std::map<TestValueKind, size_t> CheckCaseFiles(const fs::path& cases) {
  size_t files = 0;
  std::map<TestValueKind, size_t> kinds;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (!entry.is_directory()) continue;
    Result<Graph> graph = LoadModelFromFile(entry.path() / "model.onnx");
    EXPECT_TRUE(graph.ok()) << graph.status().ToString();
    if (!graph.ok()) continue;
    for (const CaseFile& file : FilesOfCase(entry.path(), *graph)) {
      const Value& declared = graph->value(file.declared);
      Result<TestValue> value = ReadTestValueFile(file.path, TestProtoKindFor(declared.kind));
      EXPECT_TRUE(value.ok()) << value.status().ToString();
      if (!value.ok()) continue;
      ExpectMatches(*value, declared, file.path);
      ++kinds[value->kind];
      ++files;
    }
  }
  std::cout << "[ testdata ] " << cases.string() << ": " << files
            << " files: " << kinds[TestValueKind::kTensor] << " tensors, "
            << kinds[TestValueKind::kSequence] << " sequences, "
            << kinds[TestValueKind::kAbsentOptional] << " absent optionals\n";
  return kinds;
}

TEST(TestDataTest, EveryDebianNodeCaseFileMatchesItsModel) {
  if (!fs::exists(kNodeCases)) GTEST_SKIP() << kNodeCases << " is missing";
  std::map<TestValueKind, size_t> kinds = CheckCaseFiles(kNodeCases);
  EXPECT_GT(kinds[TestValueKind::kTensor], 1000u);
  EXPECT_GT(kinds[TestValueKind::kSequence], 10u);
  EXPECT_GT(kinds[TestValueKind::kAbsentOptional], 0u);
}

TEST(TestDataTest, EveryExportedOnnxNodeCaseFileMatchesItsModel) {
  const fs::path cases = testing::OnnxNodeCasesDir();
  if (!fs::exists(cases / ".export-complete")) {
    GTEST_SKIP() << "no exported onnx node cases at " << cases
                 << "; run scripts/export-onnx-node-cases (needs .venv)";
  }
  std::map<TestValueKind, size_t> kinds = CheckCaseFiles(cases);
  EXPECT_GT(kinds[TestValueKind::kTensor], 2000u);
  EXPECT_GT(kinds[TestValueKind::kSequence], 10u);
}

TEST(TestDataTest, SequenceFile) {
  const fs::path file = kNodeCases / "test_sequence_insert_at_back/test_data_set_0/input_0.pb";
  if (!fs::exists(file)) GTEST_SKIP() << file << " is missing";
  Result<TestValue> value = ReadTestValueFile(file, TestProtoKind::kSequence);
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_EQ(value->kind, TestValueKind::kSequence);
  EXPECT_FALSE(value->sequence.empty());
  // Guessing finds the same: no TensorProto is consistent with these bytes.
  Result<TestValue> guessed = ReadTestValueFile(file);
  ASSERT_TRUE(guessed.ok()) << guessed.status().ToString();
  EXPECT_EQ(guessed->kind, TestValueKind::kSequence);
  ASSERT_EQ(guessed->sequence.size(), value->sequence.size());
  EXPECT_EQ(guessed->sequence[0].bytes, value->sequence[0].bytes);
}

TEST(TestDataTest, OptionalFiles) {
  const fs::path absent = kNodeCases / "test_optional_has_element_empty/test_data_set_0/input_0.pb";
  const fs::path present = kNodeCases / "test_optional_get_element/test_data_set_0/input_0.pb";
  if (!fs::exists(absent) || !fs::exists(present)) GTEST_SKIP() << "optional cases missing";
  Result<TestValue> none = ReadTestValueFile(absent, TestProtoKind::kOptional);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->kind, TestValueKind::kAbsentOptional);
  Result<TestValue> some = ReadTestValueFile(present, TestProtoKind::kOptional);
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_NE(some->kind, TestValueKind::kAbsentOptional);
}

TEST(TestDataTest, TensorFileGuessedAndHinted) {
  const fs::path file = kNodeCases / "test_abs/test_data_set_0/input_0.pb";
  if (!fs::exists(file)) GTEST_SKIP() << file << " is missing";
  Result<TestValue> hinted = ReadTestValueFile(file, TestProtoKind::kTensor);
  Result<TestValue> guessed = ReadTestValueFile(file);
  ASSERT_TRUE(hinted.ok() && guessed.ok());
  EXPECT_EQ(guessed->kind, TestValueKind::kTensor);
  EXPECT_EQ(guessed->tensor.dims, std::vector<int64_t>({3, 4, 5}));
  EXPECT_EQ(guessed->tensor.dtype, DataType::kFloat32);
  EXPECT_EQ(guessed->tensor.bytes.size(), 3u * 4u * 5u * 4u);
  EXPECT_EQ(guessed->tensor.bytes, hinted->tensor.bytes);
}

std::vector<std::byte> BytesOf(const google::protobuf::MessageLite& message) {
  const std::string text = message.SerializeAsString();
  const auto* begin = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(begin, begin + text.size());
}

onnx::TensorProto SmallTensor(int64_t value) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(1);
  t.add_int64_data(value);
  return t;
}

TEST(TestDataTest, OptionalKinds) {
  onnx::OptionalProto with_tensor;
  with_tensor.set_name("o");
  with_tensor.set_elem_type(onnx::OptionalProto::TENSOR);
  *with_tensor.mutable_tensor_value() = SmallTensor(7);
  Result<TestValue> tensor =
      DecodeTestValue(BytesOf(with_tensor), "t.pb", TestProtoKind::kOptional);
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_EQ(tensor->kind, TestValueKind::kTensor);
  EXPECT_EQ(tensor->name, "o");
  ASSERT_EQ(tensor->tensor.bytes.size(), 8u);
  EXPECT_EQ(tensor->tensor.bytes[0], std::byte{7});

  onnx::OptionalProto with_sequence;
  with_sequence.set_elem_type(onnx::OptionalProto::SEQUENCE);
  auto* sequence = with_sequence.mutable_sequence_value();
  sequence->set_elem_type(onnx::SequenceProto::TENSOR);
  *sequence->add_tensor_values() = SmallTensor(1);
  *sequence->add_tensor_values() = SmallTensor(2);
  Result<TestValue> seq = DecodeTestValue(BytesOf(with_sequence), "s.pb", TestProtoKind::kOptional);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(seq->kind, TestValueKind::kSequence);
  ASSERT_EQ(seq->sequence.size(), 2u);
  EXPECT_EQ(seq->sequence[1].bytes[0], std::byte{2});
  EXPECT_EQ(seq->element_dtype, DataType::kInt64);

  onnx::OptionalProto mismatched;
  mismatched.set_elem_type(onnx::OptionalProto::TENSOR);
  *mismatched.mutable_sequence_value() = *sequence;
  EXPECT_FALSE(DecodeTestValue(BytesOf(mismatched), "m.pb", TestProtoKind::kOptional).ok());

  onnx::OptionalProto empty;
  empty.set_name("none");
  empty.set_elem_type(onnx::OptionalProto::TENSOR);
  Result<TestValue> absent = DecodeTestValue(BytesOf(empty), "e.pb", TestProtoKind::kOptional);
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_EQ(absent->kind, TestValueKind::kAbsentOptional);
}

TEST(TestDataTest, SequenceOfMixedTypesIsRefused) {
  onnx::SequenceProto sequence;
  sequence.set_elem_type(onnx::SequenceProto::TENSOR);
  *sequence.add_tensor_values() = SmallTensor(1);
  onnx::TensorProto f;
  f.set_data_type(onnx::TensorProto::FLOAT);
  f.add_float_data(1.0f);
  *sequence.add_tensor_values() = f;
  Result<TestValue> value =
      DecodeTestValue(BytesOf(sequence), "mixed.pb", TestProtoKind::kSequence);
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.status().message(), ::testing::HasSubstr("mixed.pb"));
}

TEST(TestDataTest, EncodeThenDecodeRoundTrips) {
  TestTensor tensor;
  tensor.name = "out";
  tensor.dtype = DataType::kInt16;
  tensor.dims = {2, 1};
  tensor.bytes = {std::byte{1}, std::byte{2}, std::byte{0xFE}, std::byte{0xFF}};
  Result<std::vector<std::byte>> encoded = EncodeTensorProto(tensor);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  Result<TestValue> decoded = DecodeTestValue(*encoded, "round trip");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->kind, TestValueKind::kTensor);
  EXPECT_EQ(decoded->name, "out");
  EXPECT_EQ(decoded->tensor.dtype, tensor.dtype);
  EXPECT_EQ(decoded->tensor.dims, tensor.dims);
  EXPECT_EQ(decoded->tensor.bytes, tensor.bytes);

  TestTensor strings;
  strings.name = "s";
  strings.dtype = DataType::kString;
  strings.dims = {2};
  strings.strings = {"x", ""};
  const fs::path file = fs::temp_directory_path() /
                        ("nxrt_test_data_" + std::to_string(std::random_device{}()) + ".pb");
  ASSERT_TRUE(WriteTensorProtoFile(file, strings).ok());
  Result<TestValue> read = ReadTestValueFile(file, TestProtoKind::kTensor);
  fs::remove(file);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->tensor.strings, strings.strings);
}

TEST(TestDataTest, EncodingRefusesDataThatDisagreesWithDims) {
  TestTensor tensor;
  tensor.dtype = DataType::kFloat32;
  tensor.dims = {3};
  tensor.bytes.resize(8);
  EXPECT_FALSE(EncodeTensorProto(tensor).ok());
}

TEST(TestDataTest, GarbageIsRefusedWithTheFileName) {
  const std::vector<std::byte> garbage = {std::byte{0xFF}, std::byte{0xFF}, std::byte{0x01}};
  Result<TestValue> value = DecodeTestValue(garbage, "junk.pb");
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.status().message(), ::testing::HasSubstr("junk.pb"));
  EXPECT_FALSE(ReadTestValueFile("/nonexistent/input_0.pb").ok());
}

// A file read as one kind says how to write a valid one.
TEST(TestDataTest, GarbageOfAKnownKindSaysHowToWriteOne) {
  const std::vector<std::byte> garbage = {std::byte{0xFF}, std::byte{0xFF}, std::byte{0x01}};
  const std::pair<TestProtoKind, const char*> kinds[] = {
      {TestProtoKind::kTensor, "numpy_helper.from_array"},
      {TestProtoKind::kSequence, "numpy_helper.from_list"},
      {TestProtoKind::kOptional, "numpy_helper.from_optional"}};
  for (const auto& [kind, writer] : kinds) {
    Result<TestValue> value = DecodeTestValue(garbage, "junk.pb", kind);
    ASSERT_FALSE(value.ok());
    EXPECT_THAT(value.status().message(), ::testing::HasSubstr("junk.pb"));
    EXPECT_THAT(value.status().message(), ::testing::HasSubstr(writer));
  }
}

// Python's reading of the same tensor files: raw bytes hashed with FNV-1a.
constexpr const char* kPythonReader = R"(
import sys
import numpy as np
from onnx import TensorProto, numpy_helper
PACKED = {TensorProto.INT4, TensorProto.UINT4}
for path in open(sys.argv[1]).read().split('\n'):
    if not path:
        continue
    t = TensorProto()
    t.ParseFromString(open(path, 'rb').read())
    if t.data_type == TensorProto.STRING or t.data_type in PACKED:
        continue
    raw = t.raw_data if t.HasField('raw_data') else numpy_helper.to_array(t).tobytes()
    h = 0xcbf29ce484222325
    for b in raw:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    dims = ','.join(str(d) for d in t.dims)
    print(path, t.data_type, dims, h)
)";

TEST(TestDataTest, TensorFilesAgreeWithPythonOnnx) {
  const fs::path python = fs::path(NXRT_SOURCE_DIR) / ".venv/bin/python";
  if (!fs::exists(python)) GTEST_SKIP() << python << " is missing; run scripts/setup-deps";
  if (!fs::exists(kNodeCases)) GTEST_SKIP() << kNodeCases << " is missing";
  // A spread of dtypes: every tensor file of the cast, abs and string cases.
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kNodeCases)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("test_cast", 0) != 0 && name != "test_abs" && name != "test_string_concat" &&
        name.rfind("test_equal", 0) != 0 && name.rfind("test_argmax", 0) != 0) {
      continue;
    }
    Result<Graph> graph = LoadModelFromFile(entry.path() / "model.onnx");
    ASSERT_TRUE(graph.ok());
    for (const CaseFile& file : FilesOfCase(entry.path(), *graph)) {
      if (graph->value(file.declared).kind == ValueKind::kTensor) files.push_back(file.path);
    }
  }
  ASSERT_GT(files.size(), 50u);
  const fs::path dir =
      fs::temp_directory_path() / ("nxrt_python_reader_" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  std::ofstream(dir / "reader.py") << kPythonReader;
  {
    std::ofstream list(dir / "files.txt");
    for (const fs::path& f : files) list << f.string() << "\n";
  }
  const std::string command = python.string() + " " + (dir / "reader.py").string() + " " +
                              (dir / "files.txt").string() + " > " + (dir / "out.txt").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream out(dir / "out.txt");
  std::string line;
  size_t compared = 0;
  while (std::getline(out, line)) {
    std::istringstream fields(line);
    std::string path, dims;
    int dtype = 0;
    uint64_t hash = 0;
    fields >> path >> dtype >> dims >> hash;
    if (fields.fail()) {  // a scalar prints no dims
      std::istringstream scalar(line);
      scalar >> path >> dtype >> hash;
      dims.clear();
    }
    Result<TestValue> value = ReadTestValueFile(path, TestProtoKind::kTensor);
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    EXPECT_EQ(static_cast<int>(value->tensor.dtype), dtype) << path;
    std::string our_dims;
    for (size_t i = 0; i < value->tensor.dims.size(); ++i) {
      our_dims += (i ? "," : "") + std::to_string(value->tensor.dims[i]);
    }
    EXPECT_EQ(our_dims, dims) << path;
    EXPECT_EQ(Fnv1a(value->tensor.bytes), hash) << path;
    ++compared;
  }
  fs::remove_all(dir);
  std::cout << "[ testdata ] " << compared << " tensor files agree with Python onnx\n";
  EXPECT_GT(compared, 50u);
}

}  // namespace
}  // namespace nxrt::graph
