// Host-side bookkeeping of CUDA graph captures: which slot is capturing, the
// tokens handed to the host, and the slot each token was captured in. Holds
// no CUDA objects, so the rules (one capture at a time, a token is live until
// reset, tokens are never reused) are tested without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

class GraphBook {
 public:
  // Throws INVALID_ARGUMENT for a slot the ABI does not define and
  // FAILED_PRECONDITION when a capture is already in progress.
  void BeginCapture(nxrt_graph_slot slot);
  // Mints a new nonzero token for the capture in progress in `slot`; throws
  // FAILED_PRECONDITION when that slot is not capturing.
  nxrt_graph_token EndCapture(nxrt_graph_slot slot);
  // Forgets the capture in progress after the device refused to end it.
  void AbandonCapture() { capturing_.reset(); }

  // Throws INVALID_ARGUMENT for a token that is not live.
  nxrt_graph_slot SlotOf(nxrt_graph_token token) const;
  // Ends a token's life; throws INVALID_ARGUMENT for a token that is not live.
  void Forget(nxrt_graph_token token);

  std::optional<nxrt_graph_slot> capturing() const { return capturing_; }
  std::vector<nxrt_graph_token> LiveTokens(nxrt_graph_slot slot) const;
  size_t live_count() const { return slot_of_token_.size(); }

  static void CheckSlot(nxrt_graph_slot slot);

 private:
  std::optional<nxrt_graph_slot> capturing_;
  nxrt_graph_token next_token_ = 1;
  std::map<nxrt_graph_token, nxrt_graph_slot> slot_of_token_;
};

}  // namespace nxrt::cuda
