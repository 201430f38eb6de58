// One captured device graph of the CPU EP: the kernel calls of a segment in
// order, each with its own copy of the input and output values (buffer
// addresses and dims) the host bound during capture. Everything lives in flat
// arrays built once, so a replay is a plain loop of virtual Compute calls
// with no dispatch, no lookups and no allocation. With `threads` above one
// the loop runs with a crew (parallel_blocks.hpp) until a replay finds a
// oneDNN execution inside, which needs its own parallel regions.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

class Recording {
 public:
  // Appends one call of `kernel`; copies the values and their dims, which
  // the host only keeps valid during the call.
  void Add(sdk::Kernel* kernel, std::span<const nxrt_value> inputs,
           std::span<const nxrt_value> outputs);
  // Points every recorded value at its copied dims; call once, after the
  // last Add, before the first Replay.
  void Seal();

  // Runs every call with no host services; kernels throw if they ask.
  // `threads`: the EP's.
  void Replay(const sdk::Host& host, int threads);

  size_t call_count() const { return calls_.size(); }
  // The kernels this recording calls, one entry per call; an entry is null
  // once its kernel was destroyed, which makes the recording stale.
  std::span<sdk::Kernel* const> kernels() const { return kernels_; }
  void ForgetKernel(size_t call) {
    kernels_[call] = nullptr;
    stale_ = true;
  }
  bool stale() const { return stale_; }

 private:
  struct Call {
    sdk::Kernel* kernel;
    nxrt_value* inputs;
    nxrt_value* outputs;
    uint32_t input_count;
    uint32_t output_count;
    // Offsets into values_, resolved to the pointers above by Seal.
    size_t first_value;
  };
  void CopyValue(const nxrt_value& value);

  std::vector<Call> calls_;
  std::vector<sdk::Kernel*> kernels_;
  std::vector<nxrt_value> values_;
  // For each value, the offset of its dims in dims_ (unused unless a tensor).
  std::vector<size_t> dims_at_;
  std::vector<int64_t> dims_;
  bool stale_ = false;
  std::atomic<bool> with_crew_{true};
};

}  // namespace nxrt::cpu
