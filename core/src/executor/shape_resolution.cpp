#include "executor/executor.hpp"

#include "executor/slot_values.hpp"
#include "nxrt/graph/symbol_binding.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::executor {
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

}  // namespace nxrt::executor
