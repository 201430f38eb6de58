// The CPU EP's options that shape its kernels (cpu_ep.hpp lists them all),
// handed to each kernel once it is made.
#pragma once

#include <cstdint>
#include <optional>

namespace nxrt::cpu {

struct EpSettings {
  // `seed`: seeds the sampling ops that have no seed of their own.
  std::optional<uint64_t> seed;
  // `prepack`: products of several rows read a constant matrix from a copy in
  // oneDNN's blocked layout. Off, they read it where the host keeps it, so a
  // model's weights are held once at some cost in speed.
  bool prepack = true;
  // `threads`: a product of a single row is split into at most this many
  // blocks, run on OpenMP's threads (packing_kernel.hpp).
  int threads = 1;
};

}  // namespace nxrt::cpu
