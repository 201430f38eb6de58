#include "winograd_weights.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "isa_clones.hpp"

namespace nxrt::cpu::onednn {
namespace {

using dnnl::memory;

constexpr int kTaps = 3;  // r: the 3x3 kernels these layouts take
constexpr int kMaxAlpha = 6;
constexpr int kMaxBlock = 64;  // the widest output-map block this writes

// The filter transforms G [alpha][3], as oneDNN's kernels expect them:
// F(2x2,3x3) with alpha 4, and the scaled F(4x4,3x3) with alpha 6.
constexpr float kG2x3[4][kTaps] = {
    {1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};
constexpr float kG4x3[6][kTaps] = {{1.13777777777778f, 0.0f, 0.0f},
                                   {-0.688403361344538f, -0.430252100840336f, -0.26890756302521f},
                                   {-0.688403361344538f, 0.430252100840336f, -0.26890756302521f},
                                   {0.119514472455649f, 0.179271708683473f, 0.26890756302521f},
                                   {0.119514472455649f, -0.179271708683473f, 0.26890756302521f},
                                   {0.0f, 0.0f, 1.0f}};

// Where the run of `block` values for transform element (u_h, u_w), input
// channel `ic` and output-map block `ob` starts in the layout.
struct Layout {
  dnnl_wino_desc_t d;
  int64_t nb_ic, nb_oc;

  int64_t RunStart(int64_t u_h, int64_t u_w, int64_t ic, int64_t ob) const {
    const int64_t alpha = d.alpha, ib = ic / d.ic_block, i = ic % d.ic_block;
    const int64_t occ = ob / d.oc2_block, ob2 = ob % d.oc2_block;
    if (d.wino_format == dnnl_wino_wei_aaOio) {
      return ((((u_h * alpha + u_w) * nb_oc + ob) * nb_ic + ib) * d.ic_block + i) * d.oc_block;
    }
    if (d.wino_format == dnnl_wino_wei_aaOBiOo) {
      const int64_t chunks = nb_oc / d.oc2_block;
      const int64_t panel = ((u_h * alpha + u_w) * chunks + occ) * nb_ic + ib;
      return panel * d.oc2_block * d.ic_block * d.oc_block + (i * d.oc2_block + ob2) * d.oc_block;
    }
    // OBaaIBOIio
    const int64_t ic_chunks = nb_ic / d.ic2_block;
    const int64_t icc = ib / d.ic2_block, ib2 = ib % d.ic2_block;
    const int64_t index =
        (((((occ * alpha + u_h) * alpha + u_w) * ic_chunks + icc) * d.oc2_block + ob2) *
             d.ic2_block +
         ib2) *
            d.ic_block +
        i;
    return index * d.oc_block;
  }
};

// U = G g G^T for `block` filters at once, lane o holding filter o:
// taps[k][x][o] is tap (k, x) of filter o; u[a][b][o] receives U[a][b].
// The sums run in oneDNN's order (g G^T first, each from zero).
NXRT_ISA_CLONES void TransformBlock(const float (*g)[kTaps], int alpha, int block,
                                    const float (*taps)[kTaps][kMaxBlock],
                                    float (*u)[kMaxAlpha][kMaxBlock]) {
  float half[kTaps][kMaxAlpha][kMaxBlock];  // g G^T
  for (int k = 0; k < kTaps; ++k) {
    for (int j = 0; j < alpha; ++j) {
      for (int o = 0; o < block; ++o) {
        float sum = 0.0f;
        for (int x = 0; x < kTaps; ++x) sum += taps[k][x][o] * g[j][x];
        half[k][j][o] = sum;
      }
    }
  }
  for (int a = 0; a < alpha; ++a) {
    for (int b = 0; b < alpha; ++b) {
      for (int o = 0; o < block; ++o) {
        float sum = 0.0f;
        for (int k = 0; k < kTaps; ++k) sum += g[a][k] * half[k][b][o];
        u[a][b][o] = sum;
      }
    }
  }
}

}  // namespace

bool TransformWinogradWeights(const memory::desc& given, const float* weights,
                              const memory::desc& preferred, void* out) {
  if (preferred.data.format_kind != dnnl_format_kind_wino) return false;
  const dnnl_wino_desc_t& d = preferred.data.format_desc.wino_desc;
  const bool small =
      (d.wino_format == dnnl_wino_wei_aaOio || d.wino_format == dnnl_wino_wei_aaOBiOo) &&
      d.alpha == 4;
  const bool large = d.wino_format == dnnl_wino_wei_OBaaIBOIio && d.alpha == 6;
  if ((!small && !large) || d.r != kTaps || d.oc_block < 1 || d.oc_block > kMaxBlock ||
      d.ic_block < 1 || d.ic % d.ic_block != 0 || d.oc % d.oc_block != 0) {
    return false;
  }
  const memory::dims dims = given.dims();
  if (dims.size() != 4 || dims[2] != kTaps || dims[3] != kTaps ||
      given != memory::desc(dims, memory::data_type::f32, memory::format_tag::oihw)) {
    return false;
  }
  const int64_t maps = dims[0], channels = dims[1];
  Layout layout{d, d.ic / d.ic_block, d.oc / d.oc_block};
  if (layout.nb_ic % (large ? d.ic2_block : 1) != 0 || layout.nb_oc % d.oc2_block != 0 ||
      maps > d.oc || channels > d.ic) {
    return false;
  }
  const size_t written = sizeof(float) * d.alpha * d.alpha * d.ic * d.oc;
  if (written > preferred.get_size()) return false;
  auto* y = static_cast<float*>(out);
  std::memset(static_cast<char*>(out) + written, 0, preferred.get_size() - written);
  const auto* g = small ? kG2x3 : kG4x3;
  std::vector<float> scratch(sizeof(float[kTaps][kTaps][kMaxBlock]) / sizeof(float) +
                             sizeof(float[kMaxAlpha][kMaxAlpha][kMaxBlock]) / sizeof(float));
  auto* taps = reinterpret_cast<float(*)[kTaps][kMaxBlock]>(scratch.data());
  auto* u =
      reinterpret_cast<float(*)[kMaxAlpha][kMaxBlock]>(scratch.data() + kTaps * kTaps * kMaxBlock);
  for (int64_t ob = 0; ob < layout.nb_oc; ++ob) {
    for (int64_t ic = 0; ic < d.ic; ++ic) {
      for (int o = 0; o < d.oc_block; ++o) {
        const int64_t map = ob * d.oc_block + o;
        const bool inside = map < maps && ic < channels;
        const float* filter = weights + (map * channels + ic) * kTaps * kTaps;
        for (int k = 0; k < kTaps; ++k) {
          for (int x = 0; x < kTaps; ++x) taps[k][x][o] = inside ? filter[k * kTaps + x] : 0.0f;
        }
      }
      TransformBlock(g, d.alpha, d.oc_block, taps, u);
      for (int a = 0; a < d.alpha; ++a) {
        for (int b = 0; b < d.alpha; ++b) {
          std::copy_n(u[a][b], d.oc_block, y + layout.RunStart(a, b, ic, ob));
        }
      }
    }
  }
  return true;
}

}  // namespace nxrt::cpu::onednn
