#include "executor/executor.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>

#include "executor/buffer_sharing.hpp"
#include "executor/slot_values.hpp"
#include "nxrt/graph/attention_kv_slots.hpp"
#include "nxrt/graph/value_consumers.hpp"
#include "nxrt/graph/weight_store.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::executor {
namespace {

nxrt_value NoneValue() {
  nxrt_value v{};
  v.struct_size = sizeof(nxrt_value);
  v.kind = NXRT_VALUE_NONE;
  v.tensor.struct_size = sizeof(nxrt_tensor);
  return v;
}

}  // namespace

size_t Executor::MemoryOf(size_t provider) const {
  return shared_.providers[provider].provider->has_custom_memory() ? provider : kHostMemory;
}

plugin_host::ExecutionProvider* Executor::MemoryProvider(size_t memory) const {
  return memory == kHostMemory ? nullptr : shared_.providers[memory].provider.get();
}

BufferFreeListener* Executor::Listener() const {
  return &frees_;
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

}  // namespace nxrt::executor
