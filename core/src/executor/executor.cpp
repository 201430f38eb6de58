#include "executor/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>

#include "executor/buffer_sharing.hpp"
#include "nxrt/graph/attention_kv_slots.hpp"
#include "nxrt/graph/symbol_binding.hpp"
#include "nxrt/graph/value_consumers.hpp"
#include "nxrt/graph/weight_store.hpp"
#include "nxrt/support/log.hpp"
#include "partitioner/conv_fusion.hpp"
#include "partitioner/gemm_fusion.hpp"
#include "partitioner/hard_swish_fusion.hpp"
#include "partitioner/matmul_fusion.hpp"

namespace nxrt::executor {
namespace {

using graph::DataType;

nxrt_value NoneValue() {
  nxrt_value v{};
  v.struct_size = sizeof(nxrt_value);
  v.kind = NXRT_VALUE_NONE;
  v.tensor.struct_size = sizeof(nxrt_tensor);
  return v;
}

std::string FormatDims(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string FormatDeclared(const graph::Graph& graph, const graph::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += i ? "," : "";
    text += shape[i].is_static() ? std::to_string(shape[i].extent())
                                 : graph.symbol(shape[i].symbol()).name;
  }
  return text + "]";
}

Result<size_t> DenseBytes(DataType dtype, std::span<const int64_t> dims) {
  NXRT_ASSIGN_OR_RETURN(const uint64_t count, graph::ElementCount(dims));
  if (dtype == DataType::kString) return static_cast<size_t>(count * sizeof(nxrt_string_view));
  NXRT_ASSIGN_OR_RETURN(const uint64_t bytes, graph::RawByteSize(dtype, count));
  return static_cast<size_t>(bytes);
}

// Sizes a string slot for `count` elements, all empty, and points it at them.
void PrepareStrings(ValueSlot& slot, size_t count) {
  slot.strings.resize(count);
  slot.string_views.resize(count);
  for (size_t i = 0; i < count; ++i) {
    slot.strings[i].clear();
    slot.string_views[i] = {slot.strings[i].data(), 0};
  }
  slot.data = slot.string_views.data();
  slot.byte_size = count * sizeof(nxrt_string_view);
}

// Binds `slot` to an initializer's data, which the weight store keeps.
void BindWeight(ValueSlot& slot, const graph::TensorData& data) {
  slot.ready = true;
  slot.kind = NXRT_VALUE_TENSOR;
  slot.dtype = data.dtype;
  slot.dims = data.dims;
  if (data.dtype == DataType::kString) {
    PrepareStrings(slot, data.strings.size());
    for (size_t s = 0; s < data.strings.size(); ++s) {
      slot.strings[s] = data.strings[s];
      slot.string_views[s] = {slot.strings[s].data(), slot.strings[s].size()};
    }
  } else {
    slot.data = const_cast<std::byte*>(data.bytes.data());
    slot.byte_size = data.bytes.size();
  }
}

// The dispatch fills its ABI values field by field in place: copying a
// whole struct built in a temporary stalls on store forwarding, once per
// input and output of every node.
void ClearValue(nxrt_value& v) {
  v.struct_size = sizeof(nxrt_value);
  v.kind = NXRT_VALUE_NONE;
  v.tensor.struct_size = sizeof(nxrt_tensor);
  v.tensor.dtype = nxrt_dtype{};
  v.tensor.memory = nxrt_memory_kind{};
  v.tensor.rank = 0;
  v.tensor.dims = nullptr;
  v.tensor.data = nullptr;
  v.tensor.byte_size = 0;
  v.sequence_length = 0;
  v.sequence = nullptr;
}

void WriteSlotValue(const ValueSlot& slot, nxrt_value& v) {
  ClearValue(v);
  v.kind = slot.kind;
  if (slot.kind == NXRT_VALUE_TENSOR) {
    v.tensor.dtype = static_cast<nxrt_dtype>(slot.dtype);
    v.tensor.memory = slot.memory == kHostMemory ? NXRT_MEMORY_HOST : NXRT_MEMORY_DEVICE;
    v.tensor.rank = slot.dims.size();
    v.tensor.dims = slot.dims.empty() ? nullptr : slot.dims.data();
    v.tensor.data = slot.data;
    v.tensor.byte_size = slot.byte_size;
  } else if (slot.kind == NXRT_VALUE_SEQUENCE) {
    v.sequence = slot.sequence;
    v.sequence_length = slot.sequence_length;
  }
}

// Run after run the dims repeat: compare in place before paying for a copy.
void CopyDims(const std::vector<int64_t>& from, std::vector<int64_t>& to) {
  if (from.size() == to.size()) {
    size_t d = 0;
    while (d < from.size() && from[d] == to[d]) ++d;
    if (d == from.size()) return;
  }
  to.assign(from.begin(), from.end());
}

EagerFallbackReason MismatchReason(const device_graph::SegmentBindings& now,
                                   const device_graph::SegmentBindings& captured) {
  if (now.shapes != captured.shapes) return EagerFallbackReason::kShapeChanged;
  if (now.addresses != captured.addresses) return EagerFallbackReason::kAddressChanged;
  return EagerFallbackReason::kEpochChanged;
}

bool SameBindings(const device_graph::SegmentBindings& a, const device_graph::SegmentBindings& b) {
  return a.shapes == b.shapes && a.addresses == b.addresses && a.epochs == b.epochs;
}

}  // namespace

Executor::Executor(const graph::Graph& graph, ExecutorShared& shared, const Executor* parent)
    : graph_(graph), shared_(shared), parent_(parent), frees_(shared.device_graphs) {}

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
    for (const auto fuse : {partitioner::FuseConvChains, partitioner::FuseMatMulChains,
                            partitioner::FuseGemmChains, partitioner::FuseHardSwishChains}) {
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

size_t Executor::MemoryOf(size_t provider) const {
  return shared_.providers[provider].provider->has_custom_memory() ? provider : kHostMemory;
}

plugin_host::ExecutionProvider* Executor::MemoryProvider(size_t memory) const {
  return memory == kHostMemory ? nullptr : shared_.providers[memory].provider.get();
}

BufferFreeListener* Executor::Listener() const {
  // Only the top graph's buffers can be bound into a device graph or shared.
  return parent_ == nullptr ? &frees_ : nullptr;
}

Status Executor::BuildPlan(const partitioner::Partition& partition,
                           std::span<const std::shared_ptr<const plugin_host::NodeView>> views,
                           const graph::CapturePlan* capture_plan) {
  const size_t value_count = graph_.values.size();
  slots_.resize(value_count);
  slot_of_value_.resize(value_count);
  for (uint32_t i = 0; i < value_count; ++i) {
    const graph::Value& value = graph_.values[i];
    ValueSlot& slot = slots_[i];
    slot_of_value_[i] = i;
    slot.value = graph::ValueId{i};
    slot.declared_dtype = value.dtype;
    if (value.producer.valid()) {
      slot.memory = MemoryOf(partition.provider_of_node[value.producer.index]);
    }
    if (value.initializer && graph_.weights) {
      BindWeight(slot, graph_.weights->Get(*value.initializer));
      slot.constant = value.is_constant();
      if (value.is_overridable()) {
        overridable_slots_.push_back(i);
        slot.shape_keyed = true;
        slot.moves = true;
      }
    }
    if (value.is_outer_scope) {
      const Executor* enclosing = parent_;
      const std::optional<graph::ValueId> outer =
          enclosing ? enclosing->graph_.FindValue(value.name) : std::nullopt;
      if (!outer) {
        return Internal(graph_.model_path + ": body value '" + value.name +
                        "' refers to an outer-scope value the enclosing graph does not have");
      }
      const ValueSlot& outer_slot = enclosing->slots_[enclosing->slot_of_value_[outer->index]];
      slot.memory = outer_slot.memory;
      slot.shape_keyed = true;
      slot.moves = true;
      outer_scope_.emplace_back(i, &outer_slot);
    }
  }
  for (graph::ValueId id : graph_.inputs) {
    input_slots_.push_back(slot_of_value_[id.index]);
    slots_[slot_of_value_[id.index]].shape_keyed = true;
    slots_[slot_of_value_[id.index]].moves = true;
  }
  for (graph::ValueId id : graph_.outputs) output_slots_.push_back(slot_of_value_[id.index]);

  std::map<std::pair<size_t, size_t>, size_t> mirrors;  // (slot, memory) -> mirror slot
  nodes_.reserve(graph_.nodes.size());
  size_t value_count_total = 0;
  for (uint32_t index = 0; index < graph_.nodes.size(); ++index) {
    if (partition.absorbed[index]) continue;  // its fused partner's kernel runs it
    const graph::Node& node = views[index]->node();
    PlannedNode& planned = nodes_.emplace_back();
    planned.id = graph::NodeId{index};
    planned.provider = partition.provider_of_node[index];
    planned.view = views[index];
    planned.opset = partition.opset_of_node[index];
    planned.capture_eligible = capture_plan && capture_plan->IsEligible(planned.id);
    const size_t memory = MemoryOf(planned.provider);
    for (const auto& input : node.inputs) {
      if (!input) {
        planned.input_slots.push_back(kNoSlot);
        continue;
      }
      size_t slot = slot_of_value_[input->index];
      if (slots_[slot].memory != memory) {
        auto [found, inserted] = mirrors.try_emplace({slot, memory}, slots_.size());
        if (inserted) {
          ValueSlot mirror;
          mirror.memory = memory;
          mirror.declared_dtype = slots_[slot].declared_dtype;
          mirror.shape_keyed = slots_[slot].constant;
          slots_.push_back(std::move(mirror));
          Transfer& transfer = planned.transfers.emplace_back();
          transfer.from_slot = slot;
          transfer.to_slot = found->second;
          transfer.once = slots_[slot].constant;
        }
        slot = found->second;
      }
      planned.input_slots.push_back(slot);
    }
    for (const auto& output : node.outputs) {
      planned.output_slots.push_back(output ? slot_of_value_[output->index] : kNoSlot);
    }
    planned.input_shapes.resize(node.inputs.size());
    planned.preallocated.resize(node.outputs.size(), false);
    planned.in_place_input.resize(node.outputs.size(), kNoSlot);
    value_count_total += node.inputs.size() + node.outputs.size();
  }
  node_values_.assign(value_count_total, NoneValue());
  nxrt_value* next = node_values_.data();
  for (PlannedNode& planned : nodes_) {
    planned.inputs = {next, planned.input_slots.size()};
    next += planned.input_slots.size();
    planned.outputs = {next, planned.output_slots.size()};
    next += planned.output_slots.size();
  }
  return Status::Ok();
}

void Executor::PlanInPlaceKv() {
  const graph::ValueConsumers consumers(graph_);
  const auto is_graph_output = [&](graph::ValueId id) {
    return std::find(graph_.outputs.begin(), graph_.outputs.end(), id) != graph_.outputs.end();
  };
  for (PlannedNode& planned : nodes_) {
    const graph::Node& node = graph_.node(planned.id);
    const std::optional<graph::KvCacheSlots> kv = graph::FindKvCacheSlots(node);
    if (!kv) continue;
    const size_t pairs = std::min(kv->past_inputs.size(), kv->present_outputs.size());
    for (size_t k = 0; k < pairs; ++k) {
      const size_t input = kv->past_inputs[k];
      const size_t output = kv->present_outputs[k];
      if (input >= node.inputs.size() || !node.inputs[input] || output >= node.outputs.size() ||
          !node.outputs[output]) {
        continue;
      }
      const graph::ValueId past = *node.inputs[input];
      const graph::Value& value = graph_.value(past);
      // Only the caller's own buffer, read by nobody else: writing it cannot
      // change what another node or output sees.
      if (!value.is_graph_input || value.initializer || consumers.Of(past).size() != 1 ||
          is_graph_output(past)) {
        continue;
      }
      // An EP that reads a copy in its own memory (a mirror slot) writes its
      // present there: into the copy itself when the cache stays in that
      // memory, else into a buffer the run copies back into the caller's.
      if (planned.input_slots[input] != slot_of_value_[past.index]) {
        if (!shared_.kv_in_ep_memory) {
          if (planned.output_slots[output] != kNoSlot) {
            kv_write_back_.emplace_back(planned.output_slots[output], slot_of_value_[past.index]);
          }
          continue;
        }
        // The past's only reader made the copy.
        for (Transfer& transfer : planned.transfers) {
          if (transfer.to_slot == planned.input_slots[input]) transfer.resident = true;
        }
      }
      planned.in_place_input[output] = input;
      if (planned.output_slots[output] != kNoSlot)
        slots_[planned.output_slots[output]].moves = true;
    }
  }
}

// A view op's output shares its input's buffer instead of copying it when
// nothing can change those bytes while the output is read: the input was
// made by a node of this graph in the same memory (not a caller's tensor, a
// constant or a copy from another memory), and the output is no output of a
// body graph, whose caller reads it in place while the body runs again. A
// top-level output is copied out when the run ends. Kernels never write
// their inputs, so every reader sees the bytes the producer left. The output
// is marked as moving, so settled readers take its address afresh on each
// run; an input that moves itself (a present updated in the caller's past)
// is rebound before the view on every run.
void Executor::PlanViews() {
  static constexpr std::string_view kViews[] = {"Identity", "Reshape", "Flatten", "Squeeze",
                                                "Unsqueeze"};
  for (PlannedNode& planned : nodes_) {
    const graph::Node& node = planned.view->node();
    if (!node.is_default_domain() ||
        std::find(std::begin(kViews), std::end(kViews), node.op_type) == std::end(kViews) ||
        planned.input_slots.empty() || planned.output_slots.empty() || !node.inputs[0] ||
        !node.outputs[0] || planned.in_place_input[0] != kNoSlot) {
      continue;
    }
    const size_t in = planned.input_slots[0];
    const size_t out = planned.output_slots[0];
    const graph::Value& input = graph_.value(*node.inputs[0]);
    const bool body_output =
        parent_ != nullptr && std::find(graph_.outputs.begin(), graph_.outputs.end(),
                                        *node.outputs[0]) != graph_.outputs.end();
    if (in != slot_of_value_[node.inputs[0]->index] || !input.producer.valid() ||
        slots_[in].constant || slots_[in].memory != slots_[out].memory || body_output) {
      continue;
    }
    planned.in_place_input[0] = 0;
    planned.views_input = true;
    slots_[out].moves = true;
  }
}

// Host values made and read within one run of the top graph share buffers
// when their lifetimes do not overlap. A value stays out when anything reads
// it outside the plan's explicit inputs, or past its last reader: graph
// inputs and outputs, constants, outer-scope values, values a view or an
// in-place KV update aliases, KV copied back after the run, and every value
// of a graph with bodies (which read outer values by name). Device memory
// stays out too: an EP may still be computing asynchronously into a buffer
// a later value would outgrow and free. Sequences and strings keep their
// bytes elsewhere (ValueSlot::elements, ::strings), so a buffer lent to one
// stays unused.
//
// A device-graph segment binds all its nodes' outputs before any of them
// computes, so a value made before a segment and read inside it lives to
// the segment's end: a buffer it shared with a value made later in the
// segment could otherwise grow, and lose its bytes, before it is read.
void Executor::PlanBuffers() {
  std::vector<std::optional<Lifetime>> lifetimes(slots_.size());
  if (parent_ == nullptr && bodies_.empty()) {
    std::vector<bool> excluded(slots_.size(), false);
    for (size_t slot : output_slots_) excluded[slot] = true;
    for (const auto& [present, past] : kv_write_back_) excluded[present] = excluded[past] = true;
    const std::vector<device_graph::Segment>* segments =
        segment_at_.empty() ? nullptr : &shared_.device_graphs->segments();
    size_t segment_begin = 0, segment_last = 0;
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const PlannedNode& node = nodes_[n];
      if (segments != nullptr && segment_at_[n] != kNoSlot) {
        segment_begin = n;
        segment_last = (*segments)[segment_at_[n]].end - 1;
      } else if (n > segment_last) {
        segment_begin = segment_last = n;
      }
      auto read = [&](size_t slot) {
        if (!lifetimes[slot]) return;
        Lifetime& life = *lifetimes[slot];
        life.last = std::max(life.last, life.first < segment_begin ? segment_last : n);
      };
      for (size_t slot : node.input_slots) {
        if (slot != kNoSlot) read(slot);
      }
      for (const Transfer& transfer : node.transfers) read(transfer.from_slot);
      for (size_t i = 0; i < node.output_slots.size(); ++i) {
        const size_t slot = node.output_slots[i];
        if (slot == kNoSlot) continue;
        if (node.in_place_input[i] != kNoSlot) {
          excluded[slot] = true;
          excluded[node.input_slots[node.in_place_input[i]]] = true;
        }
        if (!lifetimes[slot]) lifetimes[slot] = Lifetime{n, n};
      }
    }
    for (size_t s = 0; s < slots_.size(); ++s) {
      const ValueSlot& slot = slots_[s];
      if (excluded[s] || slot.constant || slot.moves || slot.shape_keyed ||
          slot.memory != kHostMemory) {
        lifetimes[s].reset();
      }
    }
  }
  const BufferAssignment assignment = AssignBuffers(lifetimes);
  const size_t sharing = static_cast<size_t>(std::count_if(
      lifetimes.begin(), lifetimes.end(), [](const auto& life) { return life.has_value(); }));
  GetLogger()->debug("{}: {} values share {} buffers; {} have their own", graph_.model_path,
                     sharing, assignment.buffer_count - (slots_.size() - sharing),
                     slots_.size() - sharing);
  buffers_.resize(assignment.buffer_count);
  for (size_t s = 0; s < slots_.size(); ++s) {
    slots_[s].buffer = &buffers_[assignment.buffer_of_value[s]];
  }
}

size_t Executor::value_buffer_bytes() const {
  size_t bytes = 0;
  for (const ValueBuffer& buffer : buffers_) bytes += buffer.capacity();
  return bytes;
}

Status Executor::BuildBodies() {
  for (uint32_t index = 0; index < graph_.nodes.size(); ++index) {
    for (const graph::Attribute& attribute : graph_.nodes[index].attributes) {
      if (attribute.type != graph::AttributeType::kGraph || !attribute.graph) continue;
      NXRT_ASSIGN_OR_RETURN(std::unique_ptr<Executor> body,
                            Build(*attribute.graph, shared_, nullptr, this));
      bodies_[{index, attribute.name}] = std::move(body);
    }
  }
  return Status::Ok();
}

void Executor::PlanSegments() {
  std::vector<device_graph::Segment>& segments = shared_.device_graphs->segments();
  segment_at_.assign(nodes_.size(), kNoSlot);
  // The plan position of the node making each slot's value; kNoSlot for
  // graph inputs, constants and copies. Fused nodes leave gaps in the plan,
  // so positions are not node ids.
  std::vector<size_t> position_of_node(graph_.nodes.size(), kNoSlot);
  for (size_t i = 0; i < nodes_.size(); ++i) position_of_node[nodes_[i].id.index] = i;
  std::vector<size_t> made_at(slots_.size(), kNoSlot);
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (!slots_[s].value.valid()) continue;
    const graph::NodeId producer = graph_.value(slots_[s].value).producer;
    if (producer.valid()) made_at[s] = position_of_node[producer.index];
  }
  auto capturable = [&](const PlannedNode& node) {
    return node.capture_eligible && shared_.providers[node.provider].provider->has_device_graphs();
  };
  // A segment's copies into the EP's memory all run before it computes (and
  // before a capture or replay), so each must read a value made before it.
  auto copies_from_before = [&](const PlannedNode& node, size_t begin) {
    return std::all_of(node.transfers.begin(), node.transfers.end(), [&](const Transfer& t) {
      return made_at[t.from_slot] == kNoSlot || made_at[t.from_slot] < begin;
    });
  };
  for (size_t i = 0; i < nodes_.size();) {
    if (!capturable(nodes_[i])) {
      ++i;
      continue;
    }
    device_graph::Segment segment;
    segment.begin = i;
    segment.provider = nodes_[i].provider;
    size_t end = i + 1;
    while (end < nodes_.size() && capturable(nodes_[end]) &&
           nodes_[end].provider == segment.provider && copies_from_before(nodes_[end], i)) {
      ++end;
    }
    segment.end = end;
    PlanSegmentSlots(segment, made_at);
    segment_at_[i] = segments.size();
    segments.push_back(std::move(segment));
    i = end;
  }
}

void Executor::PlanSegmentSlots(device_graph::Segment& segment,
                                std::span<const size_t> made_at) const {
  auto add_once = [](std::vector<size_t>& list, size_t slot_index) {
    if (std::find(list.begin(), list.end(), slot_index) == list.end()) list.push_back(slot_index);
  };
  for (size_t i = segment.begin; i < segment.end; ++i) {
    for (size_t slot_index : nodes_[i].input_slots) {
      if (slot_index == kNoSlot || slots_[slot_index].constant) continue;
      const size_t maker = made_at[slot_index];
      if (maker != kNoSlot && maker >= segment.begin && maker < segment.end) continue;
      add_once(segment.external_slots, slot_index);
    }
    for (size_t slot_index : nodes_[i].output_slots) {
      if (slot_index != kNoSlot) segment.output_slots.push_back(slot_index);
    }
    if (!nodes_[i].transfers.empty()) segment.transfer_nodes.push_back(i);
  }
}

// ---- inputs ---------------------------------------------------------------

const std::string& Executor::DescribeSlot(size_t slot) const {
  static const std::string kCopy = "(copy)";
  const graph::ValueId id = slots_[slot].value;
  return id.valid() ? graph_.value(id).name : kCopy;
}

Status Executor::CheckDeclaredType(size_t slot, DataType dtype,
                                   std::span<const int64_t> dims) const {
  const graph::Value& value = graph_.value(slots_[slot].value);
  const auto what = [&] { return graph_.model_path + ": input '" + value.name + "'"; };
  if (value.dtype != DataType::kUndefined && dtype != value.dtype) {
    return InvalidArgument(what() + " is " + std::string(graph::DataTypeName(dtype)) +
                           ", expected " + std::string(graph::DataTypeName(value.dtype)) +
                           "; convert the tensor");
  }
  if (!value.shape) return Status::Ok();
  const graph::Shape& shape = *value.shape;
  if (shape.size() != dims.size()) {
    return InvalidArgument(what() + " has rank " + std::to_string(dims.size()) + " " +
                           FormatDims(dims) + ", expected rank " + std::to_string(shape.size()) +
                           " " + FormatDeclared(graph_, shape) + "; fix the tensor's shape");
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].is_static() && shape[i].extent() != dims[i]) {
      return InvalidArgument(what() + " dim " + std::to_string(i) + " is " +
                             std::to_string(dims[i]) + ", expected " +
                             std::to_string(shape[i].extent()) + " of " +
                             FormatDeclared(graph_, shape) + "; fix the tensor's shape");
    }
    if (dims[i] < 0) {
      return InvalidArgument(what() + " dim " + std::to_string(i) + " is negative");
    }
  }
  return Status::Ok();
}

Status Executor::BindTensorInput(size_t slot_index, const Tensor& tensor) {
  ValueSlot& slot = slots_[slot_index];
  const auto what = [&] {
    return graph_.model_path + ": input '" + DescribeSlot(slot_index) + "'";
  };
  if (tensor.memory() != MemoryKind::kHost) {
    return Unsupported(what() + " is in device memory; bind inputs in host memory");
  }
  // Exporters declare scalars that their users feed as [1] (a voice-activity
  // model's sample rate), and ONNX Runtime takes them: a one-element tensor
  // for a declared scalar is bound as that scalar.
  std::span<const int64_t> dims = tensor.shape();
  const std::optional<graph::Shape>& declared = graph_.value(slot.value).shape;
  if (declared && declared->empty() && !dims.empty() && tensor.element_count() == 1) dims = {};
  NXRT_RETURN_IF_ERROR(CheckDeclaredType(slot_index, tensor.dtype(), dims));
  slot.kind = NXRT_VALUE_TENSOR;
  slot.dtype = tensor.dtype();
  slot.dims.assign(dims.begin(), dims.end());
  slot.ready = true;
  if (tensor.dtype() == DataType::kString) {
    const std::vector<std::string>& strings = tensor.strings();
    if (strings.size() != tensor.element_count()) {
      return InvalidArgument(what() + " holds " + std::to_string(strings.size()) +
                             " strings but its shape " + FormatDims(tensor.shape()) + " needs " +
                             std::to_string(tensor.element_count()));
    }
    slot.string_views.resize(strings.size());
    for (size_t i = 0; i < strings.size(); ++i) {
      slot.string_views[i] = {strings[i].data(), strings[i].size()};
    }
    slot.data = slot.string_views.data();
    slot.byte_size = strings.size() * sizeof(nxrt_string_view);
    return Status::Ok();
  }
  NXRT_ASSIGN_OR_RETURN(const size_t needed, DenseBytes(tensor.dtype(), tensor.shape()));
  if (tensor.byte_size() != needed) {
    return InvalidArgument(what() + " holds " + std::to_string(tensor.byte_size()) + " bytes but " +
                           std::string(graph::DataTypeName(tensor.dtype())) + " " +
                           FormatDims(tensor.shape()) + " needs " + std::to_string(needed));
  }
  slot.data = const_cast<void*>(tensor.data());
  slot.byte_size = needed;
  return Status::Ok();
}

Status Executor::BindSequenceInput(size_t slot_index, const std::vector<Tensor>& elements) {
  ValueSlot& slot = slots_[slot_index];
  slot.element_tensors.resize(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    const Tensor& t = elements[i];
    if (t.dtype() == DataType::kString || t.memory() != MemoryKind::kHost) {
      return Unsupported(graph_.model_path + ": input '" + DescribeSlot(slot_index) +
                         "': sequence elements must be numeric host tensors");
    }
    slot.element_tensors[i] = {
        sizeof(nxrt_tensor), static_cast<nxrt_dtype>(t.dtype()), NXRT_MEMORY_HOST, t.shape().size(),
        t.shape().data(),    const_cast<void*>(t.data()),        t.byte_size()};
  }
  slot.kind = NXRT_VALUE_SEQUENCE;
  slot.sequence = slot.element_tensors.data();
  slot.sequence_length = elements.size();
  slot.ready = true;
  return Status::Ok();
}

Status Executor::BindNamedInputs(std::span<const RunInput> inputs) {
  const std::string& model = graph_.model_path;
  const auto feedable = [&](std::string_view name) {
    for (size_t slot : input_slots_) {
      if (DescribeSlot(slot) == name) return true;
    }
    for (size_t slot : overridable_slots_) {
      if (DescribeSlot(slot) == name) return true;
    }
    return false;
  };
  for (size_t j = 0; j < inputs.size(); ++j) {
    if (!feedable(inputs[j].name)) {
      std::string names;
      for (size_t slot : input_slots_) names += (names.empty() ? "" : ", ") + DescribeSlot(slot);
      std::string defaults;
      for (size_t slot : overridable_slots_) {
        defaults += (defaults.empty() ? "" : ", ") + DescribeSlot(slot);
      }
      return InvalidArgument(
          model + ": '" + std::string(inputs[j].name) +
          "' is not an input of the model; its inputs are: " + names +
          (defaults.empty() ? "" : "; its overridable initializers: " + defaults));
    }
    for (size_t k = 0; k < j; ++k) {
      if (inputs[k].name == inputs[j].name) {
        return InvalidArgument(model + ": input '" + std::string(inputs[j].name) +
                               "' is given twice; give each input once");
      }
    }
  }
  const auto given_for = [&](const graph::Value& value) -> const RunInput* {
    for (const RunInput& input : inputs) {
      if (input.name == value.name) return &input;
    }
    return nullptr;
  };
  for (size_t slot : input_slots_) {
    const graph::Value& value = graph_.value(slots_[slot].value);
    const RunInput* given = given_for(value);
    if (given == nullptr) {
      std::string expected = std::string(graph::DataTypeName(value.dtype));
      if (value.shape) expected += " " + FormatDeclared(graph_, *value.shape);
      return InvalidArgument(model + ": input '" + value.name + "' is missing; give it as " +
                             expected);
    }
    NXRT_RETURN_IF_ERROR(BindGivenInput(slot, *given));
  }
  // An overridable initializer the run does not feed takes its default again.
  for (size_t slot : overridable_slots_) {
    const graph::Value& value = graph_.value(slots_[slot].value);
    const RunInput* given = given_for(value);
    if (given != nullptr) {
      NXRT_RETURN_IF_ERROR(BindGivenInput(slot, *given));
    } else {
      BindWeight(slots_[slot], graph_.weights->Get(*value.initializer));
    }
  }
  return Status::Ok();
}

Status Executor::BindGivenInput(size_t slot, const RunInput& given) {
  const graph::Value& value = graph_.value(slots_[slot].value);
  const Value::Kind given_kind =
      given.tensor != nullptr ? Value::Kind::kTensor : given.value->kind();
  const bool fits =
      value.kind == graph::ValueKind::kUnknown ||
      (given_kind == Value::Kind::kTensor && (value.kind == graph::ValueKind::kTensor ||
                                              value.kind == graph::ValueKind::kOptionalTensor)) ||
      (given_kind == Value::Kind::kSequence &&
       (value.kind == graph::ValueKind::kSequence ||
        value.kind == graph::ValueKind::kOptionalSequence)) ||
      (given_kind == Value::Kind::kNone && (value.kind == graph::ValueKind::kOptionalTensor ||
                                            value.kind == graph::ValueKind::kOptionalSequence));
  if (!fits) {
    static constexpr const char* kGivenNames[] = {"absent", "a tensor", "a sequence"};
    return InvalidArgument(graph_.model_path + ": input '" + value.name + "' is given as " +
                           kGivenNames[static_cast<int>(given_kind)] + ", but the model takes " +
                           (value.kind == graph::ValueKind::kSequence ||
                                    value.kind == graph::ValueKind::kOptionalSequence
                                ? "a sequence"
                                : "a tensor") +
                           (value.kind == graph::ValueKind::kOptionalTensor ||
                                    value.kind == graph::ValueKind::kOptionalSequence
                                ? " or nothing"
                                : ""));
  }
  if (given.tensor != nullptr) return BindTensorInput(slot, *given.tensor);
  if (given.value->is_tensor()) return BindTensorInput(slot, given.value->tensor());
  if (given.value->is_sequence()) return BindSequenceInput(slot, given.value->sequence());
  slots_[slot].kind = NXRT_VALUE_NONE;
  slots_[slot].ready = true;
  return Status::Ok();
}

void Executor::BindBorrowedValue(size_t slot_index, const nxrt_value& value) {
  ValueSlot& slot = slots_[slot_index];
  slot.kind = value.kind;
  slot.ready = true;
  if (value.kind == NXRT_VALUE_TENSOR) {
    slot.dtype = static_cast<DataType>(value.tensor.dtype);
    slot.dims.assign(value.tensor.dims, value.tensor.dims + value.tensor.rank);
    slot.data = value.tensor.data;
    slot.byte_size = value.tensor.byte_size;
  } else if (value.kind == NXRT_VALUE_SEQUENCE) {
    slot.sequence = value.sequence;
    slot.sequence_length = value.sequence_length;
  }
}

void Executor::BindOuterScope() {
  for (const auto& [slot_index, outer] : outer_scope_) {
    ValueSlot& slot = slots_[slot_index];
    slot.kind = outer->kind;
    slot.dtype = outer->dtype;
    slot.dims.assign(outer->dims.begin(), outer->dims.end());
    slot.data = outer->data;
    slot.byte_size = outer->byte_size;
    slot.sequence = outer->sequence;
    slot.sequence_length = outer->sequence_length;
    slot.ready = outer->ready;
  }
}

Status Executor::ResolveShapesIfChanged() {
  input_dims_scratch_.clear();
  auto append = [&](const ValueSlot& slot) {
    input_dims_scratch_.push_back(slot.kind == NXRT_VALUE_TENSOR
                                      ? static_cast<int64_t>(slot.dims.size())
                                      : -1 - static_cast<int64_t>(slot.kind));
    input_dims_scratch_.push_back(static_cast<int64_t>(slot.dtype));
    input_dims_scratch_.insert(input_dims_scratch_.end(), slot.dims.begin(), slot.dims.end());
  };
  for (size_t slot : input_slots_) append(slots_[slot]);
  for (size_t slot : overridable_slots_) append(slots_[slot]);
  for (const auto& outer : outer_scope_) append(slots_[outer.first]);
  if (shapes_resolved_ && input_dims_scratch_ == bound_input_dims_) return Status::Ok();

  graph::SymbolBinding binding(graph_);
  auto bind = [&](size_t slot_index, const std::string& what) -> Status {
    const ValueSlot& slot = slots_[slot_index];
    const graph::Value& value = graph_.value(slot.value);
    if (slot.kind != NXRT_VALUE_TENSOR || !value.shape) return Status::Ok();
    return binding.BindShape(*value.shape, slot.dims, what);
  };
  for (size_t slot : input_slots_) {
    NXRT_RETURN_IF_ERROR(bind(slot, graph_.model_path + ": input '" + DescribeSlot(slot) + "'"));
  }
  for (size_t slot : overridable_slots_) {
    NXRT_RETURN_IF_ERROR(
        bind(slot, graph_.model_path + ": overridable initializer '" + DescribeSlot(slot) + "'"));
  }
  for (const auto& outer : outer_scope_) {
    Status bound =
        bind(outer.first, graph_.model_path + ": outer value '" + DescribeSlot(outer.first) + "'");
    if (!bound.ok()) GetLogger()->debug("{}", bound.message());
  }
  Status derived = binding.EvaluateDerived();
  if (!derived.ok()) GetLogger()->debug("{}", derived.message());

  for (ValueSlot& slot : slots_) {
    slot.planned_known = false;
    if (!slot.value.valid() || slot.constant) continue;
    const graph::Value& value = graph_.value(slot.value);
    // An output the model declared no type for (kUnknown) is a tensor, as
    // claims see it, once inference has given it a dtype and shape.
    if (!value.producer.valid() || !value.shape || value.dtype == DataType::kUndefined ||
        (value.kind != graph::ValueKind::kTensor && value.kind != graph::ValueKind::kUnknown)) {
      continue;
    }
    Result<std::vector<int64_t>> dims = binding.Resolve(*value.shape);
    if (!dims.ok()) continue;
    Result<size_t> bytes = DenseBytes(value.dtype, dims.value());
    if (!bytes.ok()) continue;
    slot.planned_known = true;
    slot.planned_dims = std::move(dims).value();
    slot.planned_bytes = bytes.value();
  }
  bound_input_dims_.assign(input_dims_scratch_.begin(), input_dims_scratch_.end());
  shapes_resolved_ = true;
  ++shape_generation_;
  return Status::Ok();
}

// ---- runs -------------------------------------------------------------------

Status Executor::Run(std::span<const RunInput> inputs, std::optional<nxrt_graph_slot> slot,
                     const RunOptions& run_options) {
  const bool stoppable = run_options.terminate != nullptr || run_options.deadline.has_value();
  shared_.run_options = stoppable ? &run_options : nullptr;
  shared_.run_stopped = false;
  shared_.profile = run_options.profile;
  Status ran = RunBound(inputs, slot);
  shared_.run_options = nullptr;
  shared_.profile = nullptr;
  // A stop inside a body comes back through the EP that ran the body, which
  // the ABI gives no code for cancellation.
  if (!ran.ok() && shared_.run_stopped && ran.code() != StatusCode::kCancelled) {
    return Status(StatusCode::kCancelled, ran.message());
  }
  return ran;
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

Status Executor::RunNode(PlannedNode& node) {
  if (IsSettled(node)) return ComputeSettled(node);
  NXRT_RETURN_IF_ERROR(RunTransfers(node));
  NXRT_RETURN_IF_ERROR(PrepareNode(node));
  NXRT_RETURN_IF_ERROR(LookUpKernel(node));
  NXRT_RETURN_IF_ERROR(ComputeNode(node));
  FinishNode(node);
  Settle(node);
  return Status::Ok();
}

// A node settles when nothing its dispatch prepares can differ at the same
// shapes except where its inputs' bytes live: every input's dims are fixed
// by the shape generation, every output has a planned buffer of its own, and
// any copy it needs was of a constant, already made.
void Executor::Settle(PlannedNode& node) {
  if (!shared_.cache->StillBound(node.binding)) return;
  for (const Transfer& transfer : node.transfers) {
    if (!transfer.once || !transfer.done) return;
  }
  node.moving_inputs.clear();
  for (size_t i = 0; i < node.input_slots.size(); ++i) {
    if (node.input_slots[i] == kNoSlot) continue;
    const ValueSlot& slot = slots_[node.input_slots[i]];
    if (slot.kind != NXRT_VALUE_TENSOR ||
        !(slot.constant || slot.shape_keyed || slot.planned_known)) {
      return;
    }
    if (slot.moves) node.moving_inputs.push_back(static_cast<uint32_t>(i));
  }
  for (size_t i = 0; i < node.output_slots.size(); ++i) {
    const size_t slot_index = node.output_slots[i];
    if (slot_index == kNoSlot) continue;
    const ValueSlot& slot = slots_[slot_index];
    if (!node.preallocated[i] || node.in_place_input[i] != kNoSlot ||
        slot.kind != NXRT_VALUE_TENSOR || slot.dtype == DataType::kString ||
        slot.data != slot.buffer->data()) {
      return;
    }
  }
  node.settled_generation = shape_generation_;
  node.settled_erasures = shared_.cache->erasures();
  node.settled_frees = frees_.count();
}

bool Executor::IsSettled(const PlannedNode& node) const {
  return node.settled_generation == shape_generation_ &&
         node.settled_erasures == shared_.cache->erasures() && node.settled_frees == frees_.count();
}

// Computes a settled node: no values rebuilt, no shapes compared. Its
// outputs keep their buffers (only its own dispatch reserves them, and the
// planned sizes hold while the generation does) and stay ready from the
// dispatch that settled it. An input may live elsewhere this run (a
// caller's new tensor); its dims and dtype are fixed by the generation, so
// only its address is updated.
Status Executor::ComputeSettled(PlannedNode& node) {
  for (uint32_t i : node.moving_inputs) {
    node.inputs[i].tensor.data = slots_[node.input_slots[i]].data;
  }
  ++settled_hits_;
  Status computed = ComputeNode(node);
  if (!computed.ok()) node.settled_generation = 0;
  return computed;
}

Status Executor::RunTransfers(PlannedNode& node) {
  for (Transfer& transfer : node.transfers) {
    if (transfer.once && transfer.done) continue;
    const ValueSlot& from = slots_[transfer.from_slot];
    ValueSlot& to = slots_[transfer.to_slot];
    if (transfer.resident && transfer.done && from.data == transfer.copied_from &&
        from.byte_size == to.byte_size && from.dtype == to.dtype && from.dims == to.dims) {
      continue;
    }
    const auto what = [&] {
      return graph_.Describe(node.id) + ": input '" + DescribeSlot(transfer.from_slot) + "'";
    };
    if (from.kind != NXRT_VALUE_TENSOR || from.dtype == DataType::kString) {
      return Unsupported(what() + " is a " +
                         (from.kind == NXRT_VALUE_TENSOR ? "string tensor" : "non-tensor value") +
                         " and cannot move between EP memories; place its producer and consumer "
                         "on one EP");
    }
    NXRT_RETURN_IF_ERROR(to.buffer->Reserve(MemoryProvider(to.memory), from.byte_size, Listener(),
                                            shared_.memory_budget));
    to.kind = NXRT_VALUE_TENSOR;
    to.dtype = from.dtype;
    to.dims.assign(from.dims.begin(), from.dims.end());
    to.data = to.buffer->data();
    to.byte_size = from.byte_size;
    Status copied;
    if (from.memory == kHostMemory) {
      copied = MemoryProvider(to.memory)->CopyToDevice(to.data, from.data, from.byte_size);
    } else if (to.memory == kHostMemory) {
      copied = MemoryProvider(from.memory)->CopyToHost(to.data, from.data, from.byte_size);
    } else {
      // Two device memories meet through the host.
      copied = transfer.staging.Reserve(nullptr, from.byte_size, nullptr, shared_.memory_budget);
      if (copied.ok()) {
        copied = MemoryProvider(from.memory)
                     ->CopyToHost(transfer.staging.data(), from.data, from.byte_size);
      }
      if (copied.ok()) {
        copied = MemoryProvider(to.memory)->CopyToDevice(to.data, transfer.staging.data(),
                                                         from.byte_size);
      }
    }
    if (!copied.ok()) return copied.WithContext(what());
    to.ready = true;
    transfer.done = true;
    transfer.copied_from = from.data;
  }
  return Status::Ok();
}

nxrt_value Executor::ValueOf(const ValueSlot& slot) const {
  nxrt_value v{};
  WriteSlotValue(slot, v);
  return v;
}

Status Executor::PrepareNode(PlannedNode& node) {
  node.settled_generation = 0;
  for (size_t i = 0; i < node.input_slots.size(); ++i) {
    kernel_cache::InputShape& shape = node.input_shapes[i];
    const size_t slot_index = node.input_slots[i];
    if (slot_index == kNoSlot) {
      ClearValue(node.inputs[i]);
      shape.absent = true;
      shape.dims.clear();
      continue;
    }
    const ValueSlot& slot = slots_[slot_index];
    if (!slot.ready) {
      return Internal(graph_.Describe(node.id) + ": input '" + DescribeSlot(slot_index) +
                      "' has no value in this run");
    }
    WriteSlotValue(slot, node.inputs[i]);
    shape.absent = slot.kind == NXRT_VALUE_NONE;
    if (slot.kind == NXRT_VALUE_TENSOR) {
      CopyDims(slot.dims, shape.dims);
    } else {
      shape.dims.clear();
    }
  }
  for (size_t i = 0; i < node.output_slots.size(); ++i) {
    nxrt_value& out = node.outputs[i];
    ClearValue(out);
    node.preallocated[i] = false;
    const size_t slot_index = node.output_slots[i];
    if (slot_index == kNoSlot) continue;
    ValueSlot& slot = slots_[slot_index];
    slot.ready = false;
    slot.kind = NXRT_VALUE_TENSOR;
    slot.dtype = slot.declared_dtype;
    slot.data = nullptr;
    slot.byte_size = 0;
    if (!slot.planned_known) slot.dims.clear();
    out.kind = NXRT_VALUE_TENSOR;
    out.tensor.dtype = static_cast<nxrt_dtype>(slot.declared_dtype);
    out.tensor.memory = slot.memory == kHostMemory ? NXRT_MEMORY_HOST : NXRT_MEMORY_DEVICE;
    if (!slot.planned_known) continue;
    CopyDims(slot.planned_dims, slot.dims);
    if (slot.declared_dtype == DataType::kString) {
      PrepareStrings(slot, slot.planned_bytes / sizeof(nxrt_string_view));
    } else if (!BindInPlace(node, i)) {
      const size_t bytes = slot.planned_bytes;
      Status reserved = slot.buffer->Reserve(MemoryProvider(slot.memory), bytes, Listener(),
                                             shared_.memory_budget);
      if (!reserved.ok()) {
        return reserved.WithContext(graph_.Describe(node.id) + ": output '" +
                                    DescribeSlot(slot_index) + "'");
      }
      slot.data = slot.buffer->data();
      slot.byte_size = bytes;
    }
    out.tensor.rank = slot.dims.size();
    out.tensor.dims = slot.dims.empty() ? nullptr : slot.dims.data();
    out.tensor.data = slot.data;
    out.tensor.byte_size = slot.byte_size;
    node.preallocated[i] = true;
    // Ready for the nodes after it in a segment being prepared as a whole.
    slot.ready = true;
  }
  return Status::Ok();
}

// Copies each present an EP wrote in its own memory into the caller's past
// buffer it mirrors, when both hold the same dtype and dims.
Status Executor::WriteBackKv() {
  for (const auto& [present_index, past_index] : kv_write_back_) {
    const ValueSlot& present = slots_[present_index];
    const ValueSlot& past = slots_[past_index];
    if (!present.ready || present.kind != NXRT_VALUE_TENSOR || past.kind != NXRT_VALUE_TENSOR ||
        present.dtype != past.dtype || present.byte_size != past.byte_size ||
        present.dims != past.dims || present.byte_size == 0) {
      continue;
    }
    if (present.memory == kHostMemory) {
      std::memcpy(past.data, present.data, present.byte_size);
      continue;
    }
    NXRT_RETURN_IF_ERROR(MemoryProvider(present.memory)
                             ->CopyToHost(past.data, present.data, present.byte_size)
                             .WithContext(graph_.model_path + ": present '" +
                                          DescribeSlot(present_index) + "' copied back into '" +
                                          DescribeSlot(past_index) + "'"));
  }
  return Status::Ok();
}

// Points output `output` at the buffer of the input it is planned to update
// in place, when that input is bound at the output's planned dims and dtype.
bool Executor::BindInPlace(PlannedNode& node, size_t output) {
  const size_t input = node.in_place_input[output];
  if (input == kNoSlot) return false;
  ValueSlot& slot = slots_[node.output_slots[output]];
  const ValueSlot& past = slots_[node.input_slots[input]];
  if (past.kind != NXRT_VALUE_TENSOR || past.dtype != slot.declared_dtype ||
      past.dtype == DataType::kString || past.byte_size != slot.planned_bytes ||
      (!node.views_input && !std::equal(past.dims.begin(), past.dims.end(),
                                        slot.planned_dims.begin(), slot.planned_dims.end()))) {
    return false;
  }
  slot.data = past.data;
  slot.byte_size = past.byte_size;
  return true;
}

Status Executor::LookUpKernel(PlannedNode& node) {
  node.kernel = shared_.cache->GetPrebound(node.binding, node.input_shapes);
  if (node.kernel) {
    node.compute = node.kernel->compute_entry();
    return Status::Ok();
  }
  kernel_cache::KernelRequest request;
  request.node = node.view;
  request.provider = shared_.providers[node.provider].provider.get();
  request.input_shapes = node.input_shapes;
  request.opset = node.opset;
  request.capture_seq_independent = node.capture_eligible;
  request.artifact = plugin_host::ArtifactConfig{shared_.executor_id, 0};
  NXRT_ASSIGN_OR_RETURN(node.kernel, shared_.cache->GetOrCreate(request, node.binding));
  node.compute = node.kernel->compute_entry();
  return Status::Ok();
}

Status Executor::ComputeNode(PlannedNode& node) {
  computing_ = &node;
  nxrt_compute_context ctx{this};
  nxrt_status* failed =
      node.compute.compute(node.compute.handle, &ctx, node.inputs.data(), node.inputs.size(),
                           node.outputs.data(), node.outputs.size());
  computing_ = nullptr;
  return failed == nullptr ? Status::Ok() : node.kernel->ComputeStatus(failed);
}

void Executor::FinishNode(PlannedNode& node) {
  for (size_t i = 0; i < node.output_slots.size(); ++i) {
    const size_t slot_index = node.output_slots[i];
    if (slot_index == kNoSlot) continue;
    ValueSlot& slot = slots_[slot_index];
    const nxrt_value& out = node.outputs[i];
    slot.kind = out.kind;
    slot.ready = true;
    if (out.kind != NXRT_VALUE_TENSOR) continue;
    const nxrt_tensor& t = out.tensor;
    slot.dtype = static_cast<DataType>(t.dtype);
    slot.data = t.data;
    slot.byte_size = t.byte_size;
    if (t.dims != slot.dims.data() || t.rank != slot.dims.size()) {
      if (t.dims != nullptr) {
        slot.dims.assign(t.dims, t.dims + t.rank);
      } else {
        slot.dims.clear();
      }
    }
  }
}

// ---- device-graph segments ---------------------------------------------------

bool Executor::SegmentIsPlanned(const device_graph::Segment& segment) const {
  for (size_t i = segment.begin; i < segment.end; ++i) {
    for (size_t slot : nodes_[i].output_slots) {
      if (slot == kNoSlot) continue;
      if (!slots_[slot].planned_known || slots_[slot].declared_dtype == DataType::kString) {
        return false;
      }
    }
  }
  return true;
}

bool Executor::CollectBindings(const device_graph::Segment& segment,
                               device_graph::SegmentBindings& bindings) {
  bindings.Clear();
  bool capture_safe = true;
  auto add = [&](const nxrt_value& v, size_t slot_index) {
    bindings.shapes.push_back(v.kind == NXRT_VALUE_TENSOR ? static_cast<int64_t>(v.tensor.rank)
                                                          : -1);
    if (v.kind != NXRT_VALUE_TENSOR) return;
    bindings.shapes.insert(bindings.shapes.end(), v.tensor.dims, v.tensor.dims + v.tensor.rank);
    bindings.addresses.push_back(reinterpret_cast<uintptr_t>(v.tensor.data));
    bindings.epochs.push_back(slot_index == kNoSlot ? 0 : slots_[slot_index].epoch());
  };
  for (size_t i = segment.begin; i < segment.end; ++i) {
    const PlannedNode& node = nodes_[i];
    capture_safe = capture_safe && node.kernel->capture_safe();
    bindings.addresses.push_back(reinterpret_cast<uintptr_t>(node.kernel.get()));
    for (size_t k = 0; k < node.inputs.size(); ++k) add(node.inputs[k], node.input_slots[k]);
    for (size_t k = 0; k < node.outputs.size(); ++k) add(node.outputs[k], node.output_slots[k]);
  }
  return capture_safe;
}

Status Executor::RunSegmentEagerly(device_graph::Segment& segment) {
  for (size_t i = segment.begin; i < segment.end; ++i) NXRT_RETURN_IF_ERROR(RunNode(nodes_[i]));
  return Status::Ok();
}

Status Executor::AbandonCapture(plugin_host::ExecutionProvider& provider, nxrt_graph_slot slot) {
  Result<nxrt_graph_token> token = provider.EndCapture(slot);
  if (!token.ok()) return token.status();
  return provider.Reset(*token);
}

void Executor::CollectExternalBindings(const device_graph::Segment& segment,
                                       device_graph::SegmentBindings& bindings) const {
  bindings.Clear();
  for (size_t slot_index : segment.external_slots) {
    const ValueSlot& slot = slots_[slot_index];
    bindings.shapes.push_back(
        slot.ready && slot.kind == NXRT_VALUE_TENSOR ? static_cast<int64_t>(slot.dims.size()) : -1);
    bindings.shapes.insert(bindings.shapes.end(), slot.dims.begin(), slot.dims.end());
    bindings.addresses.push_back(reinterpret_cast<uintptr_t>(slot.data));
    bindings.epochs.push_back(slot.epoch());
  }
}

Status Executor::ReplayPrepared(device_graph::Segment& segment, nxrt_graph_slot slot,
                                bool& replayed) {
  replayed = false;
  device_graph::SlotCapture& capture = segment.slots[slot];
  if (capture.token == 0 || segment.prepared_for != static_cast<int>(slot) ||
      capture.shape_generation != shape_generation_) {
    return Status::Ok();
  }
  // A copy into the EP's memory may reallocate, which resets the capture.
  for (size_t node : segment.transfer_nodes) NXRT_RETURN_IF_ERROR(RunTransfers(nodes_[node]));
  CollectExternalBindings(segment, bindings_scratch_);
  if (capture.token == 0 || !SameBindings(bindings_scratch_, capture.external)) {
    return Status::Ok();
  }
  device_graph::DeviceGraphs& graphs = *shared_.device_graphs;
  Status status = graphs.provider(segment.provider).Replay(capture.token);
  if (!status.ok()) {
    Status reset = graphs.ResetCapture(segment, capture);
    if (!reset.ok()) GetLogger()->warn("{}", reset.message());
    return status;
  }
  // The outputs still hold what the capture's last finish gave them: only
  // the nodes of this segment write them, and any other dispatch of those
  // nodes clears prepared_for.
  for (size_t slot_index : segment.output_slots) slots_[slot_index].ready = true;
  graphs.CountReplay();
  replayed = true;
  return Status::Ok();
}

Status Executor::RunSegment(device_graph::Segment& segment, nxrt_graph_slot slot) {
  device_graph::DeviceGraphs& graphs = *shared_.device_graphs;
  device_graph::SlotCapture& capture = segment.slots[slot];
  bool replayed = false;
  NXRT_RETURN_IF_ERROR(ReplayPrepared(segment, slot, replayed));
  if (replayed) return Status::Ok();
  segment.prepared_for = -1;
  if (!SegmentIsPlanned(segment)) {
    // A kernel that allocates its own outputs cannot be captured.
    NXRT_RETURN_IF_ERROR(graphs.ResetCapture(segment, capture));
    graphs.CountFallback(EagerFallbackReason::kNotCaptureSafe);
    return RunSegmentEagerly(segment);
  }
  // Every node is bound before any computes, so a buffer that a later value
  // shares and outgrows leaves the earlier nodes bound to freed memory: bind
  // them again. The second pass frees nothing, each buffer having grown to
  // its largest request.
  uint64_t frees_before = 0;
  do {
    frees_before = frees_.count();
    for (size_t i = segment.begin; i < segment.end; ++i) {
      NXRT_RETURN_IF_ERROR(RunTransfers(nodes_[i]));
      NXRT_RETURN_IF_ERROR(PrepareNode(nodes_[i]));
      NXRT_RETURN_IF_ERROR(LookUpKernel(nodes_[i]));
    }
  } while (frees_.count() != frees_before);
  auto compute_all = [&]() -> Status {
    for (size_t i = segment.begin; i < segment.end; ++i) {
      NXRT_RETURN_IF_ERROR(ComputeNode(nodes_[i]));
      FinishNode(nodes_[i]);
    }
    return Status::Ok();
  };
  auto finish_all = [&]() {
    for (size_t i = segment.begin; i < segment.end; ++i) FinishNode(nodes_[i]);
  };
  if (!CollectBindings(segment, bindings_scratch_)) {
    NXRT_RETURN_IF_ERROR(graphs.ResetCapture(segment, capture));
    graphs.CountFallback(EagerFallbackReason::kNotCaptureSafe);
    return compute_all();
  }
  plugin_host::ExecutionProvider& provider = graphs.provider(segment.provider);
  if (capture.token != 0) {
    if (SameBindings(bindings_scratch_, capture.captured)) {
      Status replayed = provider.Replay(capture.token);
      if (!replayed.ok()) {
        Status reset = graphs.ResetCapture(segment, capture);
        if (!reset.ok()) GetLogger()->warn("{}", reset.message());
        return replayed;
      }
      finish_all();
      graphs.CountReplay();
      segment.prepared_for = static_cast<int>(slot);
      capture.shape_generation = shape_generation_;
      CollectExternalBindings(segment, capture.external);
      return Status::Ok();
    }
    NXRT_RETURN_IF_ERROR(graphs.ResetCapture(segment, capture));
  }
  if (!capture.warm_valid || !SameBindings(bindings_scratch_, capture.warm)) {
    // A capture dropped since the last run (a mismatch just now, a buffer
    // freed or a kernel evicted while preparing) names what changed.
    const EagerFallbackReason reason =
        capture.captured_valid && !SameBindings(bindings_scratch_, capture.captured)
            ? MismatchReason(bindings_scratch_, capture.captured)
            : EagerFallbackReason::kWarmingUp;
    capture.captured_valid = false;
    NXRT_RETURN_IF_ERROR(compute_all());
    capture.warm.AssignFrom(bindings_scratch_);
    capture.warm_valid = true;
    graphs.CountFallback(reason);
    return Status::Ok();
  }
  return CaptureSegment(segment, slot);
}

Status Executor::CaptureSegment(device_graph::Segment& segment, nxrt_graph_slot slot) {
  device_graph::DeviceGraphs& graphs = *shared_.device_graphs;
  device_graph::SlotCapture& capture = segment.slots[slot];
  plugin_host::ExecutionProvider& provider = graphs.provider(segment.provider);
  capture.warm_valid = false;
  NXRT_RETURN_IF_ERROR(provider.BeginCapture(slot));
  for (size_t i = segment.begin; i < segment.end; ++i) {
    Status recorded = ComputeNode(nodes_[i]);
    if (!recorded.ok()) {
      Status abandoned = AbandonCapture(provider, slot);
      if (!abandoned.ok()) GetLogger()->warn("{}", abandoned.message());
      return recorded;
    }
  }
  Result<nxrt_graph_token> token = provider.EndCapture(slot);
  if (!token.ok()) {
    // Close the capture the EP may still hold open, so later eager computes
    // run instead of being recorded.
    Status abandoned = AbandonCapture(provider, slot);
    if (!abandoned.ok()) GetLogger()->debug("{}", abandoned.message());
    return token.status();
  }
  capture.token = *token;
  capture.captured.AssignFrom(bindings_scratch_);
  capture.captured_valid = true;
  graphs.CountCapture();
  Status replayed = provider.Replay(capture.token);
  if (!replayed.ok()) {
    Status reset = graphs.ResetCapture(segment, capture);
    if (!reset.ok()) GetLogger()->warn("{}", reset.message());
    return replayed;
  }
  for (size_t i = segment.begin; i < segment.end; ++i) FinishNode(nodes_[i]);
  graphs.CountReplay();
  segment.prepared_for = static_cast<int>(slot);
  capture.shape_generation = shape_generation_;
  CollectExternalBindings(segment, capture.external);
  return Status::Ok();
}

// ---- outputs ------------------------------------------------------------------

Result<size_t> Executor::OutputSlot(const std::string& name) const {
  for (size_t slot : output_slots_) {
    if (DescribeSlot(slot) == name) return slot;
  }
  std::string names;
  for (size_t slot : output_slots_) names += (names.empty() ? "" : ", ") + DescribeSlot(slot);
  return InvalidArgument(graph_.model_path + ": '" + name +
                         "' is not an output of the model; its outputs are: " + names);
}

Status Executor::ExportTensor(size_t slot_index, Tensor& out) {
  const ValueSlot& slot = slots_[slot_index];
  const auto what = [&] {
    return graph_.model_path + ": output '" + DescribeSlot(slot_index) + "'";
  };
  if (!slot.ready) return Internal(what() + " was not produced by the run");
  if (slot.kind != NXRT_VALUE_TENSOR) {
    return InvalidArgument(what() + " is " +
                           (slot.kind == NXRT_VALUE_NONE ? "absent" : "a sequence") +
                           ", not a tensor; read it with RunValues");
  }
  Status reshaped = out.Reshape(slot.dtype, slot.dims);
  if (!reshaped.ok()) return reshaped.WithContext(what());
  if (slot.dtype == DataType::kString) {
    const auto* views = static_cast<const nxrt_string_view*>(slot.data);
    std::vector<std::string>& strings = out.mutable_strings();
    for (size_t i = 0; i < strings.size(); ++i) strings[i].assign(views[i].data, views[i].size);
    return Status::Ok();
  }
  if (out.byte_size() > slot.byte_size) {
    return Internal(what() + " holds " + std::to_string(slot.byte_size) +
                    " bytes, fewer than its " + "shape " + FormatDims(slot.dims) + " needs");
  }
  // A past tensor that borrows this very output's storage was updated in place.
  if (out.byte_size() == 0 || out.data() == slot.data) return Status::Ok();
  if (slot.memory == kHostMemory) {
    std::memcpy(out.data(), slot.data, out.byte_size());
    return Status::Ok();
  }
  return MemoryProvider(slot.memory)
      ->CopyToHost(out.data(), slot.data, out.byte_size())
      .WithContext(what());
}

Result<Value> Executor::ExportValue(size_t slot_index) {
  const ValueSlot& slot = slots_[slot_index];
  if (slot.ready && slot.kind == NXRT_VALUE_NONE) return Value();
  if (slot.ready && slot.kind == NXRT_VALUE_SEQUENCE) {
    std::vector<Tensor> elements(slot.sequence_length);
    for (size_t i = 0; i < slot.sequence_length; ++i) {
      const nxrt_tensor& t = slot.sequence[i];
      const std::span<const int64_t> dims(t.dims, t.rank);
      NXRT_RETURN_IF_ERROR(elements[i].Reshape(static_cast<DataType>(t.dtype), dims));
      if (elements[i].byte_size() > t.byte_size) {
        return Internal(graph_.model_path + ": element " + std::to_string(i) + " of output '" +
                        DescribeSlot(slot_index) + "' is smaller than its shape");
      }
      if (elements[i].byte_size() != 0) {
        std::memcpy(elements[i].data(), t.data, elements[i].byte_size());
      }
    }
    return Value::Sequence(std::move(elements));
  }
  Tensor tensor;
  NXRT_RETURN_IF_ERROR(ExportTensor(slot_index, tensor));
  return Value(std::move(tensor));
}

// ---- compute services -----------------------------------------------------------

Result<ValueSlot*> Executor::ComputingOutput(size_t index, const char* service) {
  if (computing_ == nullptr) {
    return FailedPrecondition(graph_.model_path + ": " + service +
                              " called outside a compute call");
  }
  if (index >= computing_->output_slots.size() || computing_->output_slots[index] == kNoSlot) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": " + service + " for output " +
                           std::to_string(index) + ", which the node does not have");
  }
  return &slots_[computing_->output_slots[index]];
}

Status Executor::AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims,
                                nxrt_tensor* out) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "allocate_output"));
  PlannedNode& node = *computing_;
  if (node.preallocated[index]) {
    const nxrt_tensor& given = node.outputs[index].tensor;
    if (std::equal(dims.begin(), dims.end(), given.dims, given.dims + given.rank) &&
        static_cast<DataType>(dtype) == slot->dtype) {
      *out = given;
      return Status::Ok();
    }
    return InvalidArgument(graph_.Describe(node.id) + ": output " + std::to_string(index) +
                           " was preallocated as " + FormatDims(slot->dims) +
                           " but the kernel asks for " + FormatDims(dims) +
                           "; the kernel and shape inference disagree");
  }
  const DataType type = static_cast<DataType>(dtype);
  slot->dims.assign(dims.begin(), dims.end());
  if (type == DataType::kString) {
    NXRT_ASSIGN_OR_RETURN(const uint64_t count, graph::ElementCount(dims));
    PrepareStrings(*slot, static_cast<size_t>(count));
  } else {
    NXRT_ASSIGN_OR_RETURN(const size_t bytes, DenseBytes(type, dims));
    NXRT_RETURN_IF_ERROR(slot->buffer->Reserve(MemoryProvider(slot->memory), bytes, Listener(),
                                               shared_.memory_budget));
    slot->data = slot->buffer->data();
    slot->byte_size = bytes;
  }
  slot->kind = NXRT_VALUE_TENSOR;
  slot->dtype = type;
  *out = nxrt_tensor{sizeof(nxrt_tensor),
                     dtype,
                     slot->memory == kHostMemory ? NXRT_MEMORY_HOST : NXRT_MEMORY_DEVICE,
                     slot->dims.size(),
                     slot->dims.empty() ? nullptr : slot->dims.data(),
                     slot->data,
                     slot->byte_size};
  node.outputs[index].kind = NXRT_VALUE_TENSOR;
  node.outputs[index].tensor = *out;
  return Status::Ok();
}

Status Executor::AllocateSequenceOutput(size_t index, size_t length) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "allocate_sequence_output"));
  slot->elements.resize(length);
  slot->element_tensors.assign(length, nxrt_tensor{sizeof(nxrt_tensor), NXRT_DTYPE_UNDEFINED,
                                                   NXRT_MEMORY_HOST, 0, nullptr, nullptr, 0});
  slot->kind = NXRT_VALUE_SEQUENCE;
  slot->sequence = slot->element_tensors.data();
  slot->sequence_length = length;
  nxrt_value& out = computing_->outputs[index];
  out.kind = NXRT_VALUE_SEQUENCE;
  out.sequence = slot->sequence;
  out.sequence_length = length;
  return Status::Ok();
}

Status Executor::AllocateSequenceElement(size_t index, size_t element, nxrt_dtype dtype,
                                         std::span<const int64_t> dims, nxrt_tensor* out) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "allocate_sequence_element"));
  if (slot->kind != NXRT_VALUE_SEQUENCE || element >= slot->sequence_length ||
      slot->sequence != slot->element_tensors.data()) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": element " +
                           std::to_string(element) + " of output " + std::to_string(index) +
                           " asked for before allocate_sequence_output sized it");
  }
  const DataType type = static_cast<DataType>(dtype);
  if (type == DataType::kString) {
    return Unsupported(graph_.Describe(computing_->id) +
                       ": sequences of strings are not supported");
  }
  SequenceElement& e = slot->elements[element];
  NXRT_ASSIGN_OR_RETURN(const size_t bytes, DenseBytes(type, dims));
  NXRT_RETURN_IF_ERROR(e.buffer.Reserve(nullptr, bytes, nullptr, shared_.memory_budget));
  e.dtype = type;
  e.dims.assign(dims.begin(), dims.end());
  e.byte_size = bytes;
  slot->element_tensors[element] = nxrt_tensor{sizeof(nxrt_tensor),
                                               dtype,
                                               NXRT_MEMORY_HOST,
                                               e.dims.size(),
                                               e.dims.empty() ? nullptr : e.dims.data(),
                                               e.buffer.data(),
                                               bytes};
  *out = slot->element_tensors[element];
  return Status::Ok();
}

Status Executor::SetOutputNone(size_t index) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "set_output_none"));
  slot->kind = NXRT_VALUE_NONE;
  computing_->outputs[index].kind = NXRT_VALUE_NONE;
  return Status::Ok();
}

Status Executor::SetStringElement(size_t index, size_t element, std::string_view text) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "set_string_element"));
  if (slot->kind != NXRT_VALUE_TENSOR || slot->dtype != DataType::kString ||
      element >= slot->strings.size()) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": string element " +
                           std::to_string(element) + " of output " + std::to_string(index) +
                           " is outside the string tensor allocated for it");
  }
  slot->strings[element].assign(text);
  slot->string_views[element] = {slot->strings[element].data(), slot->strings[element].size()};
  return Status::Ok();
}

Status Executor::RunSubgraph(std::string_view attr_name, std::span<const nxrt_value> inputs,
                             std::span<nxrt_value> outputs) {
  if (computing_ == nullptr) {
    return FailedPrecondition(graph_.model_path + ": run_subgraph called outside a compute call");
  }
  auto found = bodies_.find({computing_->id.index, std::string(attr_name)});
  if (found == bodies_.end()) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": no graph attribute '" +
                           std::string(attr_name) + "' to run");
  }
  PlannedNode* caller = computing_;
  Status status = found->second->RunBody(inputs, outputs);
  computing_ = caller;
  return status.WithContext(graph_.Describe(caller->id) + ": body '" + std::string(attr_name) +
                            "'");
}

}  // namespace nxrt::executor
