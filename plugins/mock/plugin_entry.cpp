// The entry symbol of libep_mock.so.
#include "mock_ep.hpp"
#include "nxrt/ep_sdk.hpp"

NXRT_EP_DEFINE_PLUGIN(nxrt::mock::MockEp, "mock", "nxrt", "1.0")
