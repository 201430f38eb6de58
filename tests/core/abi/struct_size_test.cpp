#include <cstddef>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "nxrt/ep_sdk.hpp"
#include "nxrt_test/constant_input_before_1_2.h"
#include "plugin_host/abi_table.hpp"
#include "plugin_host/host_api.hpp"

namespace {

using nxrt::plugin_host::NormalizedTable;

nxrt_status* Synchronize(nxrt_ep*) {
  return nullptr;
}
nxrt_bool Supported(const nxrt_ep*) {
  return 1;
}

TEST(StructSize, EntriesPastAShorterTableReadAsAbsent) {
  nxrt_ep_api plugin_table{};
  plugin_table.synchronize = Synchronize;
  plugin_table.device_graphs_supported = Supported;
  plugin_table.struct_size = offsetof(nxrt_ep_api, device_graphs_supported);
  const nxrt_ep_api seen = NormalizedTable(plugin_table);
  EXPECT_EQ(seen.synchronize, Synchronize);
  EXPECT_EQ(seen.device_graphs_supported, nullptr);
  EXPECT_EQ(seen.struct_size, sizeof(nxrt_ep_api));
}

TEST(StructSize, ATableLongerThanTheHostKnowsIsReadUpToTheHostsSize) {
  // A newer plugin's table: the host's struct followed by entries it does not know.
  struct NewerTable {
    nxrt_ep_api known;
    void* unknown_entries[4];
  } newer{};
  newer.known.struct_size = sizeof(NewerTable);
  newer.known.device_graphs_supported = Supported;
  std::memset(newer.unknown_entries, 0xAB, sizeof(newer.unknown_entries));
  const nxrt_ep_api seen = NormalizedTable(newer.known);
  EXPECT_EQ(seen.device_graphs_supported, Supported);
  EXPECT_EQ(seen.struct_size, sizeof(nxrt_ep_api));
}

TEST(StructSize, TableCoversChecksTheEndOfAField) {
  EXPECT_TRUE(nxrt::plugin_host::TableCovers(NXRT_TABLE_END_OF(nxrt_kernel_api, destroy),
                                             NXRT_TABLE_END_OF(nxrt_kernel_api, destroy)));
  EXPECT_FALSE(nxrt::plugin_host::TableCovers(offsetof(nxrt_kernel_api, destroy),
                                              NXRT_TABLE_END_OF(nxrt_kernel_api, destroy)));
}

TEST(StructSize, HostTableDeclaresItsFullSizeAndVersion) {
  const nxrt_host_api* host = nxrt::plugin_host::HostApi();
  EXPECT_EQ(host->struct_size, sizeof(nxrt_host_api));
  EXPECT_EQ(host->abi_version, NXRT_EP_ABI_VERSION);
  EXPECT_NE(host->run_subgraph, nullptr);
}

TEST(StructSize, SdkTreatsHostEntriesPastAnOlderHostsSizeAsAbsent) {
  nxrt_host_api older = *nxrt::plugin_host::HostApi();
  older.struct_size = offsetof(nxrt_host_api, log);  // an old host without logging
  const nxrt::sdk::Host host(&older, nullptr);
  EXPECT_EQ(host.api().log, nullptr);
  EXPECT_EQ(host.api().log_enabled, nullptr);
  EXPECT_FALSE(host.LogEnabled(NXRT_LOG_ERROR));
  host.Log(NXRT_LOG_ERROR, "dropped, not a crash");
  EXPECT_NE(host.api().status_create, nullptr);
}

TEST(StructSize, SdkReadsAnOlderHostsConstantArrayAtItsStride) {
  static_assert(sizeof(nxrt_test_constant_input_before_1_2) < sizeof(nxrt_constant_input));
  const int64_t dims[] = {3};
  const float first[] = {1, 2, 3}, second[] = {4, 5, 6};
  const nxrt_test_constant_input_before_1_2 older[] = {
      {sizeof(nxrt_test_constant_input_before_1_2), 1, NXRT_DTYPE_FLOAT32, 1, dims, first,
       sizeof(first)},
      {sizeof(nxrt_test_constant_input_before_1_2), 2, NXRT_DTYPE_FLOAT32, 1, dims, second,
       sizeof(second)}};
  const std::vector<nxrt_constant_input> seen =
      nxrt::sdk::detail::StructsOf(reinterpret_cast<const nxrt_constant_input*>(older), 2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].input_index, 2u);
  EXPECT_EQ(seen[1].bytes, second);
  EXPECT_EQ(seen[1].byte_size, sizeof(second));
  for (const nxrt_constant_input& c : seen) {
    EXPECT_EQ(c.bytes_persist, 0) << "a 1.1 host's bytes are borrowed for the call";
    EXPECT_EQ(c.struct_size, sizeof(nxrt_constant_input));
  }
}

TEST(StructSize, SdkKeepsTheFieldsOfACurrentHostsConstantArray) {
  const int64_t dims[] = {2};
  const float data[] = {1, 2};
  const nxrt_constant_input current[] = {
      {sizeof(nxrt_constant_input), 0, NXRT_DTYPE_FLOAT32, 1, dims, data, sizeof(data), 1},
      {sizeof(nxrt_constant_input), 3, NXRT_DTYPE_FLOAT32, 1, dims, data, sizeof(data), 0}};
  const std::vector<nxrt_constant_input> seen = nxrt::sdk::detail::StructsOf(current, 2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].bytes_persist, 1);
  EXPECT_EQ(seen[1].input_index, 3u);
  EXPECT_EQ(seen[1].bytes_persist, 0);
}

}  // namespace
