#include "quantized/qlinear_rows.hpp"

#include <type_traits>

#include "quantized/byte_lookup.hpp"
#include "quantized/saturating_round.hpp"
#include "x86_intrinsics.hpp"

namespace nxrt::cpu {
namespace {

// The portable loop, its steps constants so that it vectorises.
template <typename T, int kA, int kB>
void PortableRow(QLinearOp op, const QLinearScales& s, const T* __restrict a, const T* __restrict b,
                 int64_t n, T* __restrict c) {
  if (op == QLinearOp::kAdd) {
    for (int64_t i = 0; i < n; ++i) {
      c[i] = SaturatingRound<T>(static_cast<float>(a[i * kA]) * s.a_ratio +
                                    static_cast<float>(b[i * kB]) * s.b_ratio + s.offset,
                                s.c_zero);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      c[i] = SaturatingRound<T>((static_cast<float>(a[i * kA]) - s.a_zero) *
                                    (static_cast<float>(b[i * kB]) - s.b_zero) * s.ratio,
                                s.c_zero);
    }
  }
}

template <typename T>
void Portable(QLinearOp op, const QLinearScales& s, const T* a, int64_t a_step, const T* b,
              int64_t b_step, int64_t n, T* c) {
  if (a_step == 1 && b_step == 1) return PortableRow<T, 1, 1>(op, s, a, b, n, c);
  if (a_step == 1) return PortableRow<T, 1, 0>(op, s, a, b, n, c);
  if (b_step == 1) return PortableRow<T, 0, 1>(op, s, a, b, n, c);
  return PortableRow<T, 0, 0>(op, s, a, b, n, c);
}

#if defined(__x86_64__)
// Eight bytes from p widened to floats, or p[0] eight times for a step of 0.
template <typename T>
__attribute__((target("avx2"))) inline __m256 LoadEight(const T* p, int64_t step) {
  if (step == 0) return _mm256_set1_ps(static_cast<float>(p[0]));
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m256i wide =
      std::is_same_v<T, uint8_t> ? _mm256_cvtepu8_epi32(bytes) : _mm256_cvtepi8_epi32(bytes);
  return _mm256_cvtepi32_ps(wide);
}

template <typename T>
__attribute__((target("avx2"))) void Avx2(QLinearOp op, const QLinearScales& s, const T* a,
                                          int64_t a_step, const T* b, int64_t b_step, int64_t n,
                                          T* c) {
  constexpr float kLowest = std::is_same_v<T, uint8_t> ? 0.0f : -128.0f;
  constexpr float kHighest = std::is_same_v<T, uint8_t> ? 255.0f : 127.0f;
  const __m256 low = _mm256_set1_ps(kLowest - s.c_zero), high = _mm256_set1_ps(kHighest - s.c_zero);
  const __m256i zero = _mm256_set1_epi32(static_cast<int32_t>(s.c_zero));
  const __m256 a_ratio = _mm256_set1_ps(s.a_ratio), b_ratio = _mm256_set1_ps(s.b_ratio);
  const __m256 offset = _mm256_set1_ps(s.offset), ratio = _mm256_set1_ps(s.ratio);
  const __m256 a_zero = _mm256_set1_ps(s.a_zero), b_zero = _mm256_set1_ps(s.b_zero);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i q[4];
    for (int part = 0; part < 4; ++part) {
      const int64_t at = i + part * 8;
      const __m256 x = LoadEight(a + at * a_step, a_step), y = LoadEight(b + at * b_step, b_step);
      const __m256 v =
          op == QLinearOp::kAdd
              ? _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(x, a_ratio), _mm256_mul_ps(y, b_ratio)),
                              offset)
              : _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(x, a_zero), _mm256_sub_ps(y, b_zero)),
                              ratio);
      // max returns its second operand for NaN, as SaturatingRound does.
      const __m256 clamped = _mm256_min_ps(_mm256_max_ps(v, low), high);
      q[part] = _mm256_add_epi32(_mm256_cvtps_epi32(clamped), zero);
    }
    // Every value is in T's range, so the saturating packs are exact.
    const __m256i words0 = _mm256_packs_epi32(q[0], q[1]), words1 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i packed = std::is_same_v<T, uint8_t> ? _mm256_packus_epi16(words0, words1)
                                                      : _mm256_packs_epi16(words0, words1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i),
                        _mm256_permutevar8x32_epi32(packed, order));
  }
  if (i == n) return;
  // The rest through one more step on copies padded to 32 (the scalar loop
  // costs more per element than a whole step).
  const int64_t rest = n - i;
  T a_rest[32] = {}, b_rest[32] = {}, c_rest[32];
  for (int64_t j = 0; j < (a_step == 0 ? 1 : rest); ++j) a_rest[j] = a[(i + j) * a_step];
  for (int64_t j = 0; j < (b_step == 0 ? 1 : rest); ++j) b_rest[j] = b[(i + j) * b_step];
  Avx2(op, s, a_rest, a_step, b_rest, b_step, 32, c_rest);
  for (int64_t j = 0; j < rest; ++j) c[i + j] = c_rest[j];
}

// Sixteen bytes from p widened to floats, the lanes past `lanes` zero.
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512 LoadSixteen(const T* p,
                                                                               __mmask16 lanes) {
  const __m128i bytes = _mm_maskz_loadu_epi8(lanes, p);
  return _mm512_cvtepi32_ps(std::is_same_v<T, uint8_t> ? _mm512_cvtepu8_epi32(bytes)
                                                       : _mm512_cvtepi8_epi32(bytes));
}

// Sixteen lanes a step, the last step masked; the same arithmetic as Avx2.
template <typename T, QLinearOp kOp>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void Avx512(const QLinearScales& s, const T* a,
                                                                 int64_t a_step, const T* b,
                                                                 int64_t b_step, int64_t n, T* c) {
  constexpr float kLowest = std::is_same_v<T, uint8_t> ? 0.0f : -128.0f;
  constexpr float kHighest = std::is_same_v<T, uint8_t> ? 255.0f : 127.0f;
  const __m512 low = _mm512_set1_ps(kLowest - s.c_zero), high = _mm512_set1_ps(kHighest - s.c_zero);
  const __m512i zero = _mm512_set1_epi32(static_cast<int32_t>(s.c_zero));
  const __m512 a_ratio = _mm512_set1_ps(s.a_ratio), b_ratio = _mm512_set1_ps(s.b_ratio);
  const __m512 offset = _mm512_set1_ps(s.offset), ratio = _mm512_set1_ps(s.ratio);
  const __m512 a_zero = _mm512_set1_ps(s.a_zero), b_zero = _mm512_set1_ps(s.b_zero);
  const __m512 a_fixed = _mm512_set1_ps(static_cast<float>(a[0]));
  const __m512 b_fixed = _mm512_set1_ps(static_cast<float>(b[0]));
#pragma GCC unroll 4
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 x = a_step == 0 ? a_fixed : LoadSixteen(a + i, lanes);
    const __m512 y = b_step == 0 ? b_fixed : LoadSixteen(b + i, lanes);
    const __m512 v =
        kOp == QLinearOp::kAdd
            ? _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(x, a_ratio), _mm512_mul_ps(y, b_ratio)),
                            offset)
            : _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(x, a_zero), _mm512_sub_ps(y, b_zero)),
                            ratio);
    // max returns its second operand for NaN, as SaturatingRound does.
    const __m512 clamped = _mm512_min_ps(_mm512_max_ps(v, low), high);
    // In T's range, so the truncating narrowing is exact.
    _mm512_mask_cvtepi32_storeu_epi8(c + i, lanes,
                                     _mm512_add_epi32(_mm512_cvtps_epi32(clamped), zero));
  }
}
#endif

template <typename T>
void Arithmetic(QLinearOp op, const QLinearScales& s, const T* a, int64_t a_step, const T* b,
                int64_t b_step, int64_t n, T* c) {
#if defined(__x86_64__)
  static const bool avx512 =
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx512) {
    return op == QLinearOp::kAdd ? Avx512<T, QLinearOp::kAdd>(s, a, a_step, b, b_step, n, c)
                                 : Avx512<T, QLinearOp::kMul>(s, a, a_step, b, b_step, n, c);
  }
  if (avx2) return Avx2(op, s, a, a_step, b, b_step, n, c);
#endif
  Portable(op, s, a, a_step, b, b_step, n, c);
}

// Rows shorter than this pay more for their table than it saves (256
// elements of arithmetic to make it, then about a fifth of the arithmetic's
// cost per element).
constexpr int64_t kTableFrom = 512;

// With one operand the same along the row, c is a function of the other's
// byte: its 256 results, computed by the same arithmetic, then one lookup
// per element.
template <typename T>
void ThroughTable(QLinearOp op, const QLinearScales& s, const T* varying, bool varying_is_a,
                  const T* fixed, int64_t n, T* c) {
  T bytes[256];
  for (int bits = 0; bits < 256; ++bits) bytes[bits] = static_cast<T>(static_cast<uint8_t>(bits));
  ByteLookupTable table;
  T* entries = reinterpret_cast<T*>(table.data());
  if (varying_is_a) {
    Arithmetic(op, s, bytes, 1, fixed, 0, 256, entries);
  } else {
    Arithmetic(op, s, fixed, 0, bytes, 1, 256, entries);
  }
  LookUpBytes(table, reinterpret_cast<const uint8_t*>(varying), n, reinterpret_cast<uint8_t*>(c));
}

}  // namespace

template <typename T>
void QLinearRow(QLinearOp op, const QLinearScales& s, const T* a, int64_t a_step, const T* b,
                int64_t b_step, int64_t n, T* c) {
  if (n >= kTableFrom && (a_step == 0) != (b_step == 0) && ByteLookupIsVectorised()) {
    return a_step == 0 ? ThroughTable(op, s, b, false, a, n, c)
                       : ThroughTable(op, s, a, true, b, n, c);
  }
  Arithmetic(op, s, a, a_step, b, b_step, n, c);
}

template <typename T>
void QLinearRowAvx2(QLinearOp op, const QLinearScales& s, const T* a, int64_t a_step, const T* b,
                    int64_t b_step, int64_t n, T* c) {
#if defined(__x86_64__)
  Avx2(op, s, a, a_step, b, b_step, n, c);
#else
  Portable(op, s, a, a_step, b, b_step, n, c);
#endif
}

template void QLinearRowAvx2(QLinearOp, const QLinearScales&, const uint8_t*, int64_t,
                             const uint8_t*, int64_t, int64_t, uint8_t*);
template void QLinearRowAvx2(QLinearOp, const QLinearScales&, const int8_t*, int64_t, const int8_t*,
                             int64_t, int64_t, int8_t*);
template void QLinearRow(QLinearOp, const QLinearScales&, const uint8_t*, int64_t, const uint8_t*,
                         int64_t, int64_t, uint8_t*);
template void QLinearRow(QLinearOp, const QLinearScales&, const int8_t*, int64_t, const int8_t*,
                         int64_t, int64_t, int8_t*);

}  // namespace nxrt::cpu
