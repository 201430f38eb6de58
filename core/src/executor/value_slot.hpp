// The run-time state of one value of a graph: what it holds during the
// current run (a tensor, a sequence or nothing), where its bytes are, and
// the storage the executor keeps for it from run to run.
//
// Dims live in vectors whose capacity survives runs, and the buffer is
// reused while it is large enough, so a run at the shapes of the previous
// one allocates nothing. The buffer belongs to the executor, which may lend
// it to other values whose lifetimes never overlap this one's
// (buffer_sharing.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/value_buffer.hpp"
#include "nxrt/ep_abi.h"
#include "nxrt/graph/dtype.hpp"
#include "nxrt/graph/ids.hpp"

namespace nxrt::executor {

// Host memory, not owned by any provider.
inline constexpr size_t kHostMemory = SIZE_MAX;

struct SequenceElement {
  graph::DataType dtype = graph::DataType::kUndefined;
  std::vector<int64_t> dims;
  ValueBuffer buffer;
  size_t byte_size = 0;
};

struct ValueSlot {
  // Fixed by the plan.
  graph::ValueId value;         // invalid for a mirror made for another memory
  size_t memory = kHostMemory;  // provider index whose memory holds the bytes
  bool constant = false;        // an initializer: bound once at build
  graph::DataType declared_dtype = graph::DataType::kUndefined;
  // A graph input or outer-scope value, whose dims and dtype key the shape
  // resolution, or a copy of an initializer: either way fixed while the
  // run's input shapes repeat.
  bool shape_keyed = false;
  // Its bytes may move from run to run at the same shapes: a graph input or
  // outer-scope value (the caller's tensor) or a present output written into
  // its past input.
  bool moves = false;

  // The current run.
  nxrt_value_kind kind = NXRT_VALUE_NONE;
  graph::DataType dtype = graph::DataType::kUndefined;
  std::vector<int64_t> dims;
  void* data = nullptr;
  size_t byte_size = 0;
  bool ready = false;  // bound or produced in this run

  // Dims known before the producer runs, from the symbol binding.
  bool planned_known = false;
  std::vector<int64_t> planned_dims;
  size_t planned_bytes = 0;  // dense bytes, or string views, of planned_dims

  // Storage kept across runs.
  ValueBuffer* buffer = nullptr;  // in the executor's pool; set by the plan
  std::vector<std::string> strings;
  std::vector<nxrt_string_view> string_views;
  std::vector<SequenceElement> elements;
  std::vector<nxrt_tensor> element_tensors;
  // The current sequence: this slot's elements, or a bound one's.
  const nxrt_tensor* sequence = nullptr;
  size_t sequence_length = 0;

  uint64_t epoch() const { return buffer->data() == data ? buffer->epoch() : 0; }
};

}  // namespace nxrt::executor
