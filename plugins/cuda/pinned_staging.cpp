#include "pinned_staging.hpp"

#include <cstring>

#include "cuda_check.hpp"

namespace nxrt::cuda {

PinnedStaging::PinnedStaging(size_t bytes) : size_(bytes) {
  void* ring = nullptr;
  CheckCuda(cudaHostAlloc(&ring, bytes, cudaHostAllocDefault), "cudaHostAlloc(staging)");
  ring_ = static_cast<std::byte*>(ring);
}

PinnedStaging::~PinnedStaging() {
  for (const InFlight& copy : in_flight_) {
    cudaEventSynchronize(copy.done);
    cudaEventDestroy(copy.done);
  }
  for (cudaEvent_t event : spare_events_) cudaEventDestroy(event);
  cudaFreeHost(ring_);
}

bool PinnedStaging::CopyToDevice(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes > size_) return false;
  // Regions never wrap: one that would run past the end starts over at 0.
  size_t begin = head_;
  if (begin + bytes > size_) begin = 0;
  const size_t end = begin + bytes;
  WaitFor(begin, end);
  std::memcpy(ring_ + begin, src, bytes);
  CheckCuda(cudaMemcpyAsync(dst, ring_ + begin, bytes, cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync(host to device)");
  cudaEvent_t done = TakeEvent();
  CheckCuda(cudaEventRecord(done, stream), "cudaEventRecord(staging)");
  in_flight_.push_back({begin, end, done});
  head_ = end;
  return true;
}

void PinnedStaging::WaitFor(size_t begin, size_t end) {
  // Copies finish in stream order, so waiting for the newest one that reads
  // [begin, end) waits for every older one too.
  size_t retire = 0;
  for (size_t i = 0; i < in_flight_.size(); ++i) {
    if (in_flight_[i].begin < end && begin < in_flight_[i].end) retire = i + 1;
  }
  if (retire > 0) {
    CheckCuda(cudaEventSynchronize(in_flight_[retire - 1].done), "cudaEventSynchronize(staging)");
  }
  // Those, and the oldest of the rest that have finished, leave the ring.
  while (!in_flight_.empty() &&
         (retire > 0 || cudaEventQuery(in_flight_.front().done) == cudaSuccess)) {
    spare_events_.push_back(in_flight_.front().done);
    in_flight_.pop_front();
    if (retire > 0) --retire;
  }
}

cudaEvent_t PinnedStaging::TakeEvent() {
  if (!spare_events_.empty()) {
    cudaEvent_t event = spare_events_.back();
    spare_events_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  CheckCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate(staging)");
  return event;
}

}  // namespace nxrt::cuda
