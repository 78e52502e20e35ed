// AMX-BF16 micro-kernel, 32x32: C as 2x2 FP32 tiles (tmm0-3), two A tiles of
// 16 rows x 32 BF16 (tmm4-5) and two B tiles of 16 k-pairs x 16 columns (tmm6-7)
// per 32 k; each TDPBF16PS does a 16x16x32 product. Built with -mamx-tile
// -mamx-bf16 (CMake, *_amx.cpp); its AVX-512 code carries function target
// attributes, and nothing here runs unless cpu_has(Isa::amx_bf16).
// Numerics (Intel SDM, TDPBF16PS): products exact in FP32, sums round to nearest
// even, denormal inputs and outputs flushed to zero, as VDPBF16PS.
#include <immintrin.h>

#include "kernels/gemm_micro.h"

namespace trainplan::kernels::detail {
namespace {

// The 64-byte tile configuration (Intel SDM vol. 1, "Tile configuration"): palette 1,
// then bytes per row of each tile (16 x uint16 from byte 16), then rows (16 x uint8 from byte 48).
struct alignas(64) TileConfig {
  unsigned char palette = 1, start_row = 0, reserved[14] = {};
  unsigned short colsb[16] = {};
  unsigned char rows[16] = {};
};

// Every tile: 16 rows of 64 bytes (16 FP32, 32 BF16 or 16 BF16 pairs).
constexpr TileConfig all_tiles_16x64() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  return cfg;
}

void configure_tiles() {
  static constexpr TileConfig kConfig = all_tiles_16x64();
  // GCC 12 does not treat LDTILECFG as reading its operand and dropped the stores that
  // built a stack copy (a fault at run time); a constant object plus this barrier keeps it.
  __asm__ volatile("" ::: "memory");
  _tile_loadconfig(&kConfig);
}

// Tiles 0-3 (C) from an FP32 block c (row stride ldc floats), or zeros.
inline __attribute__((always_inline)) void load_c(const float* c, long ldc, bool accumulate) {
  const long c_stride = ldc * 4;
  if (accumulate) {
    _tile_loadd(0, c, c_stride);
    _tile_loadd(1, c + 16, c_stride);
    _tile_loadd(2, c + 16 * ldc, c_stride);
    _tile_loadd(3, c + 16 * ldc + 16, c_stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
}

inline __attribute__((always_inline)) void store_c(float* c, long ldc) {
  const long c_stride = ldc * 4;
  _tile_stored(0, c, c_stride);
  _tile_stored(1, c + 16, c_stride);
  _tile_stored(2, c + 16 * ldc, c_stride);
  _tile_stored(3, c + 16 * ldc + 16, c_stride);
}

// a: 32 rows of kp = round_up(kc, 32) BF16 (row stride kp); b: kp / 2 rows of 32
// pair words (row stride 128 bytes); both zero-padded past kc.
inline __attribute__((always_inline)) void dot_panels(long kc, const void* a_, const void* b_) {
  const unsigned short* a = static_cast<const unsigned short*>(a_);
  const unsigned* b = static_cast<const unsigned*>(b_);
  const long kp = (kc + 31) / 32 * 32, a_stride = kp * 2;
  const unsigned short* a1 = a + 16 * kp;
  for (long p = 0; p < kp; p += 32) {
    const unsigned* bp = b + p * 16;  // p / 2 pair rows of 32 words
    _tile_loadd(4, a + p, a_stride);
    _tile_loadd(6, bp, 128);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, bp + 16, 128);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a1 + p, a_stride);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
}

void kernel_32x32(long kc, const void* a, const void* b, float* c, long ldc, bool accumulate) {
  load_c(c, ldc, accumulate);
  dot_panels(kc, a, b);
  store_c(c, ldc);
}

// Rounds rows x cols of a 32 x 32 FP32 tile (row stride 32) into BF16 C, adding C's
// old values first if accumulate. VCVTNEPS2BF16 rounds to nearest even and flushes
// denormals (Intel SDM), as TDPBF16PS already does to its results; NaN stays NaN.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void round_into(const float* tile, unsigned short* c, long ldc,
                                                                        bool accumulate, int rows, int cols) {
  const __mmask16 lo = __mmask16(cols >= 16 ? 0xffff : (1u << cols) - 1);
  const __mmask16 hi = __mmask16(cols >= 32 ? 0xffff : cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
  for (int r = 0; r < rows; ++r) {
    unsigned short* ci = c + r * ldc;
    __m512 v0 = _mm512_load_ps(tile + 32 * r), v1 = _mm512_load_ps(tile + 32 * r + 16);
    if (accumulate) {
      const __m512i old0 = _mm512_maskz_cvtepu16_epi32(lo, _mm256_maskz_loadu_epi16(lo, ci));
      const __m512i old1 = _mm512_maskz_cvtepu16_epi32(hi, _mm256_maskz_loadu_epi16(hi, ci + 16));
      v0 = _mm512_add_ps(v0, _mm512_castsi512_ps(_mm512_slli_epi32(old0, 16)));
      v1 = _mm512_add_ps(v1, _mm512_castsi512_ps(_mm512_slli_epi32(old1, 16)));
    }
    _mm256_mask_storeu_epi16(ci, lo, (__m256i)_mm512_cvtneps_pbh(v0));
    _mm256_mask_storeu_epi16(ci + 16, hi, (__m256i)_mm512_cvtneps_pbh(v1));
  }
}

// The last K block: partial sums from ws (earlier K blocks) when `partial`, and the
// result rounded straight into C, so C never makes a second trip through FP32 memory.
void final_32x32(long kc, const void* a, const void* b, const float* ws, long ldws, bool partial,
                 unsigned short* c, long ldc, bool accumulate_c, int rows, int cols) {
  alignas(64) float tile[32 * 32];
  load_c(ws, ldws, partial);
  dot_panels(kc, a, b);
  store_c(tile, 32);
  round_into(tile, c, ldc, accumulate_c, rows, cols);
}

}  // namespace

MicroKernel amx_bf16_micro_kernel() {
  MicroKernel k{32, 32, &kernel_32x32, Packing::amx};
  k.setup = &configure_tiles;
  k.final = &final_32x32;
  k.kc = 256;  // A micro-panel 32 x 256 BF16 = 16 KiB and B micro-panel 16 KiB: both in L1D
  k.mc = 256;  // A block: 256 x 256 BF16 = 128 KiB of L2
  return k;
}

// TDPBF16PS throughput loop: six independent accumulator tiles, so the ~52-cycle
// latency hides behind the one-per-16-cycles issue rate; operands stay in tiles.
double tile_dot_loop_amx(long iterations) {
  configure_tiles();
  alignas(64) static const unsigned short zeros[16 * 32] = {};
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_loadd(6, zeros, 64);
  _tile_loadd(7, zeros, 64);
  for (long i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 6, 7);
    _tile_dpbf16ps(1, 6, 7);
    _tile_dpbf16ps(2, 6, 7);
    _tile_dpbf16ps(3, 6, 7);
    _tile_dpbf16ps(4, 6, 7);
    _tile_dpbf16ps(5, 6, 7);
  }
  alignas(64) float out[16 * 16];
  _tile_stored(0, out, 64);
  volatile float sink = out[0];
  (void)sink;
  return double(iterations) * 6 * 16 * 16 * 32 * 2;
}

}  // namespace trainplan::kernels::detail
