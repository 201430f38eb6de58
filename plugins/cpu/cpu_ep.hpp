// The CPU execution provider (libep_cpu.so), nxrt's default EP. Claims the
// ops of op_registry.hpp (the default domain and the com.microsoft ops
// decoder exports use), declining with the reason anything else (an op not
// there, an opset before an op's first, a dtype or attribute not implemented), and makes kernels that compute on host memory.
//
// Options: `threads` (default 1) is the number of OpenBLAS threads; one keeps
// results bitwise reproducible from run to run.
#pragma once

#include <memory>
#include <span>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

class CpuEp : public sdk::ExecutionProvider {
 public:
  CpuEp(const sdk::Host& host, const sdk::Options& options);

  sdk::ClaimResult Claim(const sdk::Node& node, int64_t opset,
                         std::span<const nxrt_value_info> inputs,
                         std::span<const nxrt_layout> layouts) override;
  std::unique_ptr<sdk::Kernel> CreateKernel(const nxrt_artifact_config& config,
                                            const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs,
                                            int64_t opset) override;

 private:
  sdk::Host host_;
};

}  // namespace nxrt::cpu
