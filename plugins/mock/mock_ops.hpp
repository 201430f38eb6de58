// The arithmetic a mock kernel really performs, so session tests can check
// numbers: Identity (any non-string dtype) and float32 Add, Sub, Mul, Div
// with numpy broadcasting, Neg and Relu, and GroupQueryAttention reduced to
// a cache update (present = past + 1, see mock_ops.cpp) that works in place.
// Any other op fills its outputs with zeros.
#pragma once

#include <span>
#include <string>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::mock {

// Runs `op`. Outputs whose data is NULL are allocated through `ctx`; throws
// nxrt::sdk::Error on a bad input.
void RunMockOp(const std::string& op, nxrt::sdk::ComputeContext& ctx,
               std::span<const nxrt_value> inputs, std::span<nxrt_value> outputs);

}  // namespace nxrt::mock
