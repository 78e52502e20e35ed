// AVX-512 packing helpers for the BF16-pair and AMX layouts (declared in
// gemm_micro.h): interleaving two BF16 rows into pair words, and 16x16 word
// transposes that turn stored-transposed operands into k-pair panels. Only
// called where the CPU has AVX-512 (BW and BF16 where the target says so).
#include <immintrin.h>

#include "kernels/gemm_micro.h"

namespace trainplan::kernels::detail {

#define TP_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

TP_BF16_TARGET void interleave_pairs_avx512(const unsigned short* r0, const unsigned short* r1,
                                            unsigned* out, long n) {
  long j = n / 32 * 32;  // whole 32-word runs by permutes (below), the rest by widening
  if (j) interleave_panels_avx512(r0, r1, 1, int(j), out, 0);
  // The zero-masking form: the plain one trips GCC 12's -Wmaybe-uninitialized in its own header.
  for (; j + 16 <= n; j += 16) {
    const __m512i lo = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + j)));
    const __m512i hi = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + j)));
    _mm512_storeu_si512(out + j, _mm512_or_si512(lo, _mm512_maskz_slli_epi32(0xffff, hi, 16)));
  }
  for (; j < n; ++j) out[j] = unsigned(r0[j]) | unsigned(r1[j]) << 16;
}

// Four shuffle stages (Intel SDM semantics of each): 32-bit unpacks give pairs of rows,
// 64-bit unpacks 4x4 blocks inside each 128-bit lane, then two 128-bit lane shuffles
// move the 4x4 blocks into place. Vector c[g][x] below holds, in lane l, column 4l + x
// of rows 4g..4g+3.
__attribute__((target("avx512f"), always_inline)) inline void transpose_store(const __m512i (&r)[16], unsigned* out,
                                                                             long out_stride) {
  __m512i t[16], c[4][4];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {
    c[g][0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    c[g][1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    c[g][2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    c[g][3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  for (int x = 0; x < 4; ++x) {
    const __m512i p0 = _mm512_shuffle_i32x4(c[0][x], c[1][x], 0x44), p1 = _mm512_shuffle_i32x4(c[0][x], c[1][x], 0xee);
    const __m512i p2 = _mm512_shuffle_i32x4(c[2][x], c[3][x], 0x44), p3 = _mm512_shuffle_i32x4(c[2][x], c[3][x], 0xee);
    _mm512_storeu_si512(out + (0 + x) * out_stride, _mm512_shuffle_i32x4(p0, p2, 0x88));
    _mm512_storeu_si512(out + (4 + x) * out_stride, _mm512_shuffle_i32x4(p0, p2, 0xdd));
    _mm512_storeu_si512(out + (8 + x) * out_stride, _mm512_shuffle_i32x4(p1, p3, 0x88));
    _mm512_storeu_si512(out + (12 + x) * out_stride, _mm512_shuffle_i32x4(p1, p3, 0xdd));
  }
}

// The 128-bit lane moves are done by the loads: vector v[a][b] gathers, in lane l, words
// 4b..4b+3 of row 4l + a (a 128-bit load and three inserts from memory), so only two in-lane
// unpack stages remain. The four-stage transpose above (two of them cross-lane vshufi32x4)
// from whole-row loads took 1.2-1.3x as long, the shuffle unit its limit (stored B^T 1024 x
// 1024 packed whole, Zen 4: 69 vs 55 us from L3, 180 vs 150 us from memory). Inside the GEMM
// the packing from memory waits on DRAM at about copy speed, so there the gain is small.
__attribute__((target("avx512f"))) void transpose_16x16_words_avx512(const void* in, long in_stride_bytes,
                                                                      unsigned* out, long out_stride) {
  const char* src = static_cast<const char*>(in);
  auto piece = [&](int row, int b) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + row * in_stride_bytes + 16 * b));
  };
  __m512i v[4][4];
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      __m512i x = _mm512_castsi128_si512(piece(a, b));
      x = _mm512_inserti32x4(x, piece(4 + a, b), 1);
      x = _mm512_inserti32x4(x, piece(8 + a, b), 2);
      v[a][b] = _mm512_inserti32x4(x, piece(12 + a, b), 3);
    }
  for (int b = 0; b < 4; ++b) {  // in each lane, the 4x4 word transpose of rows a = 0..3 gives output rows 4b..4b+3
    const __m512i t0 = _mm512_unpacklo_epi32(v[0][b], v[1][b]), t1 = _mm512_unpackhi_epi32(v[0][b], v[1][b]);
    const __m512i t2 = _mm512_unpacklo_epi32(v[2][b], v[3][b]), t3 = _mm512_unpackhi_epi32(v[2][b], v[3][b]);
    _mm512_storeu_si512(out + (4 * b + 0) * out_stride, _mm512_unpacklo_epi64(t0, t2));
    _mm512_storeu_si512(out + (4 * b + 1) * out_stride, _mm512_unpackhi_epi64(t0, t2));
    _mm512_storeu_si512(out + (4 * b + 2) * out_stride, _mm512_unpacklo_epi64(t1, t3));
    _mm512_storeu_si512(out + (4 * b + 3) * out_stride, _mm512_unpackhi_epi64(t1, t3));
  }
}

TP_BF16_TARGET void transpose_pairs_16x32_avx512(const unsigned short* in, long ld, unsigned* out, long out_stride) {
  __m512i r[16];
  for (int q = 0; q < 16; ++q) {
    const __m512i lo = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * q * ld)));
    const __m512i hi = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (2 * q + 1) * ld)));
    r[q] = _mm512_or_si512(lo, _mm512_maskz_slli_epi32(0xffff, hi, 16));
  }
  transpose_store(r, out, out_stride);
}

// vpermt2w picks 16-bit elements from two registers by index (0-31: lo, 32-63: hi), so
// every 32 words of a panel row are two permutes of one 64-byte load from each source row.
TP_BF16_TARGET void interleave_panels_avx512(const unsigned short* lo, const unsigned short* hi, long panels,
                                             int width, unsigned* out, long panel_stride) {
  alignas(64) unsigned short first[32], second[32];
  for (int j = 0; j < 16; ++j) {
    first[2 * j] = (unsigned short)j, first[2 * j + 1] = (unsigned short)(32 + j);
    second[2 * j] = (unsigned short)(16 + j), second[2 * j + 1] = (unsigned short)(48 + j);
  }
  const __m512i idx0 = _mm512_load_si512(first), idx1 = _mm512_load_si512(second);
  for (long p = 0; p < panels; ++p, out += panel_stride)
    for (int w = 0; w < width; w += 32, lo += 32, hi += 32) {
      const __m512i l = _mm512_loadu_si512(lo), h = _mm512_loadu_si512(hi);
      _mm512_storeu_si512(out + w, _mm512_permutex2var_epi16(l, idx0, h));
      _mm512_storeu_si512(out + w + 16, _mm512_permutex2var_epi16(l, idx1, h));
    }
}

}  // namespace trainplan::kernels::detail
