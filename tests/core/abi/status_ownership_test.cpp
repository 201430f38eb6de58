#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nxrt_test/plugin_paths.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/host_api.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"
#include "plugin_host/plugin_status.hpp"

namespace {

using nxrt::StatusCode;
using namespace nxrt::plugin_host;

TEST(StatusOwnership, NullIsOkAndNothingIsReleased) {
  const size_t before = LiveStatusCount();
  EXPECT_TRUE(TakeStatus(nullptr).ok());
  EXPECT_EQ(LiveStatusCount(), before);
}

TEST(StatusOwnership, TakeStatusConvertsAndReleasesOnce) {
  const nxrt_host_api* host = HostApi();
  const size_t before = LiveStatusCount();
  nxrt_status* status = host->status_create(NXRT_STATUS_NOT_FOUND, "no such weight");
  EXPECT_EQ(LiveStatusCount(), before + 1);
  EXPECT_EQ(host->status_code(status), NXRT_STATUS_NOT_FOUND);
  EXPECT_STREQ(host->status_message(status), "no such weight");
  nxrt::Status converted = TakeStatus(status);
  EXPECT_EQ(LiveStatusCount(), before);
  EXPECT_EQ(converted.code(), StatusCode::kNotFound);
  EXPECT_EQ(converted.message(), "no such weight");
}

TEST(StatusOwnership, EveryCodeSurvivesTheRoundTrip) {
  const std::vector<std::pair<nxrt_status_code, StatusCode>> codes = {
      {NXRT_STATUS_INVALID_ARGUMENT, StatusCode::kInvalidArgument},
      {NXRT_STATUS_NOT_FOUND, StatusCode::kNotFound},
      {NXRT_STATUS_UNSUPPORTED, StatusCode::kUnsupported},
      {NXRT_STATUS_FAILED_PRECONDITION, StatusCode::kFailedPrecondition},
      {NXRT_STATUS_OUT_OF_MEMORY, StatusCode::kOutOfMemory},
      {NXRT_STATUS_UNAVAILABLE, StatusCode::kUnavailable},
      {NXRT_STATUS_INTERNAL, StatusCode::kInternal},
  };
  for (const auto& [abi, cpp] : codes) {
    nxrt::Status converted = TakeStatus(StatusCreate(abi, "m"));
    EXPECT_EQ(converted.code(), cpp);
    nxrt_status* back = MakeStatus(converted);
    EXPECT_EQ(StatusCodeOf(back), abi);
    StatusRelease(back);
  }
}

TEST(StatusOwnership, NullMessageBecomesEmpty) {
  nxrt_status* status = StatusCreate(NXRT_STATUS_INTERNAL, nullptr);
  EXPECT_STREQ(StatusMessageOf(status), "");
  StatusRelease(status);
}

TEST(StatusOwnership, AnOkCodeIsReportedAsAPluginBug) {
  nxrt::Status converted = TakeStatus(StatusCreate(NXRT_STATUS_OK, "fine"));
  EXPECT_EQ(converted.code(), StatusCode::kInternal);
  EXPECT_THAT(converted.message(), ::testing::HasSubstr("code OK"));
}

TEST(StatusOwnership, OkStatusMakesNoObject) {
  EXPECT_EQ(MakeStatus(nxrt::Status::Ok()), nullptr);
}

TEST(StatusOwnership, ReleasingNullIsIgnored) {
  const size_t before = LiveStatusCount();
  HostApi()->status_release(nullptr);
  EXPECT_EQ(LiveStatusCount(), before);
}

// Declines, refusals and injected failures of a real plugin all come back as
// statuses; none may leak.
TEST(StatusOwnership, PluginStatusesAreAllReleased) {
  const size_t before = LiveStatusCount();
  {
    auto plugin = Plugin::Load(nxrt_test::BuiltPlugin("mock"));
    ASSERT_TRUE(plugin.ok());
    auto refused = ExecutionProvider::Create(*plugin, {{"unknown", "1"}});
    EXPECT_FALSE(refused.ok());
    auto provider = ExecutionProvider::Create(
        *plugin, {{"claim", "Add"}, {"fail_create_kernel", "1"}, {"device_graphs", "1"}});
    ASSERT_TRUE(provider.ok());
    auto graph = nxrt_test::MakeSingleNodeGraph("Mul", {{2}, {2}}, {2});
    auto claim = (*provider)->Claim(*graph.View(), 17);
    ASSERT_TRUE(claim.ok());
    EXPECT_FALSE(claim->claimed);
    const std::vector<std::vector<int64_t>> dims = {{2}, {2}};
    auto failed = (*provider)->CreateKernel({}, graph.View(), nxrt_test::ConcreteShapes(dims), 17);
    EXPECT_FALSE(failed.ok());
    EXPECT_FALSE((*provider)->EndCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
    auto node = graph.View();
    nxrt_value_info info{};
    EXPECT_EQ(TakeStatus(HostApi()->node_input_info(node.get(), 9, &info)).code(),
              StatusCode::kInvalidArgument);
    int64_t value = 0;
    EXPECT_EQ(TakeStatus(HostApi()->node_attr_int(node.get(), "axis", &value)).code(),
              StatusCode::kNotFound);
  }
  EXPECT_EQ(LiveStatusCount(), before);
}

}  // namespace
