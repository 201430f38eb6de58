// SessionOptions: how a Session is built. Execution providers are listed in
// priority order; each node goes to the first one that claims it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/graph/capture_mode.hpp"

namespace nxrt {

// One execution provider: a plugin short name ("cpu", "mock") or a library
// path, and the key/value options its instance is created with. The same
// plugin may appear twice with different options, as two instances.
struct ExecutionProviderSpec {
  std::string name_or_path;
  std::vector<std::pair<std::string, std::string>> options;
};

struct SessionOptions {
  // Priority order; empty means the "cpu" plugin alone.
  std::vector<ExecutionProviderSpec> providers;

  // Symbolic dims of the model's inputs fixed by name before shape
  // inference, as ONNX Runtime's AddFreeDimensionOverrideByName: ("batch",
  // 1) makes every dim named batch an extent of 1, so the shapes that follow
  // from it are static and a run that binds another extent is refused. A
  // name no input has fails the session's creation
  // (graph/free_dimensions.hpp).
  std::vector<std::pair<std::string, int64_t>> free_dimension_overrides;

  // Shape variants the kernel cache keeps per node; unset takes the
  // process default (NXRT_KERNEL_CACHE_VARIANTS_PER_NODE, else 4).
  std::optional<size_t> kernel_cache_variants_per_node;

  // Capture classifier mode; unset takes NXRT_CAPTURE_CLASSIFIER (fail-safe
  // by default).
  std::optional<graph::CaptureMode> capture_mode;

  // Record and replay device graphs for runs on a device-graph slot.
  bool device_graphs = true;

  // Rewrite the graph where the meaning stays the same and runs get cheaper:
  // before placement, nodes of constants are folded into initializers at
  // load and a BatchNormalization folds into the Conv before it
  // (graph_rewrites.hpp, session/constant_folding.hpp); after it, a Conv and the Relu and MaxPool
  // after it run as one kernel when their provider claims that (conv_fusion.hpp).
  // Session::graph_rewrites() lists what changed; off, every node runs as
  // the model spells it.
  bool rewrite_graph = true;

  // The KV cache is bound at fixed capacity while decoding: its capacity axis
  // does not grow, so the attention nodes may be captured, and the caller's
  // past tensors are the cache itself.
  //
  // For each recognised attention node (GroupQueryAttention past inputs 3,4
  // to present outputs 1,2; Attention 4,5 to 1,2; IndexShare 3,4 to 1,2)
  // whose past input is a graph input read by that node alone, a run that
  // binds the past tensor at exactly the dims and dtype shape inference gives
  // the present output for that run's input shapes hands the kernel the past
  // tensor's memory as the present output.
  // The kernel appends the new tokens there, so:
  //  - the run writes the caller's past tensors in place (the bytes the
  //    bound Tensor owns or borrows); they stay owned by the caller, must be
  //    writable and must not share memory with each other or other inputs;
  //  - a decode loop passes the same past tensors step after step and never
  //    copies the cache; their addresses stay fixed, so device-graph
  //    captures keep replaying;
  //  - a caller that also asks for a present output gets a copy of the
  //    updated past tensor (no copy when the output tensor is the very
  //    storage the past tensor borrows).
  // When the attention node runs on an EP with memory of its own, it reads a
  // copy of the past and writes its present there; after the run the present
  // is copied back into the caller's past tensor (same dims and dtype), so
  // the caller sees the same updated cache either way.
  // When the dims or dtype differ (a cache that grows by concatenation) or
  // are unknown before the run, or the past input is an initializer, also
  // read by another node or a graph output, the present output gets a buffer
  // of its own and the past tensor is only read.
  bool fixed_capacity_kv = false;

  // With fixed_capacity_kv, an attention node on an EP with memory of its
  // own keeps the cache there between runs instead of copying it in and out
  // on every run: the caller's past tensor is copied in when a run binds it
  // (the first run, or a tensor at another address, size or shape than the
  // run before), the EP updates its copy in place, and nothing is copied
  // back, so the caller's past tensor keeps the bytes it was bound with.
  // Presents asked for as outputs are copied out of the EP's memory. To
  // start over from other cache contents, bind another tensor. No effect
  // where the attention reads host memory.
  bool kv_in_ep_memory = false;

  // The most bytes the session's value buffers (the activations, outputs
  // and copies between memories its runs allocate, in any memory) may hold
  // at once; 0 for no limit. A run that would pass it fails with
  // kOutOfMemory naming the node, op, output and limit, before the memory is
  // allocated, and the session stays usable. Weights, and what an EP
  // allocates for itself, are not counted.
  size_t memory_limit_bytes = 0;
};

}  // namespace nxrt
