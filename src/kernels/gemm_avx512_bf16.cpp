// AVX512-BF16 tile kernel, up to 6x64: VDPBF16PS multiplies BF16 pairs and adds
// both products into FP32 lanes, so one instruction does twice the FLOPs of an
// FP32 FMA. Numerics (Intel SDM, VDPBF16PS): each BF16 product is exact in FP32;
// the sums round to nearest even regardless of MXCSR; denormal inputs are read
// as zero and denormal results flushed to zero. So results differ from the
// FP32-FMA kernels by FP32 rounding order and by flushed denormals only. Given op(B)'s
// rows (TileArgs::b_src), a column's first tile packs the B panel itself as it multiplies.
#include <immintrin.h>

#include <cstring>

#include "kernels/gemm_micro.h"

namespace trainplan::kernels::detail {
namespace {

#define TP_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,prfchw")))

constexpr int kMr = 6, kNr = 64;

// The tile's sums out: to the FP32 workspace, or (last K block) plus earlier partial
// sums and C's old values, rounded into C under a column mask. VCVTNE2PS2BF16 rounds to
// nearest even and keeps NaN quiet like to_bf16, but flushes denormal results to zero
// (Intel SDM), as VDPBF16PS already does to every product and sum.
// V vectors of 16 columns per row: 4, or 2 where the tile has at most 32 columns.
template <int R, int V>
TP_BF16_TARGET inline void finish(const TileArgs& t, __m512 (&acc)[R][V]) {
  if (!t.c) {
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        float* w = t.ws + i * t.ldws + 16 * v;
        _mm512_storeu_ps(w, t.partial ? _mm512_add_ps(acc[i][v], _mm512_loadu_ps(w)) : acc[i][v]);
      }
    return;
  }
  const int lo = t.cols < 32 ? t.cols : 32, hi = t.cols - lo;
  const __mmask32 m0 = lo >= 32 ? ~__mmask32(0) : __mmask32((1u << lo) - 1);
  const __mmask32 m1 = hi >= 32 ? ~__mmask32(0) : __mmask32((1u << hi) - 1);
  if (t.partial)
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_add_ps(acc[i][v], _mm512_loadu_ps(t.ws + i * t.ldws + 16 * v));
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    unsigned short* c = t.c + i * t.ldc;
    if (t.accumulate_c) {
      const __m512i old0 = _mm512_maskz_loadu_epi16(m0, c), old1 = _mm512_maskz_loadu_epi16(m1, c + 32);
      const __m512i w[4] = {_mm512_cvtepu16_epi32(_mm512_castsi512_si256(old0)),
                            _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(old0, 1)),
                            _mm512_cvtepu16_epi32(_mm512_castsi512_si256(old1)),
                            _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(old1, 1))};
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_add_ps(acc[i][v], _mm512_castsi512_ps(_mm512_slli_epi32(w[v], 16)));
    }
    _mm512_mask_storeu_epi16(c, m0, (__m512i)_mm512_cvtne2ps_pbh(acc[i][1], acc[i][0]));
    if constexpr (V == 4) _mm512_mask_storeu_epi16(c + 32, m1, (__m512i)_mm512_cvtne2ps_pbh(acc[i][3], acc[i][2]));
  }
}

// With kPackB, the four vectors of pair words come from two rows of op(B) instead: vpermt2w
// picks 16-bit elements from two registers by index (0-31: first, 32-63: second).
TP_BF16_TARGET inline void interleave_rows(const unsigned short* lo, const unsigned short* hi, __m512bh (&bv)[4]) {
  const __m512i idx0 = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37,
                                        5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i idx1 = _mm512_add_epi16(idx0, _mm512_set1_epi16(16));
  const __m512i l0 = _mm512_loadu_si512(lo), h0 = _mm512_loadu_si512(hi);
  bv[0] = (__m512bh)_mm512_permutex2var_epi16(l0, idx0, h0);
  bv[1] = (__m512bh)_mm512_permutex2var_epi16(l0, idx1, h0);
  const __m512i l1 = _mm512_loadu_si512(lo + 32), h1 = _mm512_loadu_si512(hi + 32);
  bv[2] = (__m512bh)_mm512_permutex2var_epi16(l1, idx0, h1);
  bv[3] = (__m512bh)_mm512_permutex2var_epi16(l1, idx1, h1);
}

// R rows of A: packed ([pair][kMr] words) or in place (row i at a + i * a_row_bytes);
// V vectors of 16 columns of B (the panel's row of pairs is 4 vectors wide either way),
// read from the packed panel, or with kPackB (V = 4) made from op(B)'s rows and stored
// to the panel for the column's other tiles. c_next: where the next tile will write C
// (null when this one writes the FP32 workspace).
template <int R, int V, bool kInPlace, bool kPackB = false>
TP_BF16_TARGET void tile(const TileArgs& t, const unsigned short* c_next) {
  const char* a = static_cast<const char*>(t.a);
  const long rs = kInPlace ? t.a_row_bytes : 4;
  constexpr long step = kInPlace ? 4 : 4 * kMr;
  const __m512i* b = static_cast<const __m512i*>(t.b);
  if (t.partial)  // the earlier sums come from L2 or beyond: start them on their way now
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < V; ++v) _mm_prefetch(reinterpret_cast<const char*>(t.ws + i * t.ldws + 16 * v), _MM_HINT_T0);
  // The next tile's lines of C, fetched for writing while this one multiplies: each
  // store missed, waiting on a read for ownership (C goes out to memory between calls),
  // which at K = 64 is up to a tenth of the time (1 thread: 1600,800,64, 2048,1376,64,
  // 128,16384,64, 256,11008,64 TN 1.03-1.15x; deeper K unchanged).
  if (c_next)
    for (int i = 0; i < R; ++i) {
      __builtin_prefetch(c_next + i * t.ldc, 1, 3);
      __builtin_prefetch(c_next + i * t.ldc + 32, 1, 3);
    }
  __m512 acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();
  const long pairs = (t.kc + 1) / 2;
  const unsigned short* src = t.b_src;
  // Source rows are 128-byte pieces a row length apart, which the prefetchers do not
  // follow: fetch them a few pairs ahead.
  constexpr long kAhead = 24;
#pragma GCC unroll 2
  for (long p = 0; p < pairs; ++p) {
    __m512bh bv[V];
    if constexpr (kPackB) {
      // Past the panel's last pair, the next panel's first rows (at K = 64 the fetches went
      // past B's end).
      const unsigned short* ahead = p + kAhead < pairs ? src + 2 * kAhead * t.b_src_ld
                                                       : t.b_src + 64 + 2 * (p + kAhead - pairs) * t.b_src_ld;
      _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(ahead + 32), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(ahead + t.b_src_ld), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(ahead + t.b_src_ld + 32), _MM_HINT_T0);
      interleave_rows(src, src + t.b_src_ld, bv);
      src += 2 * t.b_src_ld;
      __m512i* w = const_cast<__m512i*>(b);
      for (int v = 0; v < 4; ++v) _mm512_store_si512(w + v, (__m512i)bv[v]);
    } else {
      for (int v = 0; v < V; ++v) bv[v] = (__m512bh)_mm512_load_si512(b + v);
    }
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      int word;
      std::memcpy(&word, a + i * rs, 4);  // rows in place may sit at any 2-byte offset
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(word);
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], ai, bv[v]);
    }
    a += step;
    b += 4;
  }
  finish<R, V>(t, acc);
}

template <int V, bool kInPlace, bool kPackB = false>
void tile_rows(const TileArgs& t, const unsigned short* c_next) {
  switch (t.rows) {
    case 1: return tile<1, V, kInPlace, kPackB>(t, c_next);
    case 2: return tile<2, V, kInPlace, kPackB>(t, c_next);
    case 3: return tile<3, V, kInPlace, kPackB>(t, c_next);
    case 4: return tile<4, V, kInPlace, kPackB>(t, c_next);
    case 5: return tile<5, V, kInPlace, kPackB>(t, c_next);
    default: return tile<6, V, kInPlace, kPackB>(t, c_next);
  }
}

// Rows kMr at a time. With A in place, a last 7 or 8 rows go as 4 + 3 or 4 + 4: a 1- or
// 2-row tile has too few sums in flight to cover VDPBF16PS's latency (M = 32 ran 6 x 5
// + 2). (Packed A comes in kMr-row panels, which a 4-row tile would straddle.)
template <int V, bool kInPlace>
void tile_column(const TileArgs& t) {
  TileArgs u = t;
  for (int r = 0, h = 0; r < t.rows; r += h) {
    const int left = t.rows - r;
    h = left < kMr ? left : kMr;
    if (kInPlace && (left == kMr + 1 || left == kMr + 2)) h = 4;
    u.rows = h;
    u.a = static_cast<const char*>(t.a) + (kInPlace ? r * t.a_row_bytes : r / kMr * t.a_tile_bytes);
    u.ws = t.ws + r * t.ldws;
    u.c = t.c ? t.c + r * t.ldc : nullptr;
    // The last tile's next is the top of the next column (a prefetch past C does not fault).
    const unsigned short* c_next = t.c ? (r + h < t.rows ? t.c + (r + h) * t.ldc : t.c + kNr) : nullptr;
    if constexpr (V == 4)
      if (r == 0 && t.b_src) {  // the first tile packs the panel
        tile_rows<V, kInPlace, true>(u, c_next);
        continue;
      }
    if (h == kMr) tile<kMr, V, kInPlace>(u, c_next);
    else tile_rows<V, kInPlace>(u, c_next);
  }
}

// Columns: a tile of at most 32 (the last of N = 1376 or 800) multiplies half the panel.
template <bool kInPlace>
void tile_column_any_width(const TileArgs& t) {
  return t.cols <= 32 ? tile_column<2, kInPlace>(t) : tile_column<4, kInPlace>(t);
}

void tile_any(const TileArgs& t) {
  return t.a_row_bytes > 0 ? tile_column_any_width<true>(t) : tile_column_any_width<false>(t);
}

}  // namespace

MicroKernel avx512_bf16_micro_kernel() {
  MicroKernel k{kMr, kNr, nullptr, Packing::bf16_pairs};
  // B panel: 256 pairs x 64 words = 64 KiB, streamed from L2 rather than held in the 48 KiB
  // L1D, yet 1-2% faster than 128 pairs (32 KiB) on 1 thread (2048^3, 512,1024,1024,
  // 1024,3072,512 TN, 512,4096,1024): a tile's set-up and partial-sum round trip through
  // the FP32 workspace are paid half as often. (The driver doubles it from K 1024 over
  // many rows, gemm_bf16.)
  k.kc = 512;
  k.mc = 192;  // A block: 192 x 512 BF16 = 192 KiB of L2
  k.tile = &tile_any;
  return k;
}

}  // namespace trainplan::kernels::detail
