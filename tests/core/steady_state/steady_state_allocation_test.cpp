// A run at the shapes of the previous one allocates nothing on the host side:
// value buffers, shape scratch, kernel lookups and output tensors are all
// reused. Global operator new is replaced in this program to count
// allocations made during Run; each is attributed by its call stack to the
// mock plugin (whose own bookkeeping allocates) or to nxrt.
#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<size_t> host_allocations{0};
std::atomic<size_t> plugin_allocations{0};

// The innermost library frame decides: the mock plugin, or nxrt (and the test
// itself, when neither appears).
bool AllocatedByPlugin() {
  void* frames[64];
  const int depth = backtrace(frames, 64);
  for (int i = 1; i < depth; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) == 0 || info.dli_fname == nullptr) continue;
    if (std::strstr(info.dli_fname, "libep_mock") != nullptr) return true;
    if (std::strstr(info.dli_fname, "libnxrt.so") != nullptr) return false;
  }
  return false;
}

void NoteAllocation() {
  if (!counting.load(std::memory_order_relaxed)) return;
  thread_local bool inside = false;
  if (inside) return;
  inside = true;
  (AllocatedByPlugin() ? plugin_allocations : host_allocations).fetch_add(1);
  inside = false;
}

void* Allocate(size_t size, size_t alignment) {
  NoteAllocation();
  if (alignment <= alignof(std::max_align_t)) return std::malloc(size == 0 ? 1 : size);
  const size_t rounded = ((size == 0 ? 1 : size) + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}

}  // namespace

// The replacements below pair malloc with free; GCC, seeing them inlined into
// new/delete pairs, would otherwise flag a mismatch that is not there.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(size_t size) {
  void* p = Allocate(size, 0);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) {
  return operator new(size);
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size, 0);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size, 0);
}
void* operator new(size_t size, std::align_val_t alignment) {
  void* p = Allocate(size, static_cast<size_t>(alignment));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size, std::align_val_t alignment) {
  return operator new(size, alignment);
}
void* operator new(size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return Allocate(size, static_cast<size_t>(alignment));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace {

struct Counts {
  size_t host = 0;
  size_t plugin = 0;
};

class SteadyState : public ::testing::Test {
 protected:
  void SetUp() override {
    void* warm[4];
    backtrace(warm, 4);  // loads the unwinder before anything is counted
    auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), nxrt_test::Chain(),
                                         nxrt_test::MockOptions(nxrt_test::TestLogId()));
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
    x_.assign(8, 1.5f);
    inputs_.push_back({"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {2, 4}, x_.data(),
                                                 x_.size() * sizeof(float))});
  }

  // Runs `runs` times and counts the allocations made inside Run.
  Counts CountRuns(int runs, std::optional<nxrt::DeviceGraphSlot> slot) {
    host_allocations = 0;
    plugin_allocations = 0;
    for (int i = 0; i < runs; ++i) {
      x_[0] = static_cast<float>(i);
      counting = true;
      nxrt::Status status =
          slot ? session_->Run(*slot, inputs_, {}, outputs_) : session_->Run(inputs_, {}, outputs_);
      counting = false;
      EXPECT_TRUE(status.ok()) << status.ToString();
      EXPECT_EQ(outputs_.at(0).values<float>()[0], std::max(0.0f, (i + 1.0f) * i));
    }
    return {host_allocations.load(), plugin_allocations.load()};
  }

  std::unique_ptr<nxrt::Session> session_;
  std::vector<float> x_;
  std::vector<nxrt::NamedTensor> inputs_;
  std::vector<nxrt::Tensor> outputs_;
};

TEST_F(SteadyState, EagerRunsAtRepeatedShapesAllocateNothingInNxrt) {
  const Counts first = CountRuns(1, std::nullopt);
  EXPECT_GT(first.host, 0u) << "the first run allocates buffers; the counter must see it";
  CountRuns(2, std::nullopt);
  const Counts steady = CountRuns(100, std::nullopt);
  EXPECT_EQ(steady.host, 0u);
  EXPECT_GT(steady.plugin, 0u) << "the mock's own allocations are counted apart";
}

TEST_F(SteadyState, NewShapeAllocatesThenSettlesAgain) {
  CountRuns(3, std::nullopt);
  inputs_[0].tensor =
      nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {1, 4}, x_.data(), 4 * sizeof(float));
  const Counts changed = CountRuns(1, std::nullopt);
  EXPECT_GT(changed.host, 0u) << "a new shape rebinds symbols and makes kernels";
  EXPECT_EQ(CountRuns(50, std::nullopt).host, 0u);
}

// A run at a large shape grows the value buffers; runs at a small shape
// give that memory back after the documented number of them (64 slack
// runs, docs/memory.md), once, and then allocate nothing again.
TEST_F(SteadyState, BuffersGrownForALargeShapeShrinkBackThenSettle) {
  constexpr int kSlackRuns = 64;
  CountRuns(3, std::nullopt);
  const size_t small_bytes = session_->value_buffer_bytes();
  const auto bind_rows = [&](int64_t rows) {
    x_.assign(static_cast<size_t>(rows) * 4, 1.5f);
    inputs_[0].tensor = nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {rows, 4}, x_.data(),
                                             x_.size() * sizeof(float));
  };
  bind_rows(65536);
  CountRuns(1, std::nullopt);
  const size_t large_bytes = session_->value_buffer_bytes();
  ASSERT_GT(large_bytes, 1000 * small_bytes);

  bind_rows(2);
  CountRuns(kSlackRuns, std::nullopt);
  EXPECT_EQ(session_->value_buffer_bytes(), large_bytes) << "shrank before its slack runs";
  EXPECT_GT(CountRuns(1, std::nullopt).host, 0u) << "the shrink reallocates";
  EXPECT_EQ(session_->value_buffer_bytes(), small_bytes);
  EXPECT_EQ(CountRuns(50, std::nullopt).host, 0u);
  EXPECT_EQ(session_->value_buffer_bytes(), small_bytes);
}

TEST_F(SteadyState, ReplayedRunsAllocateNothingInNxrt) {
  CountRuns(3, nxrt::DeviceGraphSlot::kPrimary);
  ASSERT_EQ(session_->device_graph_counters().captures, 1u);
  const Counts steady = CountRuns(100, nxrt::DeviceGraphSlot::kPrimary);
  EXPECT_EQ(steady.host, 0u);
  EXPECT_EQ(session_->device_graph_counters().captures, 1u);
  EXPECT_GE(session_->device_graph_counters().replays, 100u);
}

TEST(SteadyStateKv, DecodeStepsOnAFixedCapacityCacheAllocateNothingInNxrt) {
  void* warm[4];
  backtrace(warm, 4);
  nxrt::SessionOptions options = nxrt_test::MockOptions(nxrt_test::TestLogId());
  options.fixed_capacity_kv = true;
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(),
                                       nxrt_test::BuildKvCacheModel({}), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::vector<float> zeros(nxrt_test::kCapacity * nxrt_test::kHeadSize, 0.0f);
  std::vector<nxrt::NamedTensor> inputs = nxrt_test::KvCacheInputs(zeros, zeros);
  std::vector<nxrt::Tensor> outputs;
  int runs = 0;
  // The first runs bind, plan and capture; the 50 after them are counted.
  auto steady_allocations = [&](std::optional<nxrt::DeviceGraphSlot> slot) {
    for (int i = 0; i < 53; ++i) {
      if (i == 3) host_allocations = 0;
      counting = i >= 3;
      nxrt::Status status =
          slot ? (*session)->Run(*slot, inputs, {}, outputs) : (*session)->Run(inputs, {}, outputs);
      counting = false;
      EXPECT_TRUE(status.ok()) << status.ToString();
      ++runs;
    }
    return host_allocations.load();
  };
  EXPECT_EQ(steady_allocations(std::nullopt), 0u);
  EXPECT_EQ(steady_allocations(nxrt::DeviceGraphSlot::kPrimary), 0u);
  EXPECT_EQ((*session)->device_graph_counters().captures, 1u);
  // The mock adds one to the cache per run, in the caller's tensor.
  EXPECT_EQ(inputs[3].tensor.values<float>()[0], static_cast<float>(runs));
}

}  // namespace
