// Cast and CastLike on the ONNX node test cases, including the float16 and
// bfloat16 conversions and strings.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpCast, NodeCases) {
  ExpectFamilyPasses("cast", {"Cast", "CastLike"});
}

}  // namespace
}  // namespace nxrt_test
