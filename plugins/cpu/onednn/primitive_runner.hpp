// How the CPU EP runs oneDNN: one process-wide CPU engine, and a
// PrimitiveRunner per planned primitive that owns what an execution needs
// (a stream, the argument memories) so that running it only re-points the
// memories at the call's buffers; its scratchpad is the calling thread's
// (thread_workspace.hpp). A runner is used by one
// kernel, and the host never runs a kernel's calls concurrently, so runners
// need no locking.
//
// oneDNN runs on OpenMP and reads the calling thread's OpenMP thread count
// both when it plans a primitive and when it runs one; planning (through
// PlanningAttributes) and each execution first set that count to the CPU EP's
// `threads` (math_threads.hpp).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <span>
#include <vector>

namespace nxrt::cpu::onednn {

// The engine every CPU EP primitive and memory lives on; created on first use.
const dnnl::engine& Engine();

// The attributes every CPU EP primitive is planned with: a user scratchpad,
// so the runner supplies it and oneDNN keeps no per-thread buffers of its own.
// Call it just before planning: it also applies the EP's thread count.
dnnl::primitive_attr PlanningAttributes();

class PrimitiveRunner {
 public:
  PrimitiveRunner() = default;
  // `primitive` was planned with PlanningAttributes(); `scratchpad` is its
  // primitive descriptor's scratchpad_desc(); `args` names each argument the
  // execution takes, with its memory descriptor.
  PrimitiveRunner(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad,
                  std::span<const std::pair<int, dnnl::memory::desc>> args);
  // Moves only: a copy would share the argument memories the original
  // re-points.
  PrimitiveRunner(PrimitiveRunner&&) = default;
  PrimitiveRunner& operator=(PrimitiveRunner&&) = default;
  PrimitiveRunner(const PrimitiveRunner&) = delete;
  PrimitiveRunner& operator=(const PrimitiveRunner&) = delete;

  // Runs the primitive on `buffers`, one per argument in construction order;
  // a null pointer leaves that argument's previous buffer.
  void Run(std::span<const void* const> buffers);

  // For a primitive planned with runtime dims (DNNL_RUNTIME_DIM_VAL): gives
  // argument `index` (construction order) the concrete `desc` of the calls
  // that follow. It makes a new memory object, so callers rebind only when
  // the extents change, and a repeated shape allocates nothing.
  void Rebind(size_t index, const dnnl::memory::desc& desc);

 private:
  dnnl::primitive primitive_;
  dnnl::stream stream_;
  dnnl::memory scratchpad_;  // pointed at the thread's workspace on each run
  size_t scratchpad_bytes_ = 0;
  std::vector<dnnl::memory> memories_;
  std::vector<dnnl_exec_arg_t> args_;
};

// A runner reordering a buffer laid out as `from` into one laid out as `to`,
// on the compute path.
PrimitiveRunner PlanReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

// Reorders `from` (a buffer in layout `from_desc`) into `to` (in `to_desc`),
// once: for preparing constants, not for the compute path.
void ReorderOnce(const dnnl::memory::desc& from_desc, const void* from,
                 const dnnl::memory::desc& to_desc, void* to);

}  // namespace nxrt::cpu::onednn
