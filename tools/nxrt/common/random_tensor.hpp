// Random input tensors for models run without input files: the shape is the
// one --shape gives the input whole, or the model's declaration with symbolic
// dims bound by --dim; the values
// from a seeded generator so every run sees the same inputs. Floats are
// uniform in [-1, 1), integers in [0, 4) (small enough to be valid indices
// and counts for most ops) except an integer `attention_mask`, which is all
// ones, bools fair coins, strings short words.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"
#include "nxrt/tensor.hpp"

namespace nxrt::cli {

struct RandomShapes {
  std::map<std::string, int64_t> dims;                 // --dim: symbol name -> extent
  std::map<std::string, std::vector<int64_t>> shapes;  // --shape: input name -> whole shape
};

// Fails naming the input when a whole shape contradicts the declared one,
// when a symbolic dim has no binding, and for an input of unknown rank given
// no whole shape.
Result<Tensor> RandomTensor(const ValueDescription& input, const RandomShapes& shapes,
                            std::mt19937_64& generator);

}  // namespace nxrt::cli
