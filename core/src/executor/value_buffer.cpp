#include "executor/value_buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <utility>

namespace nxrt::executor {
namespace {

constexpr size_t kBufferAlignment = 64;

uint64_t NextEpoch() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Host memory is asked of no provider, so buffers of every host EP are
// interchangeable.
plugin_host::ExecutionProvider* MemoryOwner(plugin_host::ExecutionProvider* provider) {
  return provider != nullptr && provider->has_custom_memory() ? provider : nullptr;
}

// Large host buffers are pages mapped for them alone, so that a buffer
// released or shrunk returns its memory to the system: freed into the C
// heap, it would stay resident wherever the allocator's thresholds keep it.
bool IsMapped(plugin_host::ExecutionProvider* owner, size_t size) {
  return owner == nullptr && size >= ValueBuffer::kShrinkFloorBytes;
}

// `size` bytes in `owner`'s memory, or in host memory for a null owner.
Result<void*> AllocateIn(plugin_host::ExecutionProvider* owner, size_t size) {
  if (owner != nullptr) return owner->Alloc(size, kBufferAlignment);
  void* data = nullptr;
  if (IsMapped(owner, size)) {
    data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) data = nullptr;
  } else {
    data = ::operator new(size, std::align_val_t(kBufferAlignment), std::nothrow);
  }
  if (data == nullptr) {
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate " + std::to_string(size) + " bytes of host memory for a value");
  }
  return data;
}

}  // namespace

ValueBuffer::ValueBuffer(ValueBuffer&& other) noexcept
    : provider_(std::exchange(other.provider_, nullptr)),
      listener_(std::exchange(other.listener_, nullptr)),
      budget_(std::exchange(other.budget_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)),
      epoch_(std::exchange(other.epoch_, 0)),
      run_need_(std::exchange(other.run_need_, 0)),
      reserved_this_run_(std::exchange(other.reserved_this_run_, false)),
      last_need_(std::exchange(other.last_need_, 0)),
      slack_runs_(std::exchange(other.slack_runs_, 0)),
      slack_need_(std::exchange(other.slack_need_, 0)) {}

ValueBuffer& ValueBuffer::operator=(ValueBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    provider_ = std::exchange(other.provider_, nullptr);
    listener_ = std::exchange(other.listener_, nullptr);
    budget_ = std::exchange(other.budget_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    epoch_ = std::exchange(other.epoch_, 0);
    run_need_ = std::exchange(other.run_need_, 0);
    reserved_this_run_ = std::exchange(other.reserved_this_run_, false);
    last_need_ = std::exchange(other.last_need_, 0);
    slack_runs_ = std::exchange(other.slack_runs_, 0);
    slack_need_ = std::exchange(other.slack_need_, 0);
  }
  return *this;
}

Status ValueBuffer::Reserve(plugin_host::ExecutionProvider* provider, size_t bytes,
                            BufferFreeListener* listener, MemoryBudget* budget) {
  reserved_this_run_ = true;
  run_need_ = std::max(run_need_, bytes);
  plugin_host::ExecutionProvider* owner = MemoryOwner(provider);
  if (data_ != nullptr && capacity_ >= bytes && owner == provider_) return Status::Ok();
  // A buffer outgrown in its own memory (a growing KV cache gains a row each
  // decode step) takes half as much again, so a value that creeps up is
  // reallocated a few times rather than on every run.
  const bool outgrown = data_ != nullptr && owner == provider_;
  size_t size = std::max<size_t>(outgrown ? capacity_ + capacity_ / 2 : 1, bytes);
  Release();
  if (budget != nullptr && !budget->Fits(size)) size = std::max<size_t>(bytes, 1);
  listener_ = listener;
  return Allocate(owner, size, budget);
}

Status ValueBuffer::Allocate(plugin_host::ExecutionProvider* owner, size_t size,
                             MemoryBudget* budget) {
  if (budget != nullptr) NXRT_RETURN_IF_ERROR(budget->Take(size));
  Result<void*> data = AllocateIn(owner, size);
  if (!data.ok()) {
    if (budget != nullptr) budget->Give(size);
    return data.status();
  }
  provider_ = owner;
  budget_ = budget;
  data_ = *data;
  capacity_ = size;
  epoch_ = NextEpoch();
  return Status::Ok();
}

void ValueBuffer::EndRun(bool counted) {
  if (counted && reserved_this_run_) last_need_ = run_need_;
  run_need_ = 0;
  reserved_this_run_ = false;
  if (!counted) return;
  const bool slack =
      data_ != nullptr && capacity_ >= kShrinkFloorBytes && last_need_ <= capacity_ / 2;
  if (!slack) {
    slack_runs_ = 0;
    slack_need_ = 0;
    return;
  }
  slack_need_ = std::max(slack_need_, last_need_);
  if (++slack_runs_ >= kSlackRunsBeforeShrink) Shrink();
}

// Reallocates at the largest need of the slack runs, or releases the buffer
// when they needed none. Where the smaller allocation fails the buffer stays
// released, and the next run's reservation asks again.
void ValueBuffer::Shrink() {
  plugin_host::ExecutionProvider* owner = provider_;
  MemoryBudget* budget = budget_;
  const size_t size = slack_need_;
  slack_runs_ = 0;
  slack_need_ = 0;
  Release();
  if (size > 0) (void)Allocate(owner, size, budget);
}

void ValueBuffer::Release() {
  if (data_ == nullptr) return;
  if (listener_ != nullptr) listener_->BeforeBufferFree(data_, capacity_);
  if (provider_ != nullptr) {
    provider_->Free(data_);
  } else if (IsMapped(provider_, capacity_)) {
    munmap(data_, capacity_);
  } else {
    ::operator delete(data_, std::align_val_t(kBufferAlignment));
  }
  if (budget_ != nullptr) budget_->Give(capacity_);
  data_ = nullptr;
  capacity_ = 0;
  provider_ = nullptr;
  budget_ = nullptr;
}

}  // namespace nxrt::executor
