// The values a command feeds a model: inputs read from --input NAME=FILE.pb
// (decoded as the model declares each input: tensor, sequence or optional),
// and, where allowed, random tensors for the inputs given no file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/model_session.hpp"
#include "common/random_tensor.hpp"
#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

struct InputSources {
  std::vector<std::string> files;  // NAME=FILE.pb
  bool random_for_rest = false;
  RandomShapes random_shapes;
  uint64_t seed = 0;
};

// One value per model input, in the model's input order, then one per
// overridable initializer given a file (the rest keep the model's data).
// Fails naming the input for an unknown name (in --input or --shape), an
// input given twice, an unreadable file, or an input left without a value.
Result<std::vector<NamedValue>> PrepareInputs(const ModelSession& model,
                                              const InputSources& sources);

// The same values as tensors, for commands that run tensors only.
Result<std::vector<NamedTensor>> AsTensors(std::vector<NamedValue> values);

}  // namespace nxrt::cli
