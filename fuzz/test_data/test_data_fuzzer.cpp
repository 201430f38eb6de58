// Test-data files (TensorProto, SequenceProto, OptionalProto) through the
// decoder `nxrt test` and `nxrt run` read them with, as each kind and as a
// guess, and a decoded tensor back through the encoder.
#include <cstddef>
#include <cstdint>
#include <span>

#include "nxrt/graph/test_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nxrt::graph::TestProtoKind;
  auto bytes = std::as_bytes(std::span(data, size));
  for (TestProtoKind kind : {TestProtoKind::kGuess, TestProtoKind::kTensor,
                             TestProtoKind::kSequence, TestProtoKind::kOptional}) {
    nxrt::Result<nxrt::graph::TestValue> value =
        nxrt::graph::DecodeTestValue(bytes, "fuzzed.pb", kind);
    if (value.ok() && value->kind == nxrt::graph::TestValueKind::kTensor) {
      (void)nxrt::graph::EncodeTensorProto(value->tensor);
    }
  }
  return 0;
}
