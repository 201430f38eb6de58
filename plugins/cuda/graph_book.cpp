#include "graph_book.hpp"

#include <string>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {
namespace {

const char* SlotName(nxrt_graph_slot slot) {
  return slot == NXRT_GRAPH_SLOT_PRIMARY ? "primary" : "verify";
}

}  // namespace

void GraphBook::CheckSlot(nxrt_graph_slot slot) {
  if (slot != NXRT_GRAPH_SLOT_PRIMARY && slot != NXRT_GRAPH_SLOT_VERIFY) {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, "device-graph slot " +
                                                       std::to_string(static_cast<int>(slot)) +
                                                       " is neither primary (0) nor verify (1)");
  }
}

void GraphBook::BeginCapture(nxrt_graph_slot slot) {
  CheckSlot(slot);
  if (capturing_) {
    throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                     std::string("cannot begin a capture in the ") + SlotName(slot) +
                         " slot: the " + SlotName(*capturing_) + " slot is still capturing");
  }
  capturing_ = slot;
}

nxrt_graph_token GraphBook::EndCapture(nxrt_graph_slot slot) {
  CheckSlot(slot);
  if (capturing_ != slot) {
    throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION, std::string("cannot end a capture in the ") +
                                                          SlotName(slot) +
                                                          " slot: it is not capturing");
  }
  capturing_.reset();
  const nxrt_graph_token token = next_token_++;
  slot_of_token_.emplace(token, slot);
  return token;
}

nxrt_graph_slot GraphBook::SlotOf(nxrt_graph_token token) const {
  const auto found = slot_of_token_.find(token);
  if (found == slot_of_token_.end()) {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                     "device-graph token " + std::to_string(token) + " is not live");
  }
  return found->second;
}

void GraphBook::Forget(nxrt_graph_token token) {
  SlotOf(token);
  slot_of_token_.erase(token);
}

std::vector<nxrt_graph_token> GraphBook::LiveTokens(nxrt_graph_slot slot) const {
  std::vector<nxrt_graph_token> tokens;
  for (const auto& [token, owner] : slot_of_token_) {
    if (owner == slot) tokens.push_back(token);
  }
  return tokens;
}

}  // namespace nxrt::cuda
