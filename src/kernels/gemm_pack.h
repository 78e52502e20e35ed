// Internal to the GEMM: packing blocks of op(A) and op(B) into the layouts the
// micro-kernels read (gemm_micro.h: FP32, BF16 pair words, AMX), whole panels with
// zero padding, from untransposed or stored-transposed sources. AVX-512 helpers
// are used only where the CPU has them (checked at run time).
#pragma once
#include <cstdint>

#include "kernels/bf16.h"
#include "kernels/gemm.h"

namespace trainplan::kernels::detail {

// One GEMM's operands: op(A) is m x k, op(B) k x n, row-major with leading dimensions.
struct Problem {
  Trans ta, tb;
  long k;
  const bf16* a;
  long lda;
  const bf16* b;
  long ldb;
  bf16* c;
  long ldc;
  bool accumulate;
  long n = 0;  // op(B)'s columns in the whole GEMM (a task may cover fewer)
};

inline long round_up(long x, long to) { return (x + to - 1) / to * to; }

// Packs rows [i0, i0+mc) x depth [p0, p0+kc) of op(A) into MR-row panels, zero-padded.
void pack_a(const Problem& pr, long i0, long mc, long p0, long kc, int mr, float* out);

// The same as BF16 pair words: word (p2, i) holds op(A)[i][2 p2] | op(A)[i][2 p2 + 1] << 16.
void pack_a_pairs(const Problem& pr, long i0, long mc, long p0, long kc, int mr, std::uint32_t* out);

// Packs depth [p0, p0+kc) x columns [j0, j0+nc) of op(B) into NR-column panels, zero-padded.
// Untransposed B is walked row by row across all panels: reading each source row
// once, in order, keeps the hardware prefetcher streaming (panel by panel, every
// row step jumped ldb elements and the packing cost a third of the GEMM).
void pack_b(const Problem& pr, long p0, long kc, long j0, long nc, int nr, float* out);

// The same as BF16 pair words: word (p2, j) holds op(B)[2 p2][j] | op(B)[2 p2 + 1][j] << 16,
// untransposed B again walked two source rows at a time across all panels.
void pack_b_pairs(const Problem& pr, long p0, long kc, long j0, long nc, int nr, std::uint32_t* out, long pairs_pad = 0);

// Stored B^T in pair words, every K block (KC deep) of columns [j0, j0+nc) at once, into
// their blocks of NR-column panels (block pc at out + nc_pad * pc / 2). Sixteen source rows
// at a time from start to end: block by block, each row went in 512-byte pieces and the
// transposes waited on memory (6.5% of NT 512,1024,1024).
void pack_bt_pairs_all(const Problem& pr, long kc_block, long j0, long nc, int nr, std::uint32_t* out);

// AMX layout of op(A): rows [i0, i0+mc) x depth [p0, p0+kc) as plain BF16 rows of
// round_up(kc, 32), mc rounded up to MR rows, all padding zero (row-major [mc_pad][kp]).
void pack_a_amx(const Problem& pr, long i0, long mc, long p0, long kc, int mr, std::uint32_t* out_words);

// AMX layout of op(B): depth [p0, p0+kc) x columns [j0, j0+nc) as NR-column panels of
// round_up(kc, 32) / 2 rows of pair words, padding zero.
void pack_b_amx(const Problem& pr, long p0, long kc, long j0, long nc, int nr, std::uint32_t* out);

}  // namespace trainplan::kernels::detail
