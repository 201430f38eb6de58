// The entry symbol of libep_cpu.so.
#include "cpu_ep.hpp"
#include "nxrt/ep_sdk.hpp"

NXRT_EP_DEFINE_PLUGIN(nxrt::cpu::CpuEp, "cpu", "nxrt", "0.1.0")
