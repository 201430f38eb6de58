// The memory of the mock EP built as libep_mock_device.so: host RAM that the
// mock treats as its own device, so tests on machines without a GPU can check
// everything the host does for an EP with memory of its own. Every block is
// registered; kernels refuse a buffer outside the registered blocks, and the
// copy functions refuse a copy in the wrong direction, so a transfer the host
// forgets, or one it makes the wrong way, fails the run instead of passing
// silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace nxrt::mock {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // Throws nxrt::sdk::Error(OUT_OF_MEMORY) when the allocation fails.
  void* Alloc(size_t bytes, size_t alignment);
  // Ignores a pointer it did not allocate (free cannot report failure).
  void Free(void* ptr);
  // Whether [data, data + bytes) lies inside one live block.
  bool Holds(const void* data, size_t bytes) const;

  // Copies, throwing nxrt::sdk::Error(INVALID_ARGUMENT) when the device side
  // is not inside a block or the host side is.
  void CopyToDevice(void* dst, const void* src, size_t bytes) const;
  void CopyToHost(void* dst, const void* src, size_t bytes) const;

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, size_t> blocks_;  // start -> size in bytes
};

}  // namespace nxrt::mock
