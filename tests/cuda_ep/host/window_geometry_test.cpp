// The CUDA EP's Conv and pooling windows: output extents and pads as the CPU
// EP resolves them, and which windows cuDNN runs directly, on a padded copy
// of the input, or (averages) not at all.
#include <gtest/gtest.h>

#include "window_geometry.hpp"

namespace {

using nxrt::cuda::AverageWindowProblem;
using nxrt::cuda::ResolveWindow;
using nxrt::cuda::WindowAttributes;
using nxrt::cuda::WindowAxis;

std::vector<WindowAxis> Resolve(const WindowAttributes& attributes, std::vector<int64_t> in,
                                std::vector<int64_t> kernel) {
  return ResolveWindow(attributes, in, kernel, "Test");
}

TEST(CudaWindow, ExplicitPadsAreBeginsThenEnds) {
  WindowAttributes a;
  a.pads = {1, 0, 2, 3};
  a.strides = {2, 1};
  a.dilations = {1, 2};
  const auto axes = Resolve(a, {7, 8}, {3, 3});
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(axes[0].pad_begin, 1);
  EXPECT_EQ(axes[0].pad_end, 2);
  EXPECT_EQ(axes[0].out, (7 + 3 - 3) / 2 + 1);
  EXPECT_EQ(axes[1].pad_begin, 0);
  EXPECT_EQ(axes[1].pad_end, 3);
  EXPECT_EQ(axes[1].Extent(), 5);
  EXPECT_EQ(axes[1].out, 8 + 3 - 5 + 1);
  // Padding 1 at both ends gives the same four windows; 0 does not give seven.
  EXPECT_TRUE(axes[0].CudnnExpresses());
  EXPECT_FALSE(axes[1].CudnnExpresses());
  EXPECT_EQ(axes[1].PaddedIn(), 8 + 3);
}

TEST(CudaWindow, SymmetricPadsRunOnCudnnDirectly) {
  WindowAttributes a;
  a.pads = {1, 1, 1, 1};
  const auto axes = Resolve(a, {64, 64}, {3, 3});
  EXPECT_EQ(axes[0].out, 64);
  EXPECT_TRUE(axes[0].CudnnExpresses());
  EXPECT_TRUE(axes[1].CudnnExpresses());
}

TEST(CudaWindow, SamePadsPutTheOddOneAtTheEndOrTheBeginning) {
  WindowAttributes a;
  a.auto_pad = "SAME_UPPER";
  a.strides = {2};
  a.pads = {5, 5};  // ignored under auto_pad
  auto axes = Resolve(a, {64}, {3});
  EXPECT_EQ(axes[0].out, 32);
  EXPECT_EQ(axes[0].pad_begin, 0);
  EXPECT_EQ(axes[0].pad_end, 1);
  a.auto_pad = "SAME_LOWER";
  axes = Resolve(a, {64}, {3});
  EXPECT_EQ(axes[0].pad_begin, 1);
  EXPECT_EQ(axes[0].pad_end, 0);
  a.auto_pad = "VALID";
  axes = Resolve(a, {64}, {3});
  EXPECT_EQ(axes[0].pad_begin + axes[0].pad_end, 0);
  EXPECT_EQ(axes[0].out, 31);
}

TEST(CudaWindow, AnExtraEndPadCuDnnCannotSeeMayStillMatch) {
  // 7 wide, window 2, stride 2, pads (0, 1): the end pad completes a fourth
  // window that padding 0 at both ends would drop.
  WindowAttributes a;
  a.pads = {0, 1};
  a.strides = {2};
  auto axes = Resolve(a, {7}, {2});
  EXPECT_EQ(axes[0].out, 4);
  EXPECT_FALSE(axes[0].CudnnExpresses());
  EXPECT_EQ(axes[0].PaddedIn(), 8);
  // 6 wide: the end pad adds no window, so cuDNN's windows are the same.
  axes = Resolve(a, {6}, {2});
  EXPECT_EQ(axes[0].out, 3);
  EXPECT_TRUE(axes[0].CudnnExpresses());
  EXPECT_EQ(axes[0].PaddedIn(), 6);
}

TEST(CudaWindow, CeilModeAddsAWindowThatStartsInsideTheInput) {
  WindowAttributes a;
  a.ceil_mode = true;
  a.strides = {2};
  auto axes = Resolve(a, {5}, {2});
  EXPECT_EQ(axes[0].out, 3);
  EXPECT_FALSE(axes[0].CudnnExpresses());
  EXPECT_EQ(axes[0].PaddedIn(), 6);
  // The window a rounded-up count would add starts in the end pad: dropped.
  a.pads = {0, 1};
  axes = Resolve(a, {4}, {2});
  EXPECT_EQ(axes[0].out, 2);
}

TEST(CudaWindow, AveragesCudnnCannotCountAsOnnxDoes) {
  WindowAttributes a;
  a.pads = {0, 1};
  auto axes = Resolve(a, {5}, {2});
  // A zero-padded copy counts its pads like ONNX's count_include_pad=1 ...
  EXPECT_FALSE(AverageWindowProblem(axes, true).has_value());
  // ... but cuDNN would count them as input when excluding pads.
  EXPECT_TRUE(AverageWindowProblem(axes, false).has_value());
  a.pads = {};
  a.ceil_mode = true;
  a.strides = {2};
  axes = Resolve(a, {5}, {2});
  EXPECT_TRUE(AverageWindowProblem(axes, true).has_value());
  EXPECT_TRUE(AverageWindowProblem(axes, false).has_value());
  a.pads = {1, 1};
  axes = Resolve(a, {4}, {2});
  EXPECT_FALSE(AverageWindowProblem(axes, false).has_value());
}

TEST(CudaWindow, AttributesThatDoNotFitAreInvalid) {
  WindowAttributes a;
  a.strides = {1, 1};
  EXPECT_THROW(Resolve(a, {5}, {2}), nxrt::sdk::Error);
  a.strides = {0};
  EXPECT_THROW(Resolve(a, {5}, {2}), nxrt::sdk::Error);
  a.strides = {};
  a.pads = {1, 1, 1};
  EXPECT_THROW(Resolve(a, {5}, {2}), nxrt::sdk::Error);
  a.pads = {};
  EXPECT_THROW(Resolve(a, {1}, {3}), nxrt::sdk::Error);
  a.auto_pad = "SAME_MIDDLE";
  EXPECT_THROW(Resolve(a, {5}, {2}), nxrt::sdk::Error);
}

}  // namespace
