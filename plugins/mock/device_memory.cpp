#include "device_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::mock {
namespace {

using nxrt::sdk::Error;

uintptr_t Address(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

}  // namespace

DeviceMemory::~DeviceMemory() {
  for (const auto& [start, size] : blocks_) std::free(reinterpret_cast<void*>(start));
}

void* DeviceMemory::Alloc(size_t bytes, size_t alignment) {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  // aligned_alloc wants a size that is a multiple of the alignment, and a
  // zero-byte block still needs an address of its own.
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* block = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (block == nullptr) {
    throw Error(NXRT_STATUS_OUT_OF_MEMORY,
                "mock device: cannot allocate " + std::to_string(bytes) + " bytes");
  }
  std::lock_guard lock(mutex_);
  blocks_[Address(block)] = bytes;
  return block;
}

void DeviceMemory::Free(void* ptr) {
  std::lock_guard lock(mutex_);
  if (blocks_.erase(Address(ptr)) != 0) std::free(ptr);
}

bool DeviceMemory::Holds(const void* data, size_t bytes) const {
  const uintptr_t start = Address(data);
  std::lock_guard lock(mutex_);
  auto after = blocks_.upper_bound(start);
  if (after == blocks_.begin()) return false;
  const auto& [block, size] = *std::prev(after);
  return start + bytes <= block + size;
}

void DeviceMemory::CopyToDevice(void* dst, const void* src, size_t bytes) const {
  if (!Holds(dst, bytes) || Holds(src, bytes)) {
    throw Error(NXRT_STATUS_INVALID_ARGUMENT,
                "mock device: copy_to_device of " + std::to_string(bytes) +
                    " bytes must go from host memory into a device block");
  }
  std::memcpy(dst, src, bytes);
}

void DeviceMemory::CopyToHost(void* dst, const void* src, size_t bytes) const {
  if (!Holds(src, bytes) || Holds(dst, bytes)) {
    throw Error(NXRT_STATUS_INVALID_ARGUMENT,
                "mock device: copy_to_host of " + std::to_string(bytes) +
                    " bytes must go from a device block into host memory");
  }
  std::memcpy(dst, src, bytes);
}

}  // namespace nxrt::mock
