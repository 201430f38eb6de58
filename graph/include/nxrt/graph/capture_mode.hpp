// The capture classifier's two modes, and how the mode is chosen.
//
// Fail-safe (the default) keeps a node eager unless every symbol on its edges
// traces to declared roots that do not grow: besides the growing KV symbols it
// distrusts every symbol inference minted without provenance. Wrongly
// capturing a node silently corrupts decoding, so unknown means eager.
// Denylist only distrusts symbols proven to grow, capturing more at the cost
// of trusting the lineage records to be complete.
//
// An explicit option wins; otherwise NXRT_CAPTURE_CLASSIFIER decides
// (failsafe, fail-safe or 1; denylist, deny or 0; any case, surrounding
// blanks ignored); any other text, or none, means fail-safe.
#pragma once

#include "nxrt/support/export.hpp"

#include <optional>
#include <string_view>

namespace nxrt::graph {

enum class CaptureMode { kFailSafe, kDenylist };

NXRT_API std::string_view CaptureModeName(CaptureMode mode);

// The mode NXRT_CAPTURE_CLASSIFIER's text `text` selects.
NXRT_API CaptureMode ParseCaptureMode(std::string_view text);

// `option` when set, else the mode the environment selects.
NXRT_API CaptureMode ResolveCaptureMode(std::optional<CaptureMode> option);

}  // namespace nxrt::graph
