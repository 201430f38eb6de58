// A growable buffer in one execution provider's memory (or host memory),
// reused from run to run, with an allocation epoch.
//
// The epoch is unique per allocation in the process, so a captured device
// graph that baked this buffer's address can tell a buffer that was freed and
// reallocated (even at the same address) from the one it recorded. Before the
// memory goes, the buffer tells its listener, which resets the device graphs
// that may point into it.
//
// A buffer grown for one large shape gives the memory back once runs stop
// needing it: after kSlackRunsBeforeShrink counted runs in a row that each
// needed at most half its capacity, it is reallocated at the largest of
// those needs (docs/memory.md). Buffers under kShrinkFloorBytes are kept;
// host buffers of that size or more are pages mapped for them alone, so what
// a shrink gives back leaves the process.
#pragma once

#include <cstddef>
#include <cstdint>

#include "executor/memory_budget.hpp"
#include "nxrt/support/status.hpp"
#include "plugin_host/execution_provider.hpp"

namespace nxrt::executor {

class BufferFreeListener {
 public:
  virtual ~BufferFreeListener() = default;
  // Called before a bound buffer's memory, `bytes` at `data`, is released.
  virtual void BeforeBufferFree(const void* data, size_t bytes) = 0;
};

class ValueBuffer {
 public:
  ValueBuffer() = default;
  ~ValueBuffer() { Release(); }
  ValueBuffer(const ValueBuffer&) = delete;
  ValueBuffer& operator=(const ValueBuffer&) = delete;
  ValueBuffer(ValueBuffer&& other) noexcept;
  ValueBuffer& operator=(ValueBuffer&& other) noexcept;

  // Makes the buffer hold at least `bytes` in `provider`'s memory (host memory
  // when `provider` is null or has no memory of its own). Keeps the current
  // allocation when it is large enough and in the same memory; one it
  // outgrows is replaced by one at least half as large again (or by just
  // `bytes` where that is all `budget` has room for). The allocation is
  // counted in `budget` until released; a null budget counts nothing.
  Status Reserve(plugin_host::ExecutionProvider* provider, size_t bytes,
                 BufferFreeListener* listener, MemoryBudget* budget);
  void Release();

  // Closes one run of the buffer's owner. A run that was `counted` (it
  // completed) and needed at most half the capacity is slack; a run that
  // reserved nothing needed what the last one did. The buffer shrinks after
  // enough slack runs in a row, telling its listener first.
  void EndRun(bool counted);

  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  uint64_t epoch() const { return epoch_; }

  static constexpr int kSlackRunsBeforeShrink = 64;
  static constexpr size_t kShrinkFloorBytes = 64 * 1024;

 private:
  Status Allocate(plugin_host::ExecutionProvider* owner, size_t size, MemoryBudget* budget);
  void Shrink();

  plugin_host::ExecutionProvider* provider_ = nullptr;
  BufferFreeListener* listener_ = nullptr;
  MemoryBudget* budget_ = nullptr;
  void* data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t epoch_ = 0;
  // The shrink policy's record: the largest reservation of the run in
  // progress, the need of the last counted run, and the slack runs since the
  // last run that needed more than half the capacity, with their largest need.
  size_t run_need_ = 0;
  bool reserved_this_run_ = false;
  size_t last_need_ = 0;
  int slack_runs_ = 0;
  size_t slack_need_ = 0;
};

}  // namespace nxrt::executor
