// The entry symbol of libep_cuda.so. CudaEp declares the memory functions, so
// the SDK's table carries them. Init touches no CUDA, so the library loads
// and lists on machines without a GPU.
#include "cuda_ep.hpp"
#include "nxrt/ep_sdk.hpp"

NXRT_EP_DEFINE_PLUGIN(nxrt::cuda::CudaEp, "cuda", "nxrt", "0.1.0")
