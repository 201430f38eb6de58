// Runs one node on an EP the way the executor does: inputs copied into the
// EP's memory, outputs allocated through it on the kernel's request, results
// copied back to the host. The CUDA kernel tests run each node on the CUDA EP
// and on the CPU EP and compare.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/execution_provider.hpp"

namespace nxrt_test {

struct HostTensor {
  nxrt_dtype dtype = NXRT_DTYPE_FLOAT32;
  std::vector<int64_t> dims;
  std::vector<std::byte> bytes;

  size_t count() const;
  double at(size_t index) const;
};

// `values` in `dtype` (float32, float16 or bfloat16), rounded to nearest as
// the device converts.
HostTensor FloatTensor(nxrt_dtype dtype, std::vector<int64_t> dims,
                       const std::vector<float>& values);
HostTensor IntTensor(nxrt_dtype dtype, std::vector<int64_t> dims,
                     const std::vector<int64_t>& values);
// Values k/8 for k in [-32, 32] (exact in every float type), from a fixed seed.
HostTensor EighthsTensor(nxrt_dtype dtype, std::vector<int64_t> dims, uint32_t seed);

// The CUDA EP, or nullptr with `why` set when no device is present.
std::shared_ptr<nxrt::plugin_host::ExecutionProvider> CudaProvider(std::string* why);
std::shared_ptr<nxrt::plugin_host::ExecutionProvider> CpuProvider();

// Sets the graph's input dtypes from `inputs`, claims, makes the kernel and
// computes once; an input of dtype NXRT_DTYPE_UNDEFINED is an omitted
// optional input. Failures are test failures.
std::vector<HostTensor> RunNode(nxrt::plugin_host::ExecutionProvider& provider,
                                SingleNodeGraph& graph, const std::vector<HostTensor>& inputs,
                                int64_t opset, const std::set<size_t>& constant_inputs = {});

// Adds a test failure per element differing beyond atol + rtol * |expected|.
void ExpectNear(const HostTensor& actual, const HostTensor& expected, double rtol, double atol);

}  // namespace nxrt_test
