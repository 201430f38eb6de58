// The entry symbol of libep_mock_device.so: the mock EP with memory of its own
// (device_memory.hpp), named "mock_device". Declaring the memory functions is
// what makes the SDK's table carry them, as it does for a GPU plugin.
#include <string>

#include "device_memory.hpp"
#include "mock_ep.hpp"
#include "nxrt/ep_sdk.hpp"

namespace {

class MockDeviceEp : public nxrt::mock::MockEp {
 public:
  MockDeviceEp(const nxrt::sdk::Host& host, const nxrt::sdk::Options& options)
      : MockEp(host, options, true) {}

  void* Alloc(size_t bytes, size_t alignment) { return device_memory()->Alloc(bytes, alignment); }
  void Free(void* ptr) { device_memory()->Free(ptr); }
  void CopyToDevice(void* dst, const void* src, size_t bytes) {
    device_memory()->CopyToDevice(dst, src, bytes);
    Log("copy_to_device " + std::to_string(bytes));
  }
  void CopyToHost(void* dst, const void* src, size_t bytes) {
    device_memory()->CopyToHost(dst, src, bytes);
    Log("copy_to_host " + std::to_string(bytes));
  }
  void Synchronize() {}
};

}  // namespace

NXRT_EP_DEFINE_PLUGIN(MockDeviceEp, "mock_device", "nxrt", "1.0")
