// Memory a primitive needs only while it runs (oneDNN's scratchpads, the
// blocked copies of a convolution's X and Y), borrowed from the calling
// thread instead of owned by each plan. A node's shape variants, and every
// node of a model, then reuse the same pages: a new shape faults in nothing
// its predecessors already touched, and a session's memory holds the largest
// need, not the sum over its variants.
#pragma once

#include <cstddef>

namespace nxrt::cpu::onednn {

// The workspaces a thread holds: a primitive's scratchpad, used only inside
// one execution, and activations, used across the executions of one kernel
// call. Separate, so a call's activations survive the scratchpads of its
// primitives.
enum class Workspace { kScratchpad, kActivations };

// At least `bytes` bytes, 64-byte aligned, of the calling thread's
// `workspace`, valid until the thread asks for that workspace again with more
// bytes, or ends, or the plugin is unloaded. Contents are not kept. Grows
// only: at a size it has seen, it allocates nothing. Null when `bytes` is 0.
void* ThreadWorkspace(Workspace workspace, size_t bytes);

}  // namespace nxrt::cpu::onednn
