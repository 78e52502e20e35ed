// Internal to the GEMM: a micro-kernel multiplies a packed A panel (MR rows,
// k-major) by a packed B panel (NR columns, k-major) into a full MR x NR FP32
// tile c (row stride ldc), adding to c if accumulate. FP32 kernels take floats,
// one k per step; BF16 kernels take 32-bit words holding two consecutive k
// (low half = even k), kc rounded up to even and zero-padded. The AMX kernel
// takes A as MR plain BF16 rows of kc rounded up to 32 and B as pair words, k
// rounded up to 32 (Packing::amx); its setup() must run on a thread before it.
#pragma once

namespace trainplan::kernels::detail {

using MicroKernelFn = void (*)(long kc, const void* a, const void* b, float* c, long ldc,
                               bool accumulate);

// Optional last-K-block variant: starts from the FP32 partial sums in ws (if partial),
// and writes rows x cols of the tile rounded to BF16 into c (row stride ldc elements),
// adding c's old values if accumulate_c.
using FinalKernelFn = void (*)(long kc, const void* a, const void* b, const float* ws, long ldws, bool partial,
                               unsigned short* c, long ldc, bool accumulate_c, int rows, int cols);

enum class Packing { fp32, bf16_pairs, amx };

// A column of C tiles for a tile kernel (BF16 pairs): `rows` (any number, MR at a time)
// x `cols` (<= NR) valid, over depth kc; rows and columns past them are neither read from
// A nor written.
struct TileArgs {
  long kc = 0;
  const void* a = nullptr;  // packed A panels, or with a_row_bytes > 0 op(A)'s first row in place
  long a_row_bytes = 0;     // in place: distance between rows (kc even: pairs never cross a row)
  long a_tile_bytes = 0;    // distance between the A of consecutive MR-row tiles
  const void* b = nullptr;  // packed B panel
  float* ws = nullptr;      // FP32 partial sums of the tile, row stride ldws
  long ldws = 0;
  bool partial = false;           // ws holds earlier K blocks' sums: add them
  unsigned short* c = nullptr;    // last K block: round to BF16 into C (row stride ldc) instead of ws
  long ldc = 0;
  bool accumulate_c = false;      // ... adding C's old values
  int rows = 0, cols = 0;
  // Optional (cols = NR, kc even): the panel at b is not packed yet. The column's first
  // tile interleaves it from op(B)'s rows (row p at b_src + p * b_src_ld), writing it to
  // b as it multiplies, and the other tiles read it from there.
  const unsigned short* b_src = nullptr;
  long b_src_ld = 0;
};
using TileKernelFn = void (*)(const TileArgs&);

struct MicroKernel {
  int mr = 0, nr = 0;
  MicroKernelFn fn = nullptr;
  Packing packing = Packing::fp32;
  // Blocking sized so a kc x NR panel of B stays in the 48 KiB L1D of Zen 5
  // and an MC x KC block of A in its 1 MiB L2 (both with room for C and A).
  long kc = 256, mc = 144;
  void (*setup)() = nullptr;  // per-thread state the kernel needs (AMX tile configuration)
  FinalKernelFn final = nullptr;
  // Optional, replaces fn and final: partial tiles without padding work, op(A) read in
  // place (no packing) when untransposed with even K, BF16 written straight to C.
  TileKernelFn tile = nullptr;
};

MicroKernel portable_micro_kernel();
MicroKernel avx2_micro_kernel();         // valid only where cpu_has(Isa::avx2)
MicroKernel avx512_micro_kernel();       // valid only where cpu_has(Isa::avx512)
MicroKernel avx512_bf16_micro_kernel();  // valid only where cpu_has(Isa::avx512_bf16)
MicroKernel amx_bf16_micro_kernel();     // valid only where cpu_has(Isa::amx_bf16)

void to_float_avx2(const unsigned short* in, float* out, long n);
void to_bf16_avx2(const float* in, unsigned short* out, long n);
// `rows` source rows ld apart, each as `panels` pieces of nr (a multiple of 8) BF16, widened:
// row r's piece q to out + q * panel_stride + r * nr; the next `rows_ahead` rows' pieces are
// prefetched as it goes.
void rows_to_float_panels_avx2(const unsigned short* in, long ld, long rows, long panels, int nr, float* out,
                               long panel_stride, long rows_ahead);
// `rows` source rows ld apart as 4-wide row panels (AVX2's MR): values i..i+3 of row r to
// out + (i / 4) * panel_stride + r * 4, for i < columns (a multiple of 8).
void rows_to_float_4_row_panels_avx2(const unsigned short* in, long ld, long rows, long columns, float* out,
                                     long panel_stride);
// out[p * 4 + i] = row i's value p, as FP32, for 4 BF16 rows ld apart and p < depth (a 4-row panel).
void four_rows_to_float_panel_avx2(const unsigned short* in, long ld, long depth, float* out);
// out[p * out_stride + i] = row i's value p, as FP32, for 8 BF16 rows ld apart and p < depth.
void rows_to_float_columns_avx2(const unsigned short* in, long ld, long depth, float* out, long out_stride);
// Interleaves rows r0 and r1 (n BF16 each) into n words r0[j] | r1[j] << 16.
void interleave_pairs_avx512(const unsigned short* r0, const unsigned short* r1, unsigned* out, long n);
// The same for `panels` whole panels of `width` words (a multiple of 32): `width` BF16
// of each row per panel, the panel's words at out + p * panel_stride.
void interleave_panels_avx512(const unsigned short* lo, const unsigned short* hi, long panels, int width,
                              unsigned* out, long panel_stride);
// out[c * out_stride + r] = word c of input row r, for a 16 x 16 block of 32-bit words
// (input rows in_stride_bytes apart, any alignment).
void transpose_16x16_words_avx512(const void* in, long in_stride_bytes, unsigned* out, long out_stride);
// out[i * out_stride + q] = in[2q * ld + i] | in[(2q + 1) * ld + i] << 16 for i, q < 16:
// 32 rows of 16 BF16 to 16 rows of 16 pair words.
void transpose_pairs_16x32_avx512(const unsigned short* in, long ld, unsigned* out, long out_stride);

}  // namespace trainplan::kernels::detail
