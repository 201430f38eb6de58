// Randomly corrupted copies of real models: each must load or fail with an
// error that names the model, and never crash or abort.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "nxrt/graph/loader.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> ReadBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* begin = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(begin, begin + text.size());
}

TEST(CorruptedModelTest, ByteFlipsNeverCrash) {
  const fs::path node = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(node)) GTEST_SKIP() << node << " is missing";
  // Bodies, sequences, initializers and attributes of several kinds.
  const char* cases[] = {"test_if",        "test_loop11",
                         "test_scan9_sum", "test_sequence_insert_at_back",
                         "test_constant",  "test_conv_with_strides_padding",
                         "test_gather_0"};
  std::mt19937 random(12345);
  size_t loaded = 0;
  size_t refused = 0;
  for (const char* name : cases) {
    const std::vector<std::byte> original = ReadBytes(node / name / "model.onnx");
    ASSERT_FALSE(original.empty()) << name;
    std::uniform_int_distribution<size_t> position(0, original.size() - 1);
    std::uniform_int_distribution<int> value(0, 255);
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<std::byte> bytes = original;
      const int flips = 1 + trial % 3;
      for (int f = 0; f < flips; ++f) bytes[position(random)] = std::byte(value(random));
      Result<Graph> graph = LoadModelFromBytes(bytes, "corrupt.onnx", ".");
      if (graph.ok()) {
        ++loaded;
      } else {
        ++refused;
        EXPECT_NE(graph.status().message().find("corrupt.onnx"), std::string::npos)
            << graph.status().message();
        EXPECT_EQ(graph.status().message().find('\n'), std::string::npos)
            << graph.status().message();
      }
    }
  }
  std::cout << "[ corrupt  ] " << loaded << " corrupted models still load, " << refused
            << " refused\n";
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace nxrt::graph
