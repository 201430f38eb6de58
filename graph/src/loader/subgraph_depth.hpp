// Whether a serialized ModelProto nests its subgraphs (If, Loop and Scan
// bodies, function bodies) deeper than protobuf parses. protobuf refuses such
// a model with no reason; walking the wire format without recursion tells it
// apart from a corrupt file, so the error can say which it is.
#pragma once

#include <google/protobuf/io/zero_copy_stream.h>

namespace nxrt::graph {

// True when the model's graph -> node -> attribute -> graph chain nests more
// messages than protobuf's recursion limit. False for any other model, and
// for bytes that are not a model at all.
bool SubgraphsNestTooDeep(google::protobuf::io::ZeroCopyInputStream& model_bytes);

}  // namespace nxrt::graph
