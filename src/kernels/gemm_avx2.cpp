// AVX2+FMA pieces of the GEMM: the 4x24 micro-kernel and vector BF16 <-> FP32
// conversions (RNE, NaN kept quiet) used by packing and the epilogue.
#include <immintrin.h>

#include "kernels/gemm_micro.h"

namespace trainplan::kernels::detail {
namespace {

// 4x24: 12 accumulators, three B vectors and four A broadcasts per k. Fewer
// broadcasts per FMA than 6x16 (4 per 12 instead of 6 per 12), which matters
// where a broadcast occupies an FP pipe slot (Zen 5).
void kernel_4x24(long kc, const void* a_, const void* b_, float* c, long ldc, bool accumulate) {
  const float* a = static_cast<const float*>(a_);
  const float* b = static_cast<const float*>(b_);
  __m256 acc[4][3];
  for (int i = 0; i < 4; ++i) acc[i][0] = acc[i][1] = acc[i][2] = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (long p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), b2 = _mm256_loadu_ps(b + 16);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm256_fmadd_ps(ai, b2, acc[i][2]);
    }
    a += 4;
    b += 24;
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    float* ci = c + i * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < 3; ++v) {
      if (accumulate) acc[i][v] = _mm256_add_ps(acc[i][v], _mm256_loadu_ps(ci + 8 * v));
      _mm256_storeu_ps(ci + 8 * v, acc[i][v]);
    }
  }
}

// Eight BF16 at in, widened to FP32 (a BF16 is the top half of its FP32).
inline __m256 widen8(const unsigned short* in) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))), 16));
}

// The depths [p, depth) the vector transposes leave: out[q * stride + i] = row i's value q.
inline void widen_depth_tail(const unsigned short* in, long ld, int rows, long p, long depth, float* out, long stride) {
  for (; p < depth; ++p)
    for (int i = 0; i < rows; ++i) {
      const unsigned u = unsigned(in[i * ld + p]) << 16;
      __builtin_memcpy(out + p * stride + i, &u, 4);
    }
}

}  // namespace

MicroKernel avx2_micro_kernel() {
  MicroKernel k{4, 24, &kernel_4x24, Packing::fp32};
  k.kc = 256;  // B panel: 256 x 24 floats = 24 KiB
  k.mc = 192;
  return k;
}

void to_float_avx2(const unsigned short* in, float* out, long n) {
  long i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, widen8(in + i));
  }
  for (; i < n; ++i) {
    unsigned u = unsigned(in[i]) << 16;
    __builtin_memcpy(out + i, &u, 4);
  }
}

void rows_to_float_panels_avx2(const unsigned short* in, long ld, long rows, long panels, int nr, float* out,
                               long panel_stride, long rows_ahead) {
  for (long q = 0; q < panels; ++q, in += nr, out += panel_stride) {
    for (long r = 0; r < rows_ahead; ++r) _mm_prefetch(reinterpret_cast<const char*>(in + (rows + r) * ld), _MM_HINT_T0);
    for (long r = 0; r < rows; ++r)
      for (int j = 0; j < nr; j += 8) _mm256_storeu_ps(out + r * nr + j, widen8(in + r * ld + j));
  }
}

void rows_to_float_4_row_panels_avx2(const unsigned short* in, long ld, long rows, long columns, float* out,
                                     long panel_stride) {
  for (long i = 0; i < columns; i += 8, out += 2 * panel_stride)
    for (long r = 0; r < rows; ++r) {
      const __m256 x = widen8(in + r * ld + i);
      _mm_storeu_ps(out + r * 4, _mm256_castps256_ps128(x));
      _mm_storeu_ps(out + panel_stride + r * 4, _mm256_extractf128_ps(x, 1));
    }
}

void four_rows_to_float_panel_avx2(const unsigned short* in, long ld, long depth, float* out) {
  long p = 0;
  for (; p + 8 <= depth; p += 8) {
    __m256 r[4];  // row i's 8 values, widened to FP32
    for (int i = 0; i < 4; ++i)
      r[i] = widen8(in + i * ld + p);
    // 4 x 8 transpose: u0 holds depths 0 and 4 of the four rows, u1 1 and 5, u2 2 and 6, u3 3 and 7.
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    _mm256_storeu_ps(out + p * 4, _mm256_permute2f128_ps(u0, u1, 0x20));
    _mm256_storeu_ps(out + p * 4 + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
    _mm256_storeu_ps(out + p * 4 + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
    _mm256_storeu_ps(out + p * 4 + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
  }
  widen_depth_tail(in, ld, 4, p, depth, out, 4);
}

void rows_to_float_columns_avx2(const unsigned short* in, long ld, long depth, float* out, long out_stride) {
  long p = 0;
  for (; p + 8 <= depth; p += 8) {
    __m256 r[8];  // row i's 8 values, widened to FP32
    for (int i = 0; i < 8; ++i)
      r[i] = widen8(in + i * ld + p);
    // 8 x 8 transpose: pairs of rows interleaved, then pairs of pairs, then the 128-bit halves.
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    const __m256 c[8] = {_mm256_permute2f128_ps(u0, u4, 0x20), _mm256_permute2f128_ps(u1, u5, 0x20),
                         _mm256_permute2f128_ps(u2, u6, 0x20), _mm256_permute2f128_ps(u3, u7, 0x20),
                         _mm256_permute2f128_ps(u0, u4, 0x31), _mm256_permute2f128_ps(u1, u5, 0x31),
                         _mm256_permute2f128_ps(u2, u6, 0x31), _mm256_permute2f128_ps(u3, u7, 0x31)};
    for (int q = 0; q < 8; ++q) _mm256_storeu_ps(out + (p + q) * out_stride, c[q]);
  }
  widen_depth_tail(in, ld, 8, p, depth, out, out_stride);
}

void to_bf16_avx2(const float* in, unsigned short* out, long n) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
  const __m256i quiet = _mm256_set1_epi32(0x00400000);
  long i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i r[2];
    for (int h = 0; h < 2; ++h) {
      __m256i u = _mm256_castps_si256(_mm256_loadu_ps(in + i + 8 * h));
      __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
      __m256i rounded = _mm256_add_epi32(u, _mm256_add_epi32(bias, lsb));
      __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
      rounded = _mm256_blendv_epi8(rounded, _mm256_or_si256(u, quiet), nan);
      r[h] = _mm256_srli_epi32(rounded, 16);
    }
    // packus interleaves 128-bit lanes; the permute puts them back in order.
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  for (; i < n; ++i) {
    unsigned u;
    __builtin_memcpy(&u, in + i, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      out[i] = static_cast<unsigned short>((u >> 16) | 0x40u);
      continue;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    out[i] = static_cast<unsigned short>(u >> 16);
  }
}

}  // namespace trainplan::kernels::detail
