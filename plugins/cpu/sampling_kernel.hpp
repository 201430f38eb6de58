// Base of the sampling ops' kernels (ops/random_ops.cpp): a 64-bit Mersenne
// Twister seeded from the node's `seed` attribute; for a node without one,
// from the EP's `seed` option mixed with the node's name (reproducible runs
// of a whole model), else from the system's entropy. Each run draws on from
// where the last one stopped. Not capture-safe: a replayed graph must not
// repeat a draw.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {

class SamplingKernel : public CpuKernel {
 public:
  explicit SamplingKernel(const sdk::Node& node);

  // Seeds a node without a seed attribute from the EP's `seed`, if set; a
  // node with one keeps it.
  void ApplySettings(const EpSettings& settings, std::string_view node_name) override;

 protected:
  std::mt19937_64 engine_;

 private:
  bool own_seed_;
};

}  // namespace nxrt::cpu
