// AVX-512F micro-kernel, 6x64: 24 accumulators, four B vectors and six A
// broadcasts per k. Wide and short because on Zen 5 each broadcast costs an FP
// pipe slot: 6 per 24 FMAs measured faster than 12 per 24 (12x32 tile). Compiled with a function-level target so the rest of the
// library keeps a portable baseline; only called where the CPU has AVX-512F.
#include <immintrin.h>

#include "kernels/gemm_micro.h"
#include "kernels/store_tile_avx512.h"

namespace trainplan::kernels::detail {
namespace {

__attribute__((target("avx512f"))) void kernel_6x64(long kc, const void* a_, const void* b_,
                                                      float* c, long ldc, bool accumulate) {
  const float* a = static_cast<const float*>(a_);
  const float* b = static_cast<const float*>(b_);
  __m512 acc[6][4];
  for (int i = 0; i < 6; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (long p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
    const __m512 b2 = _mm512_load_ps(b + 32), b3 = _mm512_load_ps(b + 48);
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(ai, b2, acc[i][2]);
      acc[i][3] = _mm512_fmadd_ps(ai, b3, acc[i][3]);
    }
    a += 6;
    b += 64;
  }
  store_tile_6x64(c, ldc, acc, accumulate);
}

}  // namespace

MicroKernel avx512_micro_kernel() {
  MicroKernel k{6, 64, &kernel_6x64, Packing::fp32};
  k.kc = 128;  // B panel: 128 x 64 floats = 32 KiB, inside L1D with the A micro-panel
  k.mc = 192;  // A block: 192 x 128 floats = 96 KiB of L2
  return k;
}

}  // namespace trainplan::kernels::detail
