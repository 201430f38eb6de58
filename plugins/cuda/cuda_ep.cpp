#include "cuda_ep.hpp"

#include <string>
#include <utility>

#include "claim_rules.hpp"
#include "cuda_check.hpp"
#include "kernels/kernel_factory.hpp"

namespace nxrt::cuda {
namespace {

constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;
// cudaMallocAsync aligns every allocation at least this much.
constexpr size_t kPoolAlignment = 256;
// Larger copies into the device go from pageable memory and wait.
constexpr size_t kStagingBytes = size_t{16} << 20;

[[noreturn]] void NoDevice(const std::string& why) {
  throw sdk::Error(NXRT_STATUS_UNAVAILABLE, "no CUDA device: " + why);
}

void ProbeDevice(int device_id) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) NoDevice(cudaGetErrorString(error));
  if (count == 0) NoDevice(cudaGetErrorString(cudaErrorNoDevice));
  if (device_id >= count) {
    NoDevice("device_id " + std::to_string(device_id) + " asked for, " + std::to_string(count) +
             " present");
  }
}

}  // namespace

CudaEp::CudaEp(const sdk::Host& host, const sdk::Options& options)
    : host_(host), options_(ParseCudaOptions(options)) {
  ProbeDevice(options_.device_id);
  context_.device = options_.device_id;
  try {
    CheckCuda(cudaSetDevice(context_.device), "cudaSetDevice");
    CheckCuda(cudaStreamCreateWithFlags(&context_.stream, cudaStreamNonBlocking),
              "cudaStreamCreateWithFlags");
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = context_.device;
    CheckCuda(cudaMemPoolCreate(&pool_, &props), "cudaMemPoolCreate");
    uint64_t threshold = options_.memory_release_threshold;
    CheckCuda(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold),
              "cudaMemPoolSetAttribute(release threshold)");
    CheckCublas(cublasLtCreate(&context_.blas_lt), "cublasLtCreate");
    CheckCuda(cudaMalloc(&context_.blas_workspace, kBlasWorkspaceBytes), "cudaMalloc(workspace)");
    context_.blas_workspace_bytes = kBlasWorkspaceBytes;
    CheckCudnn(cudnnCreate(&context_.dnn), "cudnnCreate");
    CheckCudnn(cudnnSetStream(context_.dnn, context_.stream), "cudnnSetStream");
  } catch (const sdk::Error& error) {
    Release();
    if (error.code() == NXRT_STATUS_UNAVAILABLE) NoDevice(error.what());
    throw;
  }
  try {
    staging_ = std::make_unique<PinnedStaging>(kStagingBytes);
  } catch (const sdk::Error&) {
    // Without page-locked memory every copy into the device waits instead.
  }
}

CudaEp::~CudaEp() {
  Release();
}

void CudaEp::Release() {
  if (context_.stream) cudaStreamSynchronize(context_.stream);
  staging_.reset();
  for (auto& [token, captured] : captured_) {
    cudaGraphExecDestroy(captured.exec);
    cudaGraphDestroy(captured.graph);
  }
  captured_.clear();
  for (cudaGraphExec_t& spare : spare_exec_) {
    if (spare) cudaGraphExecDestroy(spare);
    spare = nullptr;
  }
  if (context_.dnn) cudnnDestroy(context_.dnn);
  context_.dnn = nullptr;
  if (context_.blas_workspace) cudaFree(context_.blas_workspace);
  context_.blas_workspace = nullptr;
  if (context_.blas_lt) cublasLtDestroy(context_.blas_lt);
  context_.blas_lt = nullptr;
  if (pool_) cudaMemPoolDestroy(pool_);
  pool_ = nullptr;
  if (context_.stream) cudaStreamDestroy(context_.stream);
  context_.stream = nullptr;
}

sdk::ClaimResult CudaEp::Claim(const sdk::Node& node, int64_t opset,
                               std::span<const nxrt_value_info> inputs,
                               std::span<const nxrt_layout> layouts) {
  return ClaimOnCuda(node, opset, inputs, layouts);
}

std::unique_ptr<sdk::Kernel> CudaEp::CreateKernel(const nxrt_artifact_config&,
                                                  const sdk::Node& node,
                                                  std::span<const nxrt_shape> inputs,
                                                  int64_t opset) {
  CheckCuda(cudaSetDevice(context_.device), "cudaSetDevice");
  return MakeCudaKernel(context_, node, inputs, opset);
}

void* CudaEp::Alloc(size_t bytes, size_t alignment) {
  if (alignment > kPoolAlignment || (alignment & (alignment - 1)) != 0) {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                     "CUDA allocations align to " + std::to_string(kPoolAlignment) +
                         " bytes; alignment " + std::to_string(alignment) + " was asked for");
  }
  CheckCuda(cudaSetDevice(context_.device), "cudaSetDevice");
  void* ptr = nullptr;
  CheckCuda(cudaMallocFromPoolAsync(&ptr, bytes == 0 ? 1 : bytes, pool_, context_.stream),
            "cudaMallocFromPoolAsync");
  return ptr;
}

void CudaEp::Free(void* ptr) {
  if (ptr == nullptr) return;
  cudaSetDevice(context_.device);
  cudaFreeAsync(ptr, context_.stream);
}

void CudaEp::CopyToDevice(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  CheckCuda(cudaSetDevice(context_.device), "cudaSetDevice");
  if (staging_ && staging_->CopyToDevice(dst, src, bytes, context_.stream)) return;
  CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, context_.stream),
            "cudaMemcpyAsync(host to device)");
  CheckCuda(cudaStreamSynchronize(context_.stream), "cudaStreamSynchronize after a copy");
}

void CudaEp::CopyToHost(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  CheckCuda(cudaSetDevice(context_.device), "cudaSetDevice");
  CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, context_.stream),
            "cudaMemcpyAsync(device to host)");
  CheckCuda(cudaStreamSynchronize(context_.stream), "cudaStreamSynchronize after a copy");
}

void CudaEp::Synchronize() {
  CheckCuda(cudaStreamSynchronize(context_.stream), "cudaStreamSynchronize");
}

void CudaEp::RequireGraphs() const {
  if (!options_.device_graphs) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "device graphs are off (option device_graphs)");
  }
}

void CudaEp::BeginCapture(nxrt_graph_slot slot) {
  RequireGraphs();
  book_.BeginCapture(slot);
  const cudaError_t error = cudaStreamBeginCapture(context_.stream, cudaStreamCaptureModeRelaxed);
  if (error != cudaSuccess) {
    book_.AbandonCapture();
    CheckCuda(error, "cudaStreamBeginCapture");
  }
}

cudaGraphExec_t CudaEp::Instantiate(nxrt_graph_slot slot, cudaGraph_t graph) {
  cudaGraphExec_t& spare = spare_exec_[slot];
  if (spare != nullptr) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(spare, graph, &info) == cudaSuccess) {
      return std::exchange(spare, nullptr);
    }
    // A failed update leaves an error state behind; the topology changed.
    cudaGetLastError();
    cudaGraphExecDestroy(std::exchange(spare, nullptr));
  }
  cudaGraphExec_t exec = nullptr;
  CheckCuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  return exec;
}

nxrt_graph_token CudaEp::EndCapture(nxrt_graph_slot slot) {
  RequireGraphs();
  GraphBook::CheckSlot(slot);
  if (book_.capturing() != slot) {
    book_.EndCapture(slot);  // throws the precise reason
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(context_.stream, &graph);
  if (ended != cudaSuccess) {
    book_.AbandonCapture();
    if (graph) cudaGraphDestroy(graph);
    CheckCuda(ended, "cudaStreamEndCapture");
  }
  cudaGraphExec_t exec = nullptr;
  try {
    exec = Instantiate(slot, graph);
  } catch (...) {
    book_.AbandonCapture();
    cudaGraphDestroy(graph);
    throw;
  }
  const nxrt_graph_token token = book_.EndCapture(slot);
  captured_[token] = Captured{graph, exec};
  return token;
}

void CudaEp::Replay(nxrt_graph_token token) {
  book_.SlotOf(token);
  CheckCuda(cudaSetDevice(context_.device), "cudaSetDevice");
  CheckCuda(cudaGraphLaunch(captured_.at(token).exec, context_.stream), "cudaGraphLaunch");
}

void CudaEp::Reset(nxrt_graph_token token) {
  const nxrt_graph_slot slot = book_.SlotOf(token);
  book_.Forget(token);
  Captured captured = captured_.at(token);
  captured_.erase(token);
  cudaGraphDestroy(captured.graph);
  cudaGraphExec_t& spare = spare_exec_[slot];
  if (spare) cudaGraphExecDestroy(spare);
  spare = captured.exec;
}

}  // namespace nxrt::cuda
