// The executor of one graph: runs its execution plan over value slots.
//
// A run binds the inputs (checked against the model before any kernel runs),
// resolves the concrete shape of every value it can from the symbol binding
// (kept while the input shapes repeat), and dispatches each node: its
// pre-bound kernel when the shapes match, else the kernel cache's
// get-or-create. While the input shapes repeat, a node whose last dispatch
// left nothing to redo (its values, kernel and buffers) is settled and goes
// straight to its kernel, so steady-state dispatch costs a call per node. Outputs of known shape
// are allocated by the executor from buffers reused across runs; the others are allocated by the
// kernel through the compute services. With a fixed-capacity KV cache, a present output bound at
// its past input's dims and dtype is that input's buffer instead, so the kernel appends in place
// and the caller's cache never moves. On a device-graph slot, segments of capture-eligible nodes
// are captured once warm and replayed while their bindings hold.
//
// If/Loop/Scan bodies get executors of their own, built with the graph and
// run through RunSubgraph with outer-scope values bound from the enclosing
// run. An executor runs one run at a time; the session serialises runs.
//
// The code follows a run's path, one file per part (executor.cpp holds the
// top of a run: Build, Run, Execute):
//   plan_builder.cpp      at build: slots, copies, views, shared buffers, segments
//   input_binding.cpp     the inputs, checked against the model and bound to slots
//   shape_resolution.cpp  the dims of every value the symbol binding fixes
//   node_dispatch.cpp     each node's values, kernel and compute; the settled fast path
//   segment_replay.cpp    device-graph segments: warmed, captured, replayed
//   compute_services.cpp  what a kernel asks of the executor while it computes
//   output_export.cpp     the outputs, copied out for the caller
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device_graph/device_graphs.hpp"
#include "executor/execution_plan.hpp"
#include "executor/value_slot.hpp"
#include "kernel_cache/kernel_cache.hpp"
#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/run_options.hpp"
#include "nxrt/tensor.hpp"
#include "nxrt/value.hpp"
#include "partitioner/partition.hpp"
#include "plugin_host/compute_context.hpp"

namespace nxrt::executor {

// What executors of one session share.
struct ExecutorShared {
  std::vector<partitioner::RankedProvider> providers;
  kernel_cache::KernelCache* cache = nullptr;
  device_graph::DeviceGraphs* device_graphs = nullptr;
  uint64_t executor_id = 0;
  // Present KV outputs are written into their past inputs' buffers.
  bool fixed_capacity_kv = false;
  // ... and an EP with memory of its own keeps them there between runs.
  bool kv_in_ep_memory = false;
  // Chains of nodes their provider runs as one kernel (conv_fusion.hpp).
  bool fuse_nodes = true;
  // Counts every value buffer's bytes against the session's limit.
  MemoryBudget* memory_budget = nullptr;
  // The run in progress's options, while they can stop it; else null.
  const RunOptions* run_options = nullptr;
  bool run_stopped = false;       // a check stopped the run in progress
  RunProfile* profile = nullptr;  // the run in progress's, or null
};

// One named input of a run, as given by the application.
struct RunInput {
  std::string_view name;
  const Tensor* tensor = nullptr;  // for a tensor
  const Value* value = nullptr;    // for a sequence or none; tensor is then null
};

class Executor : private plugin_host::ComputeServices {
 public:
  // Places the nodes of `graph` (see partitioner/), plans them, and builds
  // executors for the bodies of its control-flow nodes. `capture_plan` is
  // null for a body, which always runs eagerly. `parent` is the executor of
  // the enclosing graph, for outer-scope values.
  static Result<std::unique_ptr<Executor>> Build(const graph::Graph& graph, ExecutorShared& shared,
                                                 const graph::CapturePlan* capture_plan,
                                                 const Executor* parent);
  ~Executor() override;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const graph::Graph& graph() const { return graph_; }
  const std::vector<NodePlacement>& placements() const { return placements_; }
  // One line per chain of nodes fused into one kernel.
  const std::vector<std::string>& fusions() const { return fusions_; }
  // The capacity of this graph's value buffers (Session::value_buffer_bytes).
  size_t value_buffer_bytes() const;

  // Runs with named inputs; `slot` selects device-graph capture and replay.
  // `run_options` is checked before each node and segment, here and in the
  // bodies this run dispatches.
  Status Run(std::span<const RunInput> inputs, std::optional<nxrt_graph_slot> slot,
             const RunOptions& run_options);
  // The graph output or input named `name`, after a run.
  Result<size_t> OutputSlot(const std::string& name) const;
  Status ExportTensor(size_t slot, Tensor& out);
  Result<Value> ExportValue(size_t slot);

  // Runs this body graph: inputs by position, outputs host-owned until the
  // next run of the body.
  Status RunBody(std::span<const nxrt_value> inputs, std::span<nxrt_value> outputs);

 private:
  Executor(const graph::Graph& graph, ExecutorShared& shared, const Executor* parent);

  Status BuildPlan(const partitioner::Partition& partition,
                   std::span<const std::shared_ptr<const plugin_host::NodeView>> views,
                   const graph::CapturePlan* capture_plan);
  Status BuildBodies();
  void PlanInPlaceKv();
  void PlanViews();
  void PlanSegments();
  void PlanBuffers();
  void PlanSegmentSlots(device_graph::Segment& segment, std::span<const size_t> made_at) const;
  size_t MemoryOf(size_t provider) const;
  plugin_host::ExecutionProvider* MemoryProvider(size_t memory) const;
  BufferFreeListener* Listener() const;
  Status AbandonCapture(plugin_host::ExecutionProvider& provider, nxrt_graph_slot slot);
  bool SegmentIsPlanned(const device_graph::Segment& segment) const;

  // Input binding and shapes.
  Status BindNamedInputs(std::span<const RunInput> inputs);
  Status BindGivenInput(size_t slot, const RunInput& given);
  Status BindTensorInput(size_t slot, const Tensor& tensor);
  Status BindSequenceInput(size_t slot, const std::vector<Tensor>& elements);
  void BindBorrowedValue(size_t slot, const nxrt_value& value);
  Status CheckDeclaredType(size_t slot, graph::DataType dtype, std::span<const int64_t> dims) const;
  Status ResolveShapesIfChanged();
  void BindOuterScope();

  // Dispatch.
  // Closes the last run for the shrink policy of this graph's buffers and
  // its bodies' (value_buffer.hpp); `counted` when that run completed.
  void EndBufferRuns(bool counted);
  Status RunBound(std::span<const RunInput> inputs, std::optional<nxrt_graph_slot> slot);
  Status Execute(std::optional<nxrt_graph_slot> slot);
  // A kCancelled status when the run's options say to stop before `node`.
  Status StopBefore(const PlannedNode& node);
  Status RunTransfers(PlannedNode& node);
  Status PrepareNode(PlannedNode& node);
  bool BindInPlace(PlannedNode& node, size_t output);
  Status WriteBackKv();
  Status LookUpKernel(PlannedNode& node);
  // Runs the node's kernel, then checks what it left in the node's outputs:
  // a kernel that broke the ABI fails its node. A replay, which runs no
  // kernel, checks nothing again.
  Status ComputeNode(PlannedNode& node);
  Status CheckKernelOutputs(PlannedNode& node);
  void FinishNode(PlannedNode& node);
  Status RunNode(PlannedNode& node);
  // Runs plan node `index`, or `segment` when it starts there, and adds its
  // event to the run's profile (executor_profiling.cpp).
  Status ProfiledStep(size_t index, device_graph::Segment* segment,
                      std::optional<nxrt_graph_slot> slot);
  bool IsSettled(const PlannedNode& node) const;
  Status ComputeSettled(PlannedNode& node);
  void Settle(PlannedNode& node);
  Status RunSegment(device_graph::Segment& segment, nxrt_graph_slot slot);
  Status RunSegmentEagerly(device_graph::Segment& segment);
  Status CaptureSegment(device_graph::Segment& segment, nxrt_graph_slot slot);
  bool CollectBindings(const device_graph::Segment& segment,
                       device_graph::SegmentBindings& bindings);
  void CollectExternalBindings(const device_graph::Segment& segment,
                               device_graph::SegmentBindings& bindings) const;
  Status ReplayPrepared(device_graph::Segment& segment, nxrt_graph_slot slot, bool& replayed);
  nxrt_value ValueOf(const ValueSlot& slot) const;
  const std::string& DescribeSlot(size_t slot) const;

  // ComputeServices for the node being computed.
  Status AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims,
                        nxrt_tensor* out) override;
  Status AllocateSequenceOutput(size_t index, size_t length) override;
  Status AllocateSequenceElement(size_t index, size_t element, nxrt_dtype dtype,
                                 std::span<const int64_t> dims, nxrt_tensor* out) override;
  Status SetOutputNone(size_t index) override;
  Status SetStringElement(size_t index, size_t element, std::string_view text) override;
  Status RunSubgraph(std::string_view attr_name, std::span<const nxrt_value> inputs,
                     std::span<nxrt_value> outputs) override;
  Result<ValueSlot*> ComputingOutput(size_t index, const char* service);

  const graph::Graph& graph_;
  ExecutorShared& shared_;
  const Executor* parent_;
  std::vector<NodePlacement> placements_;
  std::vector<std::string> fusions_;
  // Counts the frees of this graph's buffers, which unsettle every node (a
  // buffer shared by several values may move while one of them is settled,
  // and any may shrink between runs), and passes each of the top graph's on
  // to the device graphs that may hold the buffer.
  class CountedFrees : public BufferFreeListener {
   public:
    explicit CountedFrees(BufferFreeListener* next) : next_(next) {}
    void BeforeBufferFree(const void* data, size_t bytes) override {
      ++count_;
      if (next_ != nullptr) next_->BeforeBufferFree(data, bytes);
    }
    uint64_t count() const { return count_; }

   private:
    BufferFreeListener* next_;
    uint64_t count_ = 0;
  };
  mutable CountedFrees frees_;        // declared before buffers_, which report to it
  std::vector<ValueBuffer> buffers_;  // the slots' buffers (PlanBuffers); never resized after
  std::vector<ValueSlot> slots_;
  std::vector<size_t> slot_of_value_;  // by value id
  std::vector<PlannedNode> nodes_;
  std::vector<nxrt_value> node_values_;  // the nodes' ABI values; never resized after the plan
  std::vector<size_t> input_slots_;      // graph inputs, in order
  // Initializers a run may replace by name; bound to their data otherwise.
  std::vector<size_t> overridable_slots_;
  std::vector<size_t> output_slots_;                              // graph outputs, in order
  std::vector<std::pair<size_t, const ValueSlot*>> outer_scope_;  // slot, enclosing slot
  std::map<std::pair<uint32_t, std::string>, std::unique_ptr<Executor>, std::less<>> bodies_;
  // Fixed-capacity KV read by an EP through a copy in its own memory:
  // (present slot, caller's past slot) pairs copied back after each run.
  std::vector<std::pair<size_t, size_t>> kv_write_back_;
  std::vector<size_t> segment_at_;  // per plan node: the segment it starts, or kNoSlot

  // Shapes of the last bound inputs; the resolution is kept while they repeat.
  std::vector<int64_t> bound_input_dims_;
  std::vector<int64_t> input_dims_scratch_;
  bool shapes_resolved_ = false;
  uint64_t shape_generation_ = 0;  // moves each time shapes are resolved anew

  bool last_run_counted_ = false;  // the last run completed (EndBufferRuns)

  // Pre-bound hits of this run's settled nodes, added to the cache's count
  // once per run.
  uint64_t settled_hits_ = 0;

  device_graph::SegmentBindings bindings_scratch_;
  PlannedNode* computing_ = nullptr;  // the node whose compute is running
};

}  // namespace nxrt::executor
