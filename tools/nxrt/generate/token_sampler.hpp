// Picks the next token from the logits of a run's last position: greedy
// (the highest logit, the lowest id on ties) at temperature 0, otherwise a
// draw from softmax(logits / temperature) over the top-k logits, narrowed
// to the fewest likeliest whose probabilities reach top-p (nucleus sampling). Draws come
// from one std::mt19937_64 seeded once, turned into uniforms by bit
// arithmetic rather than a standard distribution (whose algorithm varies by
// library), so a seed gives the same tokens everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace nxrt::cli {

class TokenSampler {
 public:
  // `top_k` 0 keeps the whole vocabulary; `top_p` in (0, 1], 1 keeps every
  // token top-k kept.
  TokenSampler(double temperature, size_t top_k, double top_p, uint64_t seed);

  int64_t Next(std::span<const float> logits);
  // Whether Next picks the highest logit (temperature 0).
  bool greedy() const { return temperature_ == 0; }

 private:
  double temperature_;
  size_t top_k_;
  double top_p_;
  std::mt19937_64 generator_;
  std::vector<int64_t> candidates_;  // reused from token to token
  std::vector<double> weights_;
};

}  // namespace nxrt::cli
