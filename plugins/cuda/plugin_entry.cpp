// The entry symbol of libep_cuda.so: the SDK's table plus the memory entries,
// which the SDK's plugin macro does not fill. Init touches no CUDA, so the
// library loads and lists on machines without a GPU.
#include <atomic>

#include "cuda_ep.hpp"
#include "nxrt/ep_sdk.hpp"

namespace {

using nxrt::cuda::CudaEp;
using nxrt::sdk::detail::EpBox;
using nxrt::sdk::detail::Guard;
using nxrt::sdk::detail::Unbox;

std::atomic<const nxrt_host_api*> host_table{nullptr};

CudaEp& EpOf(EpBox* box) {
  return static_cast<CudaEp&>(*box->ep);
}

nxrt_status* CreateEp(nxrt_host_context* context, const nxrt_options* options, nxrt_ep** out) {
  return nxrt::sdk::detail::CreateEp<CudaEp>(context, options, out, host_table.load());
}

nxrt_status* Alloc(nxrt_ep* ep, size_t bytes, size_t alignment, void** out) {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { *out = EpOf(box).Alloc(bytes, alignment); });
}

void Free(nxrt_ep* ep, void* ptr) {
  try {
    EpOf(Unbox(ep)).Free(ptr);
  } catch (...) {
    // Freeing cannot report failure; the pool reclaims its memory with the EP.
  }
}

nxrt_status* CopyToDevice(nxrt_ep* ep, void* dst, const void* src, size_t bytes) {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { EpOf(box).CopyToDevice(dst, src, bytes); });
}

nxrt_status* CopyToHost(nxrt_ep* ep, void* dst, const void* src, size_t bytes) {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { EpOf(box).CopyToHost(dst, src, bytes); });
}

nxrt_status* Synchronize(nxrt_ep* ep) {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { EpOf(box).Synchronize(); });
}

const nxrt_kernel_api kernel_api = nxrt::sdk::detail::MakeKernelApi();

const nxrt_ep_api ep_api = [] {
  nxrt_ep_api api = nxrt::sdk::detail::MakeEpApi(CreateEp, &kernel_api, "cuda", "nxrt", "0.1.0");
  api.alloc = Alloc;
  api.free = Free;
  api.copy_to_device = CopyToDevice;
  api.copy_to_host = CopyToHost;
  api.synchronize = Synchronize;
  return api;
}();

}  // namespace

extern "C" NXRT_EP_EXPORT nxrt_status* nxrt_ep_plugin_init(uint32_t host_abi_version,
                                                           const nxrt_host_api* host,
                                                           nxrt_host_context* host_context,
                                                           const nxrt_ep_api** out) {
  (void)host_context;
  return nxrt::sdk::detail::Init(host_abi_version, host, host_table, &ep_api, out);
}
