#include "generate/token_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nxrt::cli {

TokenSampler::TokenSampler(double temperature, size_t top_k, double top_p, uint64_t seed)
    : temperature_(temperature), top_k_(top_k), top_p_(top_p), generator_(seed) {}

int64_t TokenSampler::Next(std::span<const float> logits) {
  const auto higher = [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  if (temperature_ <= 0) {
    int64_t best = 0;
    for (int64_t id = 1; id < static_cast<int64_t>(logits.size()); ++id) {
      if (higher(id, best)) best = id;
    }
    return best;
  }
  candidates_.resize(logits.size());
  std::iota(candidates_.begin(), candidates_.end(), int64_t{0});
  size_t kept = top_k_ == 0 ? logits.size() : std::min(top_k_, logits.size());
  std::partial_sort(candidates_.begin(), candidates_.begin() + kept, candidates_.end(), higher);
  // Subtracting the largest logit keeps exp() finite.
  const double largest = logits[candidates_[0]];
  weights_.resize(kept);
  double total = 0;
  for (size_t i = 0; i < kept; ++i) {
    weights_[i] = std::exp((logits[candidates_[i]] - largest) / temperature_);
    total += weights_[i];
  }
  if (top_p_ < 1) {
    // The candidates are sorted, likeliest first: keep the shortest prefix
    // whose share of the mass reaches top-p.
    double mass = 0;
    size_t nucleus = 0;
    while (nucleus < kept && mass < top_p_ * total) mass += weights_[nucleus++];
    kept = std::max<size_t>(nucleus, 1);
    total = mass;
  }
  // 53 random bits make a uniform double in [0, 1).
  const double uniform = static_cast<double>(generator_() >> 11) * 0x1.0p-53;
  double threshold = uniform * total;
  for (size_t i = 0; i + 1 < kept; ++i) {
    if (threshold < weights_[i]) return candidates_[i];
    threshold -= weights_[i];
  }
  return candidates_[kept - 1];
}

}  // namespace nxrt::cli
