// The CPU execution provider (libep_cpu.so), nxrt's default EP. Claims the
// ops of op_registry.hpp (the default domain and the com.microsoft ops
// decoder exports use), declining with the reason anything else (an op not
// there, an opset before an op's first, a dtype or attribute not implemented), and makes kernels
// that compute on host memory.
//
// Options: `threads` (default 1) is how many threads the EP computes on, all
// of them OpenMP's: oneDNN's products of several rows run on that many (a
// process-wide count, so the largest `threads` among live CPU EPs,
// math_threads.hpp), and a single row's product is split into that many
// blocks at most (packing_kernel.hpp), which a replay hands to a crew kept
// in one parallel region (parallel_blocks.hpp); OpenBLAS runs on the calling
// thread. One keeps results bitwise reproducible from run to run.
// `device_graphs` (1 default, or 0) says whether the EP captures device
// graphs: with 1 the calls of a capture are recorded and later replayed
// without per-node dispatch (device_graph/); with 0 the host runs everything
// eagerly. `seed` seeds the sampling ops that have no seed attribute, so
// whole runs repeat. `prepack` (1 default, or 0) says whether products of
// several rows read constant matrices from a copy in oneDNN's blocked layout
// (ep_settings.hpp).
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "ep_settings.hpp"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

class CpuKernel;
class MathThreadLease;
class Recorder;

class CpuEp : public sdk::ExecutionProvider {
 public:
  CpuEp(const sdk::Host& host, const sdk::Options& options);
  ~CpuEp() override;

  sdk::ClaimResult Claim(const sdk::Node& node, int64_t opset,
                         std::span<const nxrt_value_info> inputs,
                         std::span<const nxrt_layout> layouts) override;
  std::unique_ptr<sdk::Kernel> CreateKernel(const nxrt_artifact_config& config,
                                            const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs,
                                            int64_t opset) override;

  bool DeviceGraphsSupported() const override { return recorder_ != nullptr; }
  void BeginCapture(nxrt_graph_slot slot) override;
  nxrt_graph_token EndCapture(nxrt_graph_slot slot) override;
  void Replay(nxrt_graph_token token) override;
  void Reset(nxrt_graph_token token) override;
  std::shared_ptr<sdk::ComputeRecorder> CallRecorder() override;

 private:
  // The op's kernel, unwrapped, with the EP's settings applied.
  std::unique_ptr<CpuKernel> MakeKernel(const sdk::Node& node, std::span<const nxrt_shape> inputs,
                                        int64_t opset);
  // Throws UNSUPPORTED when device graphs are off.
  Recorder& RequireRecorder() const;

  sdk::Host host_;
  std::unique_ptr<MathThreadLease> math_threads_;
  std::shared_ptr<Recorder> recorder_;  // null when device graphs are off
  EpSettings settings_;
};

}  // namespace nxrt::cpu
