#include "thread_workspace.hpp"

#include <pthread.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_set>

namespace nxrt::cpu::onednn {
namespace {

struct Buffer {
  void* bytes = nullptr;
  size_t capacity = 0;
};

struct ThreadBuffers {
  Buffer buffers[2];  // indexed by Workspace

  ~ThreadBuffers() {
    for (Buffer& buffer : buffers) std::free(buffer.bytes);
  }
};

// Every thread's buffers. A thread_local object with a destructor would do
// this alone, but the C++ runtime keeps the library that defines one loaded
// until the thread ends, so the plugin could never be unloaded once the host's
// threads ran it. Instead a thread reaches its buffers through a plain
// pointer; a pthread key frees them when the thread ends, and the plugin frees
// those of threads still running when it is unloaded.
class Registry {
 public:
  Registry() : keyed_(pthread_key_create(&key_, &ThreadEnded) == 0) {}
  ~Registry() {
    // No thread-end call may reach this library once it is gone.
    if (keyed_) pthread_key_delete(key_);
    for (ThreadBuffers* buffers : live_) delete buffers;
  }
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  ThreadBuffers* Add() {
    auto* buffers = new ThreadBuffers();
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(buffers);
    if (keyed_) pthread_setspecific(key_, buffers);
    return buffers;
  }

 private:
  static void ThreadEnded(void* buffers);

  std::mutex mutex_;
  std::unordered_set<ThreadBuffers*> live_;
  pthread_key_t key_{};
  bool keyed_;
};

Registry& Threads() {
  static Registry registry;
  return registry;
}

void Registry::ThreadEnded(void* buffers) {
  Registry& registry = Threads();
  auto* ended = static_cast<ThreadBuffers*>(buffers);
  {
    std::lock_guard<std::mutex> lock(registry.mutex_);
    registry.live_.erase(ended);
  }
  delete ended;
}

}  // namespace

void* ThreadWorkspace(Workspace workspace, size_t bytes) {
  if (bytes == 0) return nullptr;
  thread_local ThreadBuffers* mine = nullptr;  // trivially destroyed: see Registry
  if (mine == nullptr) mine = Threads().Add();
  Buffer& buffer = mine->buffers[static_cast<int>(workspace)];
  if (bytes > buffer.capacity) {
    constexpr size_t kAlignment = 64;
    const size_t capacity = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    std::free(buffer.bytes);  // the old pages go back before the new ones are taken
    buffer.bytes = nullptr;
    buffer.capacity = 0;
    void* fresh = std::aligned_alloc(kAlignment, capacity);
    if (fresh == nullptr) throw std::bad_alloc();
    buffer.bytes = fresh;
    buffer.capacity = capacity;
  }
  return buffer.bytes;
}

}  // namespace nxrt::cpu::onednn
