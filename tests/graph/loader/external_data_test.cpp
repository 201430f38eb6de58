// Initializers stored as ONNX external data: read through a memory mapping
// from files inside the model's folder, and refused with an error naming the
// model, the initializer and the fault otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device random;
    root_ = fs::temp_directory_path() / ("nxrt_external_data_" + std::to_string(random()));
    model_dir_ = root_ / "model";
    fs::create_directories(model_dir_ / "weights");
    // 16 floats 0..15 in weights/w.bin, and a secret file outside the folder.
    std::vector<float> values(16);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    WriteFile(model_dir_ / "weights" / "w.bin",
              std::string(reinterpret_cast<const char*>(values.data()), 64));
    WriteFile(root_ / "secret.bin", std::string(64, 'S'));
  }
  void TearDown() override { fs::remove_all(root_); }

  static void WriteFile(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }

  // y = Add(x, w) with w external at `location`, `offset`, `length`.
  void WriteModel(const std::string& location, const std::string& offset = "",
                  const std::string& length = "", int64_t elements = 4) {
    onnx::ModelProto model = testing::NewModel();
    testing::AddInput(model, "x", {elements});
    auto* w = model.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(elements);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add_entry = [w](const std::string& key, const std::string& value) {
      auto* entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add_entry("location", location);
    if (!offset.empty()) add_entry("offset", offset);
    if (!length.empty()) add_entry("length", length);
    testing::AddNode(model, "Add", "add", {"x", "w"}, {"y"});
    testing::AddOutput(model, "y", {elements});
    WriteFile(model_file(), model.SerializeAsString());
  }

  fs::path model_file() const { return model_dir_ / "model.onnx"; }

  std::string ErrorOfLoad() {
    Result<Graph> graph = LoadModelFromFile(model_file());
    EXPECT_FALSE(graph.ok());
    if (graph.ok()) return "";
    EXPECT_THAT(graph.status().message(),
                AllOf(HasSubstr(model_file().string()), HasSubstr("initializer 'w'")));
    return graph.status().message();
  }

  fs::path root_;
  fs::path model_dir_;
};

std::vector<float> FloatsOf(const TensorData& data) {
  std::vector<float> out(data.bytes.size() / sizeof(float));
  std::memcpy(out.data(), data.bytes.data(), data.bytes.size());
  return out;
}

TEST_F(ExternalDataTest, ReadsTheRangeAtOffsetAndLength) {
  WriteModel("weights/w.bin", "16", "16");
  Result<Graph> graph = LoadModelFromFile(model_file());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Value& w = graph->value(*graph->FindValue("w"));
  ASSERT_TRUE(w.initializer.has_value());
  const TensorData& data = graph->weights->Get(*w.initializer);
  EXPECT_EQ(data.dtype, DataType::kFloat32);
  EXPECT_EQ(data.dims, std::vector<int64_t>({4}));
  EXPECT_THAT(FloatsOf(data), ::testing::ElementsAre(4.0f, 5.0f, 6.0f, 7.0f));
}

TEST_F(ExternalDataTest, WithoutLengthReadsToTheEnd) {
  WriteModel("weights/w.bin", "48");
  Result<Graph> graph = LoadModelFromFile(model_file());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const TensorData& data = graph->weights->Get(*graph->value(*graph->FindValue("w")).initializer);
  EXPECT_THAT(FloatsOf(data), ::testing::ElementsAre(12.0f, 13.0f, 14.0f, 15.0f));
}

TEST_F(ExternalDataTest, LoadFromBytesUsesTheGivenFolder) {
  WriteModel("weights/w.bin", "0", "16");
  std::ifstream in(model_file(), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()), text.size());
  Result<Graph> graph = LoadModelFromBytes(bytes, "in-memory", model_dir_);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const TensorData& data = graph->weights->Get(*graph->value(*graph->FindValue("w")).initializer);
  EXPECT_THAT(FloatsOf(data), ::testing::ElementsAre(0.0f, 1.0f, 2.0f, 3.0f));
  // From another folder the same bytes find no weights.
  Result<Graph> elsewhere = LoadModelFromBytes(bytes, "in-memory", root_);
  EXPECT_THAT(elsewhere.status().message(), HasSubstr("missing"));
}

TEST_F(ExternalDataTest, AbsoluteLocationIsRefused) {
  WriteModel((root_ / "secret.bin").string(), "0", "16");
  EXPECT_THAT(ErrorOfLoad(), HasSubstr("absolute"));
}

TEST_F(ExternalDataTest, DotDotLocationIsRefused) {
  WriteModel("weights/../../secret.bin", "0", "16");
  EXPECT_THAT(ErrorOfLoad(), HasSubstr(".."));
}

TEST_F(ExternalDataTest, DotDotThatStaysInsideIsAccepted) {
  WriteModel("weights/../weights/w.bin", "0", "16");
  Result<Graph> graph = LoadModelFromFile(model_file());
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
}

TEST_F(ExternalDataTest, SymlinkLeadingOutsideIsRefused) {
  fs::create_symlink(root_ / "secret.bin", model_dir_ / "link.bin");
  WriteModel("link.bin", "0", "16");
  EXPECT_THAT(ErrorOfLoad(), AllOf(HasSubstr("link"), HasSubstr("outside")));
}

TEST_F(ExternalDataTest, SymlinkedFolderLeadingOutsideIsRefused) {
  fs::create_directory_symlink(root_, model_dir_ / "up");
  WriteModel("up/secret.bin", "0", "16");
  EXPECT_THAT(ErrorOfLoad(), HasSubstr("outside"));
}

TEST_F(ExternalDataTest, SymlinkStayingInsideIsAccepted) {
  fs::create_symlink(model_dir_ / "weights" / "w.bin", model_dir_ / "alias.bin");
  WriteModel("alias.bin", "0", "16");
  Result<Graph> graph = LoadModelFromFile(model_file());
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
}

TEST_F(ExternalDataTest, MissingFileIsRefused) {
  WriteModel("weights/absent.bin", "0", "16");
  EXPECT_THAT(ErrorOfLoad(), AllOf(HasSubstr("absent.bin"), HasSubstr("missing")));
}

TEST_F(ExternalDataTest, OffsetBeyondTheFileIsRefused) {
  WriteModel("weights/w.bin", "65", "0", 0);
  EXPECT_THAT(ErrorOfLoad(), AllOf(HasSubstr("offset 65"), HasSubstr("beyond the end")));
}

TEST_F(ExternalDataTest, LengthRunningPastTheEndIsRefused) {
  WriteModel("weights/w.bin", "56", "16");
  EXPECT_THAT(ErrorOfLoad(), AllOf(HasSubstr("length 16"), HasSubstr("past the end")));
}

TEST_F(ExternalDataTest, LengthDisagreeingWithDimsIsRefused) {
  WriteModel("weights/w.bin", "0", "12");
  EXPECT_THAT(ErrorOfLoad(), AllOf(HasSubstr("need 16 bytes"), HasSubstr("holds 12")));
}

TEST_F(ExternalDataTest, MalformedOffsetIsRefused) {
  WriteModel("weights/w.bin", "sixteen", "16");
  EXPECT_THAT(ErrorOfLoad(), HasSubstr("'sixteen'"));
}

TEST_F(ExternalDataTest, EmptyLocationIsRefused) {
  WriteModel("", "0", "16");
  EXPECT_THAT(ErrorOfLoad(), HasSubstr("empty"));
}

}  // namespace
}  // namespace nxrt::graph
