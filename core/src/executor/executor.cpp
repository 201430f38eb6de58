#include "executor/executor.hpp"

#include <chrono>
#include <optional>

#include "partitioner/conv_fusion.hpp"
#include "partitioner/gelu_fusion.hpp"
#include "partitioner/gemm_fusion.hpp"
#include "partitioner/hard_swish_fusion.hpp"
#include "partitioner/integer_matmul_fusion.hpp"
#include "partitioner/matmul_fusion.hpp"
#include "partitioner/qdq_fusion.hpp"
#include "partitioner/swish_fusion.hpp"

namespace nxrt::executor {
Executor::Executor(const graph::Graph& graph, ExecutorShared& shared, const Executor* parent)
    : graph_(graph),
      shared_(shared),
      parent_(parent),
      frees_(parent == nullptr ? shared.device_graphs : nullptr) {}

Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::Build(const graph::Graph& graph, ExecutorShared& shared,
                                                  const graph::CapturePlan* capture_plan,
                                                  const Executor* parent) {
  std::unique_ptr<Executor> executor(new Executor(graph, shared, parent));
  std::vector<std::shared_ptr<const plugin_host::NodeView>> views;
  views.reserve(graph.nodes.size());
  for (uint32_t i = 0; i < graph.nodes.size(); ++i) {
    views.push_back(std::make_shared<const plugin_host::NodeView>(graph, graph::NodeId{i}));
  }
  const graph::CapturePlan no_capture;
  const graph::CapturePlan& plan = capture_plan ? *capture_plan : no_capture;
  NXRT_ASSIGN_OR_RETURN(partitioner::Partition partition,
                        partitioner::PartitionGraph(graph, views, shared.providers, plan));
  if (shared.fuse_nodes) {
    for (const auto fuse : {partitioner::FuseQdqChains, partitioner::FuseIntegerMatMulChains,
                            partitioner::FuseConvChains, partitioner::FuseMatMulChains,
                            partitioner::FuseGemmChains, partitioner::FuseHardSwishChains,
                            partitioner::FuseSwishChains, partitioner::FuseGeluChains}) {
      for (std::string& line : fuse(graph, views, shared.providers, plan, partition)) {
        executor->fusions_.push_back(std::move(line));
      }
    }
  }
  executor->placements_ = partition.placements;
  NXRT_RETURN_IF_ERROR(executor->BuildPlan(partition, views, capture_plan));
  NXRT_RETURN_IF_ERROR(executor->BuildBodies());
  if (parent == nullptr && shared.fixed_capacity_kv) executor->PlanInPlaceKv();
  executor->PlanViews();
  if (capture_plan != nullptr && shared.device_graphs != nullptr) executor->PlanSegments();
  executor->PlanBuffers();
  return executor;
}

// ---- runs -------------------------------------------------------------------

Status Executor::Run(std::span<const RunInput> inputs, std::optional<nxrt_graph_slot> slot,
                     const RunOptions& run_options) {
  const bool stoppable = run_options.terminate != nullptr || run_options.deadline.has_value();
  shared_.run_options = stoppable ? &run_options : nullptr;
  shared_.run_stopped = false;
  shared_.profile = run_options.profile;
  // The last run's outputs have been exported by now, so its buffers may
  // shrink before this one reserves them.
  EndBufferRuns(last_run_counted_);
  Status ran = RunBound(inputs, slot);
  last_run_counted_ = ran.ok();
  shared_.run_options = nullptr;
  shared_.profile = nullptr;
  // A stop inside a body comes back through the EP that ran the body, which
  // the ABI gives no code for cancellation.
  if (!ran.ok() && shared_.run_stopped && ran.code() != StatusCode::kCancelled) {
    return Status(StatusCode::kCancelled, ran.message());
  }
  return ran;
}

void Executor::EndBufferRuns(bool counted) {
  for (ValueBuffer& buffer : buffers_) buffer.EndRun(counted);
  for (auto& [key, body] : bodies_) body->EndBufferRuns(counted);
}

Status Executor::RunBound(std::span<const RunInput> inputs, std::optional<nxrt_graph_slot> slot) {
  NXRT_RETURN_IF_ERROR(BindNamedInputs(inputs));
  NXRT_RETURN_IF_ERROR(ResolveShapesIfChanged());
  Status executed = Execute(slot);
  if (executed.ok()) executed = WriteBackKv();
  if (shared_.device_graphs == nullptr) return executed;
  // A device-graph reset that failed while a buffer was freed.
  Status deferred = shared_.device_graphs->TakeDeferredError();
  return executed.ok() ? deferred : executed;
}

Status Executor::RunBody(std::span<const nxrt_value> inputs, std::span<nxrt_value> outputs) {
  if (inputs.size() != input_slots_.size() || outputs.size() != output_slots_.size()) {
    return InvalidArgument(graph_.model_path + ": body graph '" + graph_.name + "' takes " +
                           std::to_string(input_slots_.size()) + " inputs and gives " +
                           std::to_string(output_slots_.size()) + " outputs; called with " +
                           std::to_string(inputs.size()) + " and " +
                           std::to_string(outputs.size()));
  }
  // The body's kernels were made for its declared input types; a caller
  // handing another (Scan over bool into a float body) would be read wrong.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const graph::Value& declared = graph_.value(slots_[input_slots_[i]].value);
    if (inputs[i].kind != NXRT_VALUE_TENSOR || declared.kind != graph::ValueKind::kTensor ||
        declared.dtype == DataType::kUndefined) {
      continue;
    }
    const auto given = static_cast<DataType>(inputs[i].tensor.dtype);
    if (given != declared.dtype) {
      return InvalidArgument(graph_.model_path + ": body graph '" + graph_.name + "' input '" +
                             declared.name + "' is declared " +
                             std::string(graph::DataTypeName(declared.dtype)) + " but given " +
                             std::string(graph::DataTypeName(given)) +
                             "; make the body's input type match what the node passes it");
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) BindBorrowedValue(input_slots_[i], inputs[i]);
  BindOuterScope();
  NXRT_RETURN_IF_ERROR(ResolveShapesIfChanged());
  NXRT_RETURN_IF_ERROR(Execute(std::nullopt));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ValueSlot& slot = slots_[output_slots_[i]];
    if (!slot.ready) {
      return Internal(graph_.model_path + ": body output '" + DescribeSlot(output_slots_[i]) +
                      "' was not produced");
    }
    if (slot.memory != kHostMemory) {
      return Unsupported(graph_.model_path + ": body output '" + DescribeSlot(output_slots_[i]) +
                         "' is in device memory; place the body's last nodes on a host EP");
    }
    outputs[i] = ValueOf(slot);
  }
  return Status::Ok();
}

Status Executor::Execute(std::optional<nxrt_graph_slot> slot) {
  std::vector<device_graph::Segment>* segments =
      segment_at_.empty() ? nullptr : &shared_.device_graphs->segments();
  if (!slot && segments != nullptr) {
    // Eager dispatch rewrites the nodes' prepared values.
    for (device_graph::Segment& segment : *segments) segment.prepared_for = -1;
  }
  settled_hits_ = 0;
  // Each step's status is constructed in place, never assigned: a run
  // dispatches thousands of nodes and moving a status is not free.
  Status failed;
  for (size_t i = 0; i < nodes_.size();) {
    if (shared_.run_options != nullptr) {
      Status stop = StopBefore(nodes_[i]);
      if (!stop.ok()) {
        failed = std::move(stop);
        break;
      }
    }
    device_graph::Segment* segment = slot && segments != nullptr && segment_at_[i] != kNoSlot
                                         ? &(*segments)[segment_at_[i]]
                                         : nullptr;
    Status ran = shared_.profile != nullptr ? ProfiledStep(i, segment, slot)
                 : segment != nullptr       ? RunSegment(*segment, *slot)
                                            : RunNode(nodes_[i]);
    if (!ran.ok()) {
      failed = std::move(ran);
      break;
    }
    i = segment != nullptr ? segment->end : i + 1;
  }
  shared_.cache->AddPreboundHits(settled_hits_);
  return failed;
}

Status Executor::StopBefore(const PlannedNode& node) {
  const RunOptions& options = *shared_.run_options;
  const char* why = nullptr;
  if (options.terminate != nullptr && options.terminate->load(std::memory_order_relaxed)) {
    why = "its terminate flag was set";
  } else if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
    why = "its deadline passed";
  }
  if (why == nullptr) return Status::Ok();
  shared_.run_stopped = true;
  return Status(StatusCode::kCancelled, graph_.Describe(node.id) + ": the run stopped before it, " +
                                            why + " (RunOptions), so the run returns no outputs");
}

}  // namespace nxrt::executor
