#include "loader/subgraph_depth.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <optional>
#include <vector>

namespace nxrt::graph {
namespace {

using google::protobuf::io::CodedInputStream;

// The messages on the subgraph chain of onnx.proto.
enum class Message { kModel, kGraph, kNode, kAttribute, kFunction };

// The message field `field` of `parent` holds, when it is on the chain.
std::optional<Message> ChainChild(Message parent, uint32_t field) {
  switch (parent) {
    case Message::kModel:  // graph, functions
      if (field == 7) return Message::kGraph;
      if (field == 25) return Message::kFunction;
      break;
    case Message::kGraph:  // node
      if (field == 1) return Message::kNode;
      break;
    case Message::kFunction:  // node
      if (field == 7) return Message::kNode;
      break;
    case Message::kNode:  // attribute
      if (field == 5) return Message::kAttribute;
      break;
    case Message::kAttribute:  // g, graphs
      if (field == 6 || field == 11) return Message::kGraph;
      break;
  }
  return std::nullopt;
}

// Reads or skips the value of a field of wire type `wire_type`, other than
// a message on the chain; false where the bytes end early or are no field.
bool SkipValue(CodedInputStream& in, uint32_t wire_type, uint32_t length) {
  uint64_t scratch64 = 0;
  uint32_t scratch32 = 0;
  switch (wire_type) {
    case 0:
      return in.ReadVarint64(&scratch64);
    case 1:
      return in.ReadLittleEndian64(&scratch64);
    case 2:
      return in.Skip(static_cast<int>(length));
    case 5:
      return in.ReadLittleEndian32(&scratch32);
    default:
      return false;
  }
}

}  // namespace

bool SubgraphsNestTooDeep(google::protobuf::io::ZeroCopyInputStream& model_bytes) {
  CodedInputStream in(&model_bytes);
  const size_t limit = static_cast<size_t>(CodedInputStream::GetDefaultRecursionLimit());
  struct Open {
    Message message;
    CodedInputStream::Limit end;
  };
  std::vector<Open> open;  // below the model, which has no length of its own
  Message current = Message::kModel;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (open.empty() || in.BytesUntilLimit() != 0) return false;
      in.PopLimit(open.back().end);
      open.pop_back();
      current = open.empty() ? Message::kModel : open.back().message;
      continue;
    }
    const uint32_t wire_type = tag & 7;
    uint32_t length = 0;
    if (wire_type == 2 && !in.ReadVarint32(&length)) return false;
    const std::optional<Message> child =
        wire_type == 2 ? ChainChild(current, tag >> 3) : std::nullopt;
    if (!child) {
      if (!SkipValue(in, wire_type, length)) return false;
      continue;
    }
    const int remaining = in.BytesUntilLimit();  // -1: no enclosing limit
    if (length > static_cast<uint32_t>(INT_MAX) ||
        (remaining >= 0 && static_cast<int>(length) > remaining)) {
      return false;
    }
    open.push_back({*child, in.PushLimit(static_cast<int>(length))});
    if (open.size() > limit) return true;
    current = *child;
  }
}

}  // namespace nxrt::graph
