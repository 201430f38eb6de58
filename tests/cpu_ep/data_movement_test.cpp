// Shape, data movement, indexing and generator ops on the ONNX node test
// cases.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpDataMovement, ShapeNodeCases) {
  ExpectFamilyPasses("shape", {"Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                               "Shape", "Size"});
}

TEST(CpuEpDataMovement, MovementNodeCases) {
  ExpectFamilyPasses("movement", {"Transpose", "Concat", "Split", "Slice", "Expand", "Tile", "Pad",
                                  "DepthToSpace", "SpaceToDepth"});
}

TEST(CpuEpDataMovement, IndexingNodeCases) {
  ExpectFamilyPasses("indexing",
                     {"Gather", "GatherElements", "GatherND", "ScatterElements", "Scatter",
                      "ScatterND", "Compress", "NonZero", "OneHot", "TopK", "CumSum", "Trilu"});
}

TEST(CpuEpDataMovement, GeneratorNodeCases) {
  ExpectFamilyPasses("generators", {"Constant", "ConstantOfShape", "Range", "EyeLike"});
}

TEST(CpuEpDataMovement, ResizeNodeCases) {
  ExpectFamilyPasses("resize", {"Resize", "Upsample"});
}

}  // namespace
}  // namespace nxrt_test
