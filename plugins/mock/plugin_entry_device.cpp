// The entry symbol of libep_mock_device.so: the mock EP with memory of its own
// (device_memory.hpp), named "mock_device". Its table adds the memory entries
// to the SDK's, as a GPU plugin's does.
#include "device_memory.hpp"
#include "mock_ep.hpp"
#include "nxrt/ep_sdk.hpp"

namespace {

using nxrt::mock::DeviceMemory;
using nxrt::mock::MockEp;
using nxrt::sdk::detail::EpBox;
using nxrt::sdk::detail::Guard;
using nxrt::sdk::detail::Unbox;

class MockDeviceEp : public MockEp {
 public:
  MockDeviceEp(const nxrt::sdk::Host& host, const nxrt::sdk::Options& options)
      : MockEp(host, options, true) {}
};

std::atomic<const nxrt_host_api*> host_table{nullptr};

MockEp& EpOf(EpBox* box) {
  return static_cast<MockEp&>(*box->ep);
}

nxrt_status* CreateEp(nxrt_host_context* context, const nxrt_options* options, nxrt_ep** out) {
  return nxrt::sdk::detail::CreateEp<MockDeviceEp>(context, options, out, host_table.load());
}

nxrt_status* Alloc(nxrt_ep* ep, size_t bytes, size_t alignment, void** out) {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { *out = EpOf(box).device_memory()->Alloc(bytes, alignment); });
}

void Free(nxrt_ep* ep, void* ptr) {
  EpOf(Unbox(ep)).device_memory()->Free(ptr);
}

nxrt_status* CopyToDevice(nxrt_ep* ep, void* dst, const void* src, size_t bytes) {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] {
    EpOf(box).device_memory()->CopyToDevice(dst, src, bytes);
    EpOf(box).Log("copy_to_device " + std::to_string(bytes));
  });
}

nxrt_status* CopyToHost(nxrt_ep* ep, void* dst, const void* src, size_t bytes) {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] {
    EpOf(box).device_memory()->CopyToHost(dst, src, bytes);
    EpOf(box).Log("copy_to_host " + std::to_string(bytes));
  });
}

nxrt_status* Synchronize(nxrt_ep* /*ep*/) {
  return nullptr;
}

const nxrt_kernel_api kernel_api = nxrt::sdk::detail::MakeKernelApi();

const nxrt_ep_api ep_api = [] {
  nxrt_ep_api api =
      nxrt::sdk::detail::MakeEpApi(CreateEp, &kernel_api, "mock_device", "nxrt", "1.0");
  api.alloc = Alloc;
  api.free = Free;
  api.copy_to_device = CopyToDevice;
  api.copy_to_host = CopyToHost;
  api.synchronize = Synchronize;
  return api;
}();

}  // namespace

extern "C" NXRT_EP_EXPORT nxrt_status* nxrt_ep_plugin_init(uint32_t host_abi_version,
                                                           const nxrt_host_api* host,
                                                           nxrt_host_context* host_context,
                                                           const nxrt_ep_api** out) {
  (void)host_context;
  return nxrt::sdk::detail::Init(host_abi_version, host, host_table, &ep_api, out);
}
