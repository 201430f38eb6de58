#include "quantized/byte_lookup.hpp"

#include "x86_intrinsics.hpp"

namespace nxrt::cpu {
namespace {

void Portable(const ByteLookupTable& table, const uint8_t* x, int64_t count, uint8_t* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = table[x[i]];
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2"))) inline __m512i LookUp64(
    const __m512i (&quarters)[4], __m512i bytes) {
  // Each permute reads the low seven bits; the top bit picks the half.
  const __m512i low = _mm512_permutex2var_epi8(quarters[0], bytes, quarters[1]);
  const __m512i high = _mm512_permutex2var_epi8(quarters[2], bytes, quarters[3]);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(bytes), low, high);
}

__attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2"))) void Vbmi(const ByteLookupTable& table,
                                                                      const uint8_t* x,
                                                                      int64_t count, uint8_t* y) {
  __m512i quarters[4];
  for (int q = 0; q < 4; ++q) quarters[q] = _mm512_loadu_si512(table.data() + 64 * q);
  int64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    _mm512_storeu_si512(y + i, LookUp64(quarters, _mm512_loadu_si512(x + i)));
  }
  if (i < count) {
    const __mmask64 rest = _bzhi_u64(~0ull, static_cast<unsigned>(count - i));
    _mm512_mask_storeu_epi8(y + i, rest, LookUp64(quarters, _mm512_maskz_loadu_epi8(rest, x + i)));
  }
}
#endif

}  // namespace

bool ByteLookupIsVectorised() {
#if defined(__x86_64__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi") &&
                           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("bmi2");
  return vbmi;
#else
  return false;
#endif
}

void LookUpBytes(const ByteLookupTable& table, const uint8_t* x, int64_t count, uint8_t* y) {
#if defined(__x86_64__)
  if (ByteLookupIsVectorised()) return Vbmi(table, x, count, y);
#endif
  Portable(table, x, count, y);
}

}  // namespace nxrt::cpu
