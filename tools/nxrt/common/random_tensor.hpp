// Random input tensors for models run without input files: the shape comes
// from the model's declaration with symbolic dims bound by --dim, the values
// from a seeded generator so every run sees the same inputs. Floats are
// uniform in [-1, 1), integers in [0, 4) (small enough to be valid indices
// and counts for most ops) except an integer `attention_mask`, which is all
// ones, bools fair coins, strings short words.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"
#include "nxrt/tensor.hpp"

namespace nxrt::cli {

// Fails naming the input and the dim when a symbolic dim has no binding in
// `dims`, and for inputs of unknown rank.
Result<Tensor> RandomTensor(const ValueDescription& input,
                            const std::map<std::string, int64_t>& dims, std::mt19937_64& generator);

}  // namespace nxrt::cli
