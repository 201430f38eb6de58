// A function of one 8-bit value as a table of its 256 results:
//   table[bits] = quantize_Y(f(dequantize_X(value of bits)))
// each step in float32, bits being the byte's pattern (an int8's value plus
// 256 below 0). ONNX Runtime runs its 8-bit activations and requantising
// copies so; a call then costs one lookup per element. The table is made
// again only when the scales or zero points it was made for change.
#pragma once

#include <cstdint>

#include "quantized/byte_lookup.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt::cpu {

struct ByteQuantization {
  float x_scale = 0, x_zero = 0, y_scale = 0, y_zero = 0;
  float operand = 0;  // a value f reads besides x (QLinearScalar's constant)
  bool operator==(const ByteQuantization&) const = default;
};

class ByteTable {
 public:
  // Makes the table of `f` for `q` unless it holds it already. T is the
  // bytes' type, uint8_t or int8_t.
  template <typename T, typename F>
  void Update(const ByteQuantization& q, F f) {
    if (made_ && q == made_for_) return;
    for (int bits = 0; bits < 256; ++bits) {
      const float value = static_cast<float>(static_cast<T>(static_cast<uint8_t>(bits)));
      entries_[bits] = static_cast<uint8_t>(
          SaturatingRound<T>(f((value - q.x_zero) * q.x_scale) / q.y_scale, q.y_zero));
    }
    made_for_ = q;
    made_ = true;
  }

  void Apply(const uint8_t* x, int64_t count, uint8_t* y) const {
    LookUpBytes(entries_, x, count, y);
  }

 private:
  bool made_ = false;
  ByteQuantization made_for_;
  ByteLookupTable entries_{};
};

}  // namespace nxrt::cpu
