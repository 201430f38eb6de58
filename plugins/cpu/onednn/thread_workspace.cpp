#include "thread_workspace.hpp"

#include <cstdlib>
#include <memory>
#include <new>

namespace nxrt::cpu::onednn {
namespace {

struct FreeAligned {
  void operator()(void* p) const { std::free(p); }
};

struct Buffer {
  std::unique_ptr<void, FreeAligned> bytes;
  size_t capacity = 0;
};

}  // namespace

void* ThreadWorkspace(Workspace workspace, size_t bytes) {
  thread_local Buffer buffers[2];
  if (bytes == 0) return nullptr;
  Buffer& buffer = buffers[static_cast<int>(workspace)];
  if (bytes > buffer.capacity) {
    constexpr size_t kAlignment = 64;
    const size_t capacity = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    buffer.bytes.reset();  // the old pages go back before the new ones are taken
    buffer.capacity = 0;
    void* fresh = std::aligned_alloc(kAlignment, capacity);
    if (fresh == nullptr) throw std::bad_alloc();
    buffer.bytes.reset(fresh);
    buffer.capacity = capacity;
  }
  return buffer.bytes.get();
}

}  // namespace nxrt::cpu::onednn
