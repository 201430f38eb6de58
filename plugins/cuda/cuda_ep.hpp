// One CUDA execution-provider instance: a device, a non-blocking stream,
// a stream-ordered memory pool, and CUDA graphs captured from that stream.
//
// Creating one without a usable driver or device throws UNAVAILABLE
// "no CUDA device: ...", so the session moves on to its next EP. The host
// may reuse its buffer as soon as a copy returns: a copy into the device
// passes through a page-locked staging ring and then runs in stream order,
// a copy out waits for the stream; everything else is ordered on the stream. A reset graph keeps
// its executable as its slot's spare, so the next capture of the same topology in that slot updates
// it in place instead of instantiating anew.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <map>
#include <memory>
#include <span>

#include "cuda_options.hpp"
#include "device_context.hpp"
#include "graph_book.hpp"
#include "nxrt/ep_sdk.hpp"
#include "pinned_staging.hpp"

namespace nxrt::cuda {

class CudaEp : public sdk::ExecutionProvider {
 public:
  CudaEp(const sdk::Host& host, const sdk::Options& options);
  ~CudaEp() override;
  CudaEp(const CudaEp&) = delete;
  CudaEp& operator=(const CudaEp&) = delete;

  sdk::ClaimResult Claim(const sdk::Node& node, int64_t opset,
                         std::span<const nxrt_value_info> inputs,
                         std::span<const nxrt_layout> layouts) override;
  std::unique_ptr<sdk::Kernel> CreateKernel(const nxrt_artifact_config& config,
                                            const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs,
                                            int64_t opset) override;

  void* Alloc(size_t bytes, size_t alignment);
  void Free(void* ptr);
  void CopyToDevice(void* dst, const void* src, size_t bytes);
  void CopyToHost(void* dst, const void* src, size_t bytes);
  void Synchronize();

  bool DeviceGraphsSupported() const override { return options_.device_graphs; }
  void BeginCapture(nxrt_graph_slot slot) override;
  nxrt_graph_token EndCapture(nxrt_graph_slot slot) override;
  void Replay(nxrt_graph_token token) override;
  void Reset(nxrt_graph_token token) override;

 private:
  struct Captured {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
  };
  // Frees every CUDA object held; safe on a partly built instance.
  void Release();
  void RequireGraphs() const;
  cudaGraphExec_t Instantiate(nxrt_graph_slot slot, cudaGraph_t graph);

  sdk::Host host_;
  CudaOptions options_;
  DeviceContext context_;
  cudaMemPool_t pool_ = nullptr;
  GraphBook book_;
  std::map<nxrt_graph_token, Captured> captured_;
  std::array<cudaGraphExec_t, 2> spare_exec_{};
  std::unique_ptr<PinnedStaging> staging_;  // null when no page-locked memory was had
};

}  // namespace nxrt::cuda
