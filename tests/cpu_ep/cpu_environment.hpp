// One Environment for the CPU EP tests that build sessions themselves: it
// finds libep_cpu.so in the build's lib folder. Null (with a test failure
// recorded) when it cannot be made.
#pragma once

#include <memory>

#include "nxrt/environment.hpp"

namespace nxrt_test {

std::shared_ptr<nxrt::Environment> CpuEnvironment();

}  // namespace nxrt_test
