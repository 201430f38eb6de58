// The CPU EP's own transform of 3x3 weights into oneDNN's Winograd layouts
// (onednn/winograd_weights.hpp) writes the bytes oneDNN's reorder writes,
// for each of its layouts and for channel counts their blocks pad.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "onednn/winograd_weights.hpp"

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// The weights layout of oneDNN's Winograd plan for a 3x3, stride-1, pad-1
// convolution of `channels` to `maps` on `size` x `size` images, or nullopt
// when this machine has no Winograd kernel for it.
std::optional<memory::desc> WinogradWeights(const dnnl::engine& engine, int64_t channels,
                                            int64_t maps, int64_t size) {
  const memory::desc x({1, channels, size, size}, memory::data_type::f32, Tag::nChw16c);
  const memory::desc y({1, maps, size, size}, memory::data_type::f32, Tag::nChw16c);
  const memory::desc w({maps, channels, 3, 3}, memory::data_type::f32, Tag::any);
  try {
    const dnnl::convolution_forward::primitive_desc plan(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_winograd, x, w, y, {1, 1},
                                        {1, 1}, {1, 1}),
        engine);
    return plan.weights_desc();
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

struct Case {
  int64_t channels, maps, size;
  dnnl_wino_memory_format_t layout;
};

class WinogradWeightsTest : public ::testing::TestWithParam<Case> {};

TEST_P(WinogradWeightsTest, WritesWhatOneDnnsReorderWrites) {
  const Case c = GetParam();
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const std::optional<memory::desc> wino = WinogradWeights(engine, c.channels, c.maps, c.size);
  if (!wino || wino->data.format_kind != dnnl_format_kind_wino ||
      wino->data.format_desc.wino_desc.wino_format != c.layout) {
    GTEST_SKIP() << "oneDNN plans no Winograd kernel with this layout on this machine";
  }
  const memory::desc given({c.maps, c.channels, 3, 3}, memory::data_type::f32, Tag::oihw);
  std::vector<float> w(static_cast<size_t>(c.maps * c.channels * 9));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>((i * 2654435761u) % 2003) / 997.0f - 1.0f;

  std::vector<char> expected(wino->get_size(), 1), actual(wino->get_size(), 2);
  dnnl::stream stream(engine);
  memory from(given, engine, w.data()), to(*wino, engine, expected.data());
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
  ASSERT_TRUE(nxrt::cpu::onednn::TransformWinogradWeights(given, w.data(), *wino, actual.data()));
  EXPECT_EQ(std::memcmp(expected.data(), actual.data(), expected.size()), 0);
}

TEST(WinogradWeights, DeclinesWhatItDoesNotWrite) {
  const memory::desc given({16, 16, 3, 3}, memory::data_type::f32, Tag::oihw);
  const memory::desc blocked({16, 16, 3, 3}, memory::data_type::f32, Tag::OIhw16i16o);
  std::vector<float> w(16 * 16 * 9), out(16 * 16 * 9);
  EXPECT_FALSE(nxrt::cpu::onednn::TransformWinogradWeights(given, w.data(), blocked, out.data()));
}

INSTANTIATE_TEST_SUITE_P(Layouts, WinogradWeightsTest,
                         ::testing::Values(Case{256, 256, 14, dnnl_wino_wei_aaOio},
                                           Case{24, 64, 14, dnnl_wino_wei_aaOio},
                                           Case{64, 64, 56, dnnl_wino_wei_aaOBiOo},
                                           Case{24, 40, 28, dnnl_wino_wei_aaOBiOo},
                                           Case{128, 128, 28, dnnl_wino_wei_OBaaIBOIio},
                                           Case{24, 256, 28, dnnl_wino_wei_OBaaIBOIio},
                                           Case{256, 40, 14, dnnl_wino_wei_OBaaIBOIio}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::to_string(info.param.channels) + "to" +
                                  std::to_string(info.param.maps) + "at" +
                                  std::to_string(info.param.size);
                         });

}  // namespace
