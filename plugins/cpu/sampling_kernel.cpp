#include "sampling_kernel.hpp"

#include <bit>

namespace nxrt::cpu {
namespace {

// FNV-1a: the same for a name in every build and process.
uint64_t NameHash(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name) hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return hash;
}

}  // namespace

SamplingKernel::SamplingKernel(const sdk::Node& node)
    : CpuKernel(false), own_seed_(node.attr_type("seed") != NXRT_ATTR_UNDEFINED) {
  if (own_seed_) {
    // The float's bits: defined for every value, negative and NaN included.
    engine_.seed(std::bit_cast<uint32_t>(node.AttrFloat("seed", 0.0f)));
  } else {
    std::random_device entropy;
    engine_.seed((static_cast<uint64_t>(entropy()) << 32) | entropy());
  }
}

void SamplingKernel::ApplySettings(const EpSettings& settings, std::string_view node_name) {
  if (own_seed_ || !settings.seed) return;
  const uint64_t ep_seed = *settings.seed;
  const uint64_t name = NameHash(node_name);
  std::seed_seq sequence{static_cast<uint32_t>(ep_seed), static_cast<uint32_t>(ep_seed >> 32),
                         static_cast<uint32_t>(name), static_cast<uint32_t>(name >> 32)};
  engine_.seed(sequence);
}

}  // namespace nxrt::cpu
