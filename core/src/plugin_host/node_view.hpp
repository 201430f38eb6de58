// The host's definition of nxrt_node: a read-only view of one graph node as a
// plugin sees it through the host table.
//
// Built once per node (value infos with symbolic dims, constant flags,
// prebuilt string views of tensor attributes) so that every pointer a plugin
// reads from it stays valid for the view's life. The graph must outlive the
// view; a kernel keeps the view of its node alive (shared_ptr) because the ABI
// lets a kernel keep the node handle it was made with.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt/graph/ir.hpp"

struct nxrt_node {
 public:
  nxrt_node(const nxrt::graph::Graph& graph, nxrt::graph::NodeId id);
  // A node made by the host in place of node `id` (two nodes fused into
  // one), reading its values from `graph`; `id` still keys it in the kernel
  // cache and names it in errors.
  nxrt_node(const nxrt::graph::Graph& graph, nxrt::graph::NodeId id,
            std::shared_ptr<const nxrt::graph::Node> replacement);
  nxrt_node(const nxrt_node&) = delete;
  nxrt_node& operator=(const nxrt_node&) = delete;

  const nxrt::graph::Graph& graph() const { return *graph_; }
  nxrt::graph::NodeId id() const { return id_; }
  const nxrt::graph::Node& node() const { return replacement_ ? *replacement_ : graph_->node(id_); }

  // One entry per node input/output, kind NONE for an absent slot.
  std::span<const nxrt_value_info> input_infos() const { return inputs_.infos; }
  std::span<const nxrt_value_info> output_infos() const { return outputs_.infos; }
  bool input_is_constant(size_t index) const {
    return index < constant_inputs_.size() && constant_inputs_[index];
  }
  // Value name of input/output `index`; nullptr when absent or out of range.
  const char* input_name(size_t index) const;
  const char* output_name(size_t index) const;

  // The attribute named `name`, or nullptr.
  const nxrt::graph::Attribute* attribute(const char* name) const;
  // String views of a STRING tensor attribute's elements (empty otherwise).
  std::span<const nxrt_string_view> tensor_attribute_strings(const nxrt::graph::Attribute& a) const;

  // "model.onnx: node 'name' (Op)", for error messages.
  std::string Describe() const;

 private:
  struct ValueInfos {
    std::vector<nxrt_value_info> infos;
    std::vector<std::vector<nxrt_dim>> dims;  // storage behind infos[i].dims
  };
  ValueInfos BuildInfos(const std::vector<std::optional<nxrt::graph::ValueId>>& values) const;

  const nxrt::graph::Graph* graph_;
  nxrt::graph::NodeId id_;
  std::shared_ptr<const nxrt::graph::Node> replacement_;  // null: the graph's node
  ValueInfos inputs_;
  ValueInfos outputs_;
  std::vector<bool> constant_inputs_;
  // Per attribute index: string views of a STRING tensor attribute.
  std::vector<std::vector<nxrt_string_view>> attribute_strings_;
};

namespace nxrt::plugin_host {
using NodeView = nxrt_node;
}  // namespace nxrt::plugin_host
