// Writes a 6x64 FP32 accumulator tile to C (adding C's old values when
// `accumulate`). Shared by the AVX-512 micro-kernels; target-attributed and
// always inlined so the tile stays in registers in its callers.
#pragma once
#include <immintrin.h>

namespace trainplan::kernels::detail {

__attribute__((target("avx512f"), always_inline)) inline void store_tile_6x64(float* c, long ldc,
                                                                               __m512 (&acc)[6][4],
                                                                               bool accumulate) {
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) {
    float* ci = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      if (accumulate) acc[i][v] = _mm512_add_ps(acc[i][v], _mm512_loadu_ps(ci + 16 * v));
      _mm512_storeu_ps(ci + 16 * v, acc[i][v]);
    }
  }
}

}  // namespace trainplan::kernels::detail
