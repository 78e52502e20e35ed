// The FMA loops behind fma_peak_flops_per_s: 12 independent accumulator
// chains, enough to cover FMA latency on two pipes (and the VDPBF16PS loop,
// 4 FLOPs per lane). Returns FLOPs done.
#include <immintrin.h>

namespace trainplan::kernels::detail {

double fma_loop_avx2(long iterations) {
  // Distinct starting values: identical chains would be merged by the compiler into one
  // (the first version of this loop measured FMA latency, not throughput, that way).
  __m256 a0 = _mm256_set1_ps(0.10f), a1 = _mm256_set1_ps(0.11f), a2 = _mm256_set1_ps(0.12f);
  __m256 a3 = _mm256_set1_ps(0.13f), a4 = _mm256_set1_ps(0.14f), a5 = _mm256_set1_ps(0.15f);
  __m256 a6 = _mm256_set1_ps(0.16f), a7 = _mm256_set1_ps(0.17f), a8 = _mm256_set1_ps(0.18f);
  __m256 a9 = _mm256_set1_ps(0.19f), a10 = _mm256_set1_ps(0.20f), a11 = _mm256_set1_ps(0.21f);
  const __m256 m = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm256_fmadd_ps(a0, m, c), a1 = _mm256_fmadd_ps(a1, m, c), a2 = _mm256_fmadd_ps(a2, m, c);
    a3 = _mm256_fmadd_ps(a3, m, c), a4 = _mm256_fmadd_ps(a4, m, c), a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c), a7 = _mm256_fmadd_ps(a7, m, c), a8 = _mm256_fmadd_ps(a8, m, c);
    a9 = _mm256_fmadd_ps(a9, m, c), a10 = _mm256_fmadd_ps(a10, m, c), a11 = _mm256_fmadd_ps(a11, m, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  volatile float sink = _mm256_cvtss_f32(s);  // keeps the loop from being optimized away
  (void)sink;
  return double(iterations) * 12 * 8 * 2;
}

__attribute__((target("avx512f"))) double fma_loop_avx512(long iterations) {
  __m512 a0 = _mm512_set1_ps(0.10f), a1 = _mm512_set1_ps(0.11f), a2 = _mm512_set1_ps(0.12f);
  __m512 a3 = _mm512_set1_ps(0.13f), a4 = _mm512_set1_ps(0.14f), a5 = _mm512_set1_ps(0.15f);
  __m512 a6 = _mm512_set1_ps(0.16f), a7 = _mm512_set1_ps(0.17f), a8 = _mm512_set1_ps(0.18f);
  __m512 a9 = _mm512_set1_ps(0.19f), a10 = _mm512_set1_ps(0.20f), a11 = _mm512_set1_ps(0.21f);
  const __m512 m = _mm512_set1_ps(0.9999f), c = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm512_fmadd_ps(a0, m, c), a1 = _mm512_fmadd_ps(a1, m, c), a2 = _mm512_fmadd_ps(a2, m, c);
    a3 = _mm512_fmadd_ps(a3, m, c), a4 = _mm512_fmadd_ps(a4, m, c), a5 = _mm512_fmadd_ps(a5, m, c);
    a6 = _mm512_fmadd_ps(a6, m, c), a7 = _mm512_fmadd_ps(a7, m, c), a8 = _mm512_fmadd_ps(a8, m, c);
    a9 = _mm512_fmadd_ps(a9, m, c), a10 = _mm512_fmadd_ps(a10, m, c), a11 = _mm512_fmadd_ps(a11, m, c);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  volatile float sink = _mm512_cvtss_f32(s);
  (void)sink;
  return double(iterations) * 12 * 16 * 2;
}

// 24 chains: VDPBF16PS has a longer latency than FMA, and 12 chains measured
// below the rate the 24-accumulator GEMM kernel itself reaches.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) double dot_bf16_loop_avx512(long iterations) {
  __m512 acc[24];
#pragma GCC unroll 24
  for (int j = 0; j < 24; ++j) acc[j] = _mm512_set1_ps(0.1f + 0.01f * float(j));
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x3a803a80);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (int j = 0; j < 24; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], x, y);
  }
  __m512 s = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < 24; ++j) s = _mm512_add_ps(s, acc[j]);
  volatile float sink = _mm512_cvtss_f32(s);
  (void)sink;
  return double(iterations) * 24 * 16 * 4;
}

}  // namespace trainplan::kernels::detail
