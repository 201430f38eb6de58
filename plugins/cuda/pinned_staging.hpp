// A ring of page-locked host memory that copies into the device pass
// through, so a copy returns as soon as the source is read instead of
// waiting for the stream: the source is copied into the ring on the host,
// and the ring's bytes travel to the device in stream order. A region of the
// ring is handed out again only after the copy that read it has finished
// (an event per copy marks that).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <deque>
#include <vector>

namespace nxrt::cuda {

class PinnedStaging {
 public:
  // `bytes` of page-locked memory; throws when CUDA cannot provide them.
  explicit PinnedStaging(size_t bytes);
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Copies `bytes` from host `src` to device `dst` on `stream`: `src` may be
  // reused on return, and `dst` holds the bytes for everything queued on
  // `stream` after it. False, with nothing done, for a copy larger than the
  // ring.
  bool CopyToDevice(void* dst, const void* src, size_t bytes, cudaStream_t stream);

 private:
  struct InFlight {
    size_t begin = 0;
    size_t end = 0;
    cudaEvent_t done = nullptr;
  };
  // Waits for the copies still reading [begin, end), and recycles the events
  // of every copy known to have finished.
  void WaitFor(size_t begin, size_t end);
  cudaEvent_t TakeEvent();

  std::byte* ring_ = nullptr;
  size_t size_ = 0;
  size_t head_ = 0;                 // where the next region starts
  std::deque<InFlight> in_flight_;  // oldest first
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace nxrt::cuda
