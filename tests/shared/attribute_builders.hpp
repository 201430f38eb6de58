// Node attributes built in one expression, for tests that describe nodes
// inline (the CPU and CUDA EP tests, the capture classifier's).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/graph/ir.hpp"

namespace nxrt_test {

inline nxrt::graph::Attribute IntAttribute(const std::string& name, int64_t value) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = nxrt::graph::AttributeType::kInt;
  a.i = value;
  return a;
}

inline nxrt::graph::Attribute IntsAttribute(const std::string& name, std::vector<int64_t> values) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = nxrt::graph::AttributeType::kInts;
  a.ints = std::move(values);
  return a;
}

inline nxrt::graph::Attribute FloatAttribute(const std::string& name, float value) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = nxrt::graph::AttributeType::kFloat;
  a.f = value;
  return a;
}

inline nxrt::graph::Attribute StringAttribute(const std::string& name, const std::string& value) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = nxrt::graph::AttributeType::kString;
  a.s = value;
  return a;
}

}  // namespace nxrt_test
