// AVX512-BF16 tile kernel, up to 6x64: VDPBF16PS multiplies BF16 pairs and adds
// both products into FP32 lanes, so one instruction does twice the FLOPs of an
// FP32 FMA. Numerics (Intel SDM, VDPBF16PS): each BF16 product is exact in FP32;
// the sums round to nearest even regardless of MXCSR; denormal inputs are read
// as zero and denormal results flushed to zero. So results differ from the
// FP32-FMA kernels by FP32 rounding order and by flushed denormals only.
#include <immintrin.h>

#include <cstring>

#include "kernels/gemm_micro.h"

namespace tp::kernels::detail {
namespace {

#define TP_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

constexpr int kMr = 6, kNr = 64;

// Round to BF16 as tp::kernels::to_bf16 does (nearest even, NaN kept quiet), low halves out.
TP_BF16_TARGET inline __m256i round_bf16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

// The tile's sums out: to the FP32 workspace, or (last K block) plus earlier partial
// sums and C's old values, rounded into C under a column mask.
template <int R>
TP_BF16_TARGET inline void finish(const TileArgs& t, __m512 (&acc)[R][4]) {
  if (!t.c) {
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        float* w = t.ws + i * t.ldws + 16 * v;
        _mm512_storeu_ps(w, t.partial ? _mm512_add_ps(acc[i][v], _mm512_loadu_ps(w)) : acc[i][v]);
      }
    return;
  }
  __mmask16 mask[4];
  for (int v = 0; v < 4; ++v) {
    const int n = t.cols - 16 * v;
    mask[v] = n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  }
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      if (!mask[v]) continue;
      __m512 x = acc[i][v];
      if (t.partial) x = _mm512_add_ps(x, _mm512_loadu_ps(t.ws + i * t.ldws + 16 * v));
      unsigned short* c = t.c + i * t.ldc + 16 * v;
      if (t.accumulate_c) {
        const __m512i old = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask[v], c));
        x = _mm512_add_ps(x, _mm512_castsi512_ps(_mm512_slli_epi32(old, 16)));
      }
      _mm256_mask_storeu_epi16(c, mask[v], round_bf16(x));
    }
}

// R rows of A: packed ([pair][kMr] words) or in place (row i at a + i * a_row_bytes).
template <int R, bool kInPlace>
TP_BF16_TARGET void tile(const TileArgs& t) {
  const char* a = static_cast<const char*>(t.a);
  const long rs = kInPlace ? t.a_row_bytes : 4;
  constexpr long step = kInPlace ? 4 : 4 * kMr;
  const __m512i* b = static_cast<const __m512i*>(t.b);
  __m512 acc[R][4];
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = _mm512_setzero_ps();
  const long pairs = (t.kc + 1) / 2;
#pragma GCC unroll 2
  for (long p = 0; p < pairs; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(b), b1 = (__m512bh)_mm512_load_si512(b + 1);
    const __m512bh b2 = (__m512bh)_mm512_load_si512(b + 2), b3 = (__m512bh)_mm512_load_si512(b + 3);
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      int word;
      std::memcpy(&word, a + i * rs, 4);  // rows in place may sit at any 2-byte offset
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(word);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
      acc[i][2] = _mm512_dpbf16_ps(acc[i][2], ai, b2);
      acc[i][3] = _mm512_dpbf16_ps(acc[i][3], ai, b3);
    }
    a += step;
    b += 4;
  }
  finish<R>(t, acc);
}

template <bool kInPlace>
void tile_rows(const TileArgs& t) {
  switch (t.rows) {
    case 1: return tile<1, kInPlace>(t);
    case 2: return tile<2, kInPlace>(t);
    case 3: return tile<3, kInPlace>(t);
    case 4: return tile<4, kInPlace>(t);
    case 5: return tile<5, kInPlace>(t);
    default: return tile<6, kInPlace>(t);
  }
}

void tile_any(const TileArgs& t) { return t.a_row_bytes > 0 ? tile_rows<true>(t) : tile_rows<false>(t); }

}  // namespace

MicroKernel avx512_bf16_micro_kernel() {
  MicroKernel k{kMr, kNr, nullptr, Packing::bf16_pairs};
  k.kc = 256;  // B panel: 128 pairs x 64 words = 32 KiB
  k.mc = 192;  // A block: 192 x 256 BF16 = 96 KiB
  k.tile = &tile_any;
  return k;
}

}  // namespace tp::kernels::detail
