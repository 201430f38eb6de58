#include "tensor_attribute.hpp"

#include <cstring>

namespace nxrt::cpu {

std::optional<AttributeTensor> ReadTensorAttribute(const sdk::Host& host, const sdk::Node& node,
                                                   const char* name) {
  if (node.attr_type(name) != NXRT_ATTR_TENSOR) return std::nullopt;
  nxrt_tensor view{};
  view.struct_size = sizeof(view);
  host.Check(host.api().node_attr_tensor(node.handle(), name, &view));
  AttributeTensor owned;
  owned.dtype = view.dtype;
  owned.dims = DimsOf(view);
  if (view.dtype == NXRT_DTYPE_STRING) {
    const auto* strings = static_cast<const nxrt_string_view*>(view.data);
    for (int64_t i = 0; i < ElementCount(owned.dims); ++i) {
      owned.strings.emplace_back(strings[i].data, strings[i].size);
    }
  } else {
    const auto* begin = static_cast<const std::byte*>(view.data);
    owned.bytes.assign(begin, begin + (begin ? view.byte_size : 0));
  }
  return owned;
}

void WriteAttributeTensor(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                          const AttributeTensor& tensor) {
  nxrt_tensor& out = PrepareOutput(ctx, outputs, index, tensor.dtype, tensor.dims);
  if (tensor.dtype == NXRT_DTYPE_STRING) {
    for (size_t i = 0; i < tensor.strings.size(); ++i) {
      ctx.SetStringElement(index, i, tensor.strings[i]);
    }
  } else if (!tensor.bytes.empty()) {
    std::memcpy(out.data, tensor.bytes.data(), tensor.bytes.size());
  }
}

}  // namespace nxrt::cpu
