// oneDNN falls back to reference kernels (plain loops, often hundreds of
// times slower) when it has no optimised one for a primitive. The CPU EP
// plans around them; when one is left, the first in the process is logged as
// a warning, later ones at debug level, so a slow model says why without
// flooding a log with one line per shape.
#pragma once

#include <string>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu::onednn {

// `what` names the primitive: the node, its op and its shape.
void NoteReferenceKernel(const sdk::Host& host, const std::string& what,
                         const std::string& implementation);

}  // namespace nxrt::cpu::onednn
