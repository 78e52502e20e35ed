// GEMM driver: BLIS-style blocking (NC columns, KC depth, MC rows), packing
// BF16 panels into FP32 so the micro-kernel runs plain FP32 FMAs. Partial sums
// over K live in an FP32 workspace; BF16 rounding happens once, at the end.
// Threads split C into disjoint row or column ranges, each a serial problem.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/gemm_micro.h"
#include "kernels/thread_pool.h"

namespace tp::kernels {
namespace detail {
namespace {

constexpr int kPortableMr = 4, kPortableNr = 16;

void portable_kernel(long kc, const void* a_, const void* b_, float* c, long ldc, bool accumulate) {
  const float* a = static_cast<const float*>(a_);
  const float* b = static_cast<const float*>(b_);
  float acc[kPortableMr][kPortableNr] = {};
  for (long p = 0; p < kc; ++p, a += kPortableMr, b += kPortableNr)
    for (int i = 0; i < kPortableMr; ++i)
      for (int j = 0; j < kPortableNr; ++j) acc[i][j] += a[i] * b[j];
  for (int i = 0; i < kPortableMr; ++i)
    for (int j = 0; j < kPortableNr; ++j) c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.f) + acc[i][j];
}

}  // namespace

MicroKernel portable_micro_kernel() { return {kPortableMr, kPortableNr, &portable_kernel, Packing::fp32}; }

}  // namespace detail

void to_float(const bf16* in, float* out, long n) {
  if (cpu_has(Isa::avx2)) return detail::to_float_avx2(&in->bits, out, n);
  for (long i = 0; i < n; ++i) out[i] = to_float(in[i]);
}

void to_bf16(const float* in, bf16* out, long n) {
  if (cpu_has(Isa::avx2)) return detail::to_bf16_avx2(in, &out->bits, n);
  for (long i = 0; i < n; ++i) out[i] = to_bf16(in[i]);
}

namespace {

// NC cap: 1024 measured best on Zen 5 (single thread, 2048^3 and 256x4096x4096) against
// 256, 512 and 2048, although a 192 x 1024 FP32 block of C (768 KiB) nearly fills L2.
constexpr long kNcMax = 1024;
constexpr long kPackedBFloats = 4l << 20;  // packed k x NC panel of B: at most 16 MiB

long round_up(long x, long to) { return (x + to - 1) / to * to; }

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
};

// 64-byte aligned scratch that only grows, so panels start on a cache line.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > size_) {
      mem_.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(64))));
      size_ = bytes;
    }
    return mem_.get();
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  std::unique_ptr<std::byte[], Free> mem_;
  size_t size_ = 0;
};

std::uint32_t pair(const bf16* lo, const bf16* hi) { return std::uint32_t(lo->bits) | std::uint32_t(hi->bits) << 16; }

// Packs rows [i0, i0+mc) x depth [p0, p0+kc) of op(A) into MR-row panels, zero-padded.
void pack_a(const Problem& pr, long i0, long mc, long p0, long kc, int mr, float* out) {
  if (pr.ta == Trans::yes) {
    // Stored A^T: each k is one contiguous source row across the block; widen it once
    // (vectorized) and deal MR-wide pieces to the panels.
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(round_up(mc, mr)));
    const long panel = mr * kc;
    for (long p = 0; p < kc; ++p) {
      to_float(pr.a + (p0 + p) * pr.lda + i0, row.data(), mc);
      std::fill(row.begin() + mc, row.end(), 0.f);
      for (long ir = 0; ir < mc; ir += mr) std::memcpy(out + ir / mr * panel + p * mr, row.data() + ir, sizeof(float) * size_t(mr));
    }
    return;
  }
  for (long ir = 0; ir < mc; ir += mr, out += mr * kc) {
    const int rows = int(std::min<long>(mr, mc - ir));
    for (int i = 0; i < rows; ++i) {
      const bf16* src = pr.a + (i0 + ir + i) * pr.lda + p0;
      for (long p = 0; p < kc; ++p) out[p * mr + i] = to_float(src[p]);
    }
    for (int i = rows; i < mr; ++i)
      for (long p = 0; p < kc; ++p) out[p * mr + i] = 0.f;
  }
}

// The same as BF16 pair words: word (p2, i) holds op(A)[i][2 p2] | op(A)[i][2 p2 + 1] << 16.
void pack_a_pairs(const Problem& pr, long i0, long mc, long p0, long kc, int mr, std::uint32_t* out) {
  const long pairs = (kc + 1) / 2, full = kc / 2;
  const bf16 zero{};
  if (pr.ta == Trans::yes) {
    // Stored A^T: two source rows (k, k+1) interleave into one row of words for the
    // whole block (vectorized), then MR-wide pieces go to the panels.
    thread_local std::vector<std::uint32_t> row;
    thread_local std::vector<bf16> zeros;
    row.resize(static_cast<size_t>(round_up(mc, mr)));
    zeros.assign(static_cast<size_t>(mc), bf16{});
    const long panel = mr * pairs;
    const bool vector = cpu_has(Isa::avx512_bf16);
    // Each source row is a short piece (mc BF16) a whole row length from the last, which the
    // hardware prefetchers do not follow: fetch the pieces a few pairs ahead (a tenth of the
    // time of TN 4096,1024,512 went to waiting on them).
    constexpr long kAhead = 8;
    for (long q = 0; q < pairs; ++q) {
      const bf16* lo = pr.a + (p0 + 2 * q) * pr.lda + i0;
      const bf16* hi = 2 * q + 1 < kc ? lo + pr.lda : zeros.data();
      if (2 * (q + kAhead) + 1 < kc)
        for (long i = 0; i < mc; i += 32) {
          __builtin_prefetch(lo + 2 * kAhead * pr.lda + i);
          __builtin_prefetch(lo + (2 * kAhead + 1) * pr.lda + i);
        }
      if (vector) detail::interleave_pairs_avx512(&lo->bits, &hi->bits, row.data(), mc);
      else for (long i = 0; i < mc; ++i) row[static_cast<size_t>(i)] = pair(lo + i, hi + i);
      std::fill(row.begin() + mc, row.end(), 0u);
      if (mr == 6)  // the AVX-512 tile height: a fixed-size copy, not a library call per piece
        for (long ir = 0; ir < mc; ir += 6) std::memcpy(out + ir / 6 * panel + q * 6, row.data() + ir, 24);
      else
        for (long ir = 0; ir < mc; ir += mr)
          std::memcpy(out + ir / mr * panel + q * mr, row.data() + ir, sizeof(std::uint32_t) * size_t(mr));
    }
    return;
  }
  for (long ir = 0; ir < mc; ir += mr, out += mr * pairs) {
    const int rows = int(std::min<long>(mr, mc - ir));
    for (int i = 0; i < rows; ++i) {
      const bf16* src = pr.a + (i0 + ir + i) * pr.lda + p0;
      for (long q = 0; q < full; ++q) {
        std::uint32_t w;
        std::memcpy(&w, src + 2 * q, 4);  // row-major A already holds k pairs side by side
        out[q * mr + i] = w;
      }
      if (pairs > full) out[full * mr + i] = pair(src + kc - 1, &zero);
    }
    for (int i = rows; i < mr; ++i)
      for (long q = 0; q < pairs; ++q) out[q * mr + i] = 0;
  }
}

// Packs depth [p0, p0+kc) x columns [j0, j0+nc) of op(B) into NR-column panels, zero-padded.
// Untransposed B is walked row by row across all panels: reading each source row
// once, in order, keeps the hardware prefetcher streaming (panel by panel, every
// row step jumped ldb elements and the packing cost a third of the GEMM).
void pack_b(const Problem& pr, long p0, long kc, long j0, long nc, int nr, float* out) {
  if (pr.tb == Trans::no) {
    const long full = nc / nr * nr;
    for (long p = 0; p < kc; ++p) {
      const bf16* src = pr.b + (p0 + p) * pr.ldb + j0;
      for (long jr = 0; jr < full; jr += nr) to_float(src + jr, out + jr * kc + p * nr, nr);
      if (full < nc) {
        float* dst = out + full * kc + p * nr;
        for (long j = full; j < nc; ++j) dst[j - full] = to_float(src[j]);
        for (long j = nc - full; j < nr; ++j) dst[j] = 0.f;
      }
    }
    return;
  }
  for (long jr = 0; jr < nc; jr += nr, out += nr * kc) {
    const int cols = int(std::min<long>(nr, nc - jr));
    for (int j = 0; j < cols; ++j) {
      const bf16* src = pr.b + (j0 + jr + j) * pr.ldb + p0;
      for (long p = 0; p < kc; ++p) out[p * nr + j] = to_float(src[p]);
    }
    for (int j = cols; j < nr; ++j)
      for (long p = 0; p < kc; ++p) out[p * nr + j] = 0.f;
  }
}

// The same as BF16 pair words: word (p2, j) holds op(B)[2 p2][j] | op(B)[2 p2 + 1][j] << 16,
// untransposed B again walked two source rows at a time across all panels.
void pack_b_pairs(const Problem& pr, long p0, long kc, long j0, long nc, int nr, std::uint32_t* out, long pairs_pad = 0) {
  const long pairs = (kc + 1) / 2;
  if (pairs_pad < pairs) pairs_pad = pairs;
  if (pairs_pad > pairs)  // zero the padding pair rows of every panel (the AMX kernel reads k in steps of 32)
    for (long jr = 0; jr < round_up(nc, nr); jr += nr)
      std::memset(out + jr * pairs_pad + pairs * nr, 0, sizeof(std::uint32_t) * size_t((pairs_pad - pairs) * nr));
  const bf16 zero{};
  if (pr.tb == Trans::no) {
    static const bf16 zeros[64] = {};
    const long full = nc / nr * nr;
    const bool vector = nr <= 64 && cpu_has(Isa::avx512_bf16);
    for (long q = 0; q < pairs; ++q) {
      const bf16* lo = pr.b + (p0 + 2 * q) * pr.ldb + j0;
      const bf16* hi = 2 * q + 1 < kc ? lo + pr.ldb : nullptr;
      if (vector && hi && nr % 32 == 0) {  // AMX and AVX-512 tile widths: all panels of the row in one call
        detail::interleave_panels_avx512(&lo->bits, &hi->bits, full / nr, nr, out + q * nr, nr * pairs_pad);
      } else for (long jr = 0; jr < full; jr += nr) {
        std::uint32_t* dst = out + jr * pairs_pad + q * nr;
        if (vector && hi) detail::interleave_pairs_avx512(&(lo + jr)->bits, &(hi + jr)->bits, dst, nr);
        else for (int j = 0; j < nr; ++j) dst[j] = pair(lo + jr + j, hi ? hi + jr + j : zeros);
      }
      if (full < nc) {
        std::uint32_t* dst = out + full * pairs_pad + q * nr;
        for (long j = full; j < nc; ++j) dst[j - full] = pair(lo + j, hi ? hi + j : &zero);
        for (long j = nc - full; j < nr; ++j) dst[j] = 0;
      }
    }
    return;
  }
  // Stored B^T: source row j already holds column j's k pairs side by side, so whole
  // 16-column x 16-pair blocks are word transposes (AVX-512); the rest goes word by word.
  const bool vector = nr % 16 == 0 && cpu_has(Isa::avx512);
  for (long jr = 0; jr < nc; jr += nr, out += nr * pairs_pad) {
    const int cols = int(std::min<long>(nr, nc - jr));
    const long full_pairs = vector ? kc / 32 * 16 : 0, full_cols = vector ? cols / 16 * 16 : 0;
    for (long j = 0; j < full_cols; j += 16)
      for (long q = 0; q < full_pairs; q += 16)
        detail::transpose_16x16_words_avx512(pr.b + (j0 + jr + j) * pr.ldb + p0 + 2 * q, long(sizeof(bf16)) * pr.ldb,
                                             out + q * nr + j, nr);
    for (int j = 0; j < cols; ++j) {
      const bf16* src = pr.b + (j0 + jr + j) * pr.ldb + p0;
      for (long q = j < full_cols ? full_pairs : 0; q < pairs; ++q)
        out[q * nr + j] = pair(src + 2 * q, 2 * q + 1 < kc ? src + 2 * q + 1 : &zero);
    }
    for (int j = cols; j < nr; ++j)
      for (long q = 0; q < pairs; ++q) out[q * nr + j] = 0;
  }
}

// Stored B^T in pair words, every K block (KC deep) of columns [j0, j0+nc) at once, into
// their blocks of NR-column panels (block pc at out + nc_pad * pc / 2). Sixteen source rows
// at a time from start to end: block by block, each row went in 512-byte pieces and the
// transposes waited on memory (6.5% of NT 512,1024,1024).
void pack_bt_pairs_all(const Problem& pr, long kc_block, long j0, long nc, int nr, std::uint32_t* out) {
  const long nc_pad = round_up(nc, nr);
  const bool vector = nr % 16 == 0 && cpu_has(Isa::avx512);
  const bf16 zero{};
  for (long g = 0; g < nc_pad; g += 16) {
    const long cols = std::clamp(nc - g, 0l, 16l);
    for (long pc = 0; pc < pr.k; pc += kc_block) {
      const long kc = std::min(kc_block, pr.k - pc), pairs = (kc + 1) / 2;
      std::uint32_t* dst = out + nc_pad * (pc / 2) + g / nr * nr * pairs + g % nr;
      const long full_pairs = vector && cols == 16 ? kc / 32 * 16 : 0;
      for (long q = 0; q < full_pairs; q += 16) {
        const bf16* src = pr.b + (j0 + g) * pr.ldb + pc + 2 * q;
        for (long j = 0; j < 16; ++j) __builtin_prefetch(src + j * pr.ldb + 128);  // 4 blocks ahead
        detail::transpose_16x16_words_avx512(src, long(sizeof(bf16)) * pr.ldb, dst + q * nr, nr);
      }
      for (long j = 0; j < std::min(16l, nr - g % nr); ++j) {
        const bf16* src = pr.b + (j0 + g + j) * pr.ldb + pc;
        for (long q = j < cols ? full_pairs : 0; q < pairs; ++q)
          dst[q * nr + j] = j < cols ? pair(src + 2 * q, 2 * q + 1 < kc ? src + 2 * q + 1 : &zero) : 0;
      }
    }
  }
}

// AMX layout of op(A): rows [i0, i0+mc) x depth [p0, p0+kc) as plain BF16 rows of
// round_up(kc, 32), mc rounded up to MR rows, all padding zero (row-major [mc_pad][kp]).
void pack_a_amx(const Problem& pr, long i0, long mc, long p0, long kc, int mr, std::uint32_t* out_words) {
  const long kp = round_up(kc, 32), mc_pad = round_up(mc, mr);
  bf16* out = reinterpret_cast<bf16*>(out_words);
  if (pr.ta == Trans::no) {
    for (long i = 0; i < mc_pad; ++i) {
      bf16* dst = out + i * kp;
      if (i < mc) {
        std::memcpy(dst, pr.a + (i0 + i) * pr.lda + p0, sizeof(bf16) * size_t(kc));
        std::fill(dst + kc, dst + kp, bf16{});
      } else {
        std::fill(dst, dst + kp, bf16{});
      }
    }
    return;
  }
  // Stored A^T: each 16-row x 16-pair block of the output reads 32 source rows of 16
  // BF16, interleaved and transposed in registers; blocks reaching past mc or kc
  // (and CPUs without AVX-512, never given the AMX kernel) go element by element.
  const long pairs_pad = kp / 2;
  std::uint32_t* out32 = out_words;
  for (long i = 0; i < mc_pad; i += 16)
    for (long q = 0; q < pairs_pad; q += 16) {
      std::uint32_t* dst = out32 + i * pairs_pad + q;
      const bf16* src = pr.a + (p0 + 2 * q) * pr.lda + i0 + i;
      if (i + 16 <= mc && 2 * q + 32 <= kc) {
        detail::transpose_pairs_16x32_avx512(&src->bits, pr.lda, dst, pairs_pad);
        continue;
      }
      for (long ii = 0; ii < 16; ++ii)
        for (long qq = 0; qq < 16; ++qq) {
          const long row = i + ii, p = 2 * (q + qq);
          const bf16 zero{};
          const bf16* lo = row < mc && p < kc ? src + 2 * qq * pr.lda + ii : &zero;
          const bf16* hi = row < mc && p + 1 < kc ? src + (2 * qq + 1) * pr.lda + ii : &zero;
          dst[ii * pairs_pad + qq] = pair(lo, hi);
        }
    }
}

// AMX layout of op(B): depth [p0, p0+kc) x columns [j0, j0+nc) as NR-column panels of
// round_up(kc, 32) / 2 rows of pair words, padding zero.
void pack_b_amx(const Problem& pr, long p0, long kc, long j0, long nc, int nr, std::uint32_t* out) {
  const long pairs_pad = round_up(kc, 32) / 2;
  if (pr.tb == Trans::no) return pack_b_pairs(pr, p0, kc, j0, nc, nr, out, pairs_pad);
  // Stored B^T: source row j already holds column j's k pairs side by side, so each
  // 16-column x 16-pair block is a word transpose read straight from the source;
  // blocks reaching past nc or kc go element by element.
  const long nc_pad = round_up(nc, nr);
  for (long j = 0; j < nc_pad; j += 16)
    for (long q = 0; q < pairs_pad; q += 16) {
      std::uint32_t* dst = out + j / nr * nr * pairs_pad + q * nr + j % nr;
      const bf16* src = pr.b + (j0 + j) * pr.ldb + p0 + 2 * q;
      if (j + 16 <= nc && 2 * q + 32 <= kc) {
        detail::transpose_16x16_words_avx512(src, long(sizeof(bf16)) * pr.ldb, dst, nr);
        continue;
      }
      for (long jj = 0; jj < 16; ++jj)
        for (long qq = 0; qq < 16; ++qq) {
          const long col = j + jj, p = 2 * (q + qq);
          const bf16 zero{};
          const bf16* lo = col < nc && p < kc ? src + jj * pr.ldb + 2 * qq : &zero;
          const bf16* hi = col < nc && p + 1 < kc ? lo + 1 : &zero;
          dst[qq * nr + jj] = pair(lo, hi);
        }
    }
}

bool reads_a_in_place(const Problem& pr, const detail::MicroKernel& uk) {
  return uk.tile && pr.ta == Trans::no && pr.k % 2 == 0;
}

// Floats a packed depth-kc panel of `rows` occupies (pair words count as one float each).
long panel_floats(const detail::MicroKernel& uk, long rows, long kc) {
  if (uk.packing == detail::Packing::amx) return rows * (round_up(kc, 32) / 2);
  return rows * (uk.packing == detail::Packing::bf16_pairs ? (kc + 1) / 2 : kc);
}

// C[m0:m1, n0:n1] on the calling thread. Loop order jc (NC) -> ic (MC) -> pc (KC):
// op(B) for the whole depth is packed once per NC column block (it then lives in
// L2/L3), so the FP32 partial sums of one MC x NC block of C stay in L2 across the
// whole K loop and are rounded to BF16 as soon as they are complete. (Sweeping a
// whole-M FP32 workspace once per KC step, as a first version did, streamed 17 MB
// through DRAM per step at M = N = 2048 and halved the speed.)
// With sums32 (tile kernels only, all rows one MC block and all columns one NC block):
// the FP32 sums go there (row stride round_up(n1 - n0, NR) + 16) instead of C.
void gemm_block(const Problem& pr, const detail::MicroKernel& uk, long m0, long m1, long n0, long n1,
                float* sums32 = nullptr) {
  thread_local Scratch a_scratch, b_scratch, ws_scratch, row_scratch;
  if (uk.setup) uk.setup();
  const bool amx = uk.packing == detail::Packing::amx;
  // Whole K blocks are multiples of 32, so only the last one pads (to 32 for AMX, to a pair otherwise).
  const long k_pad = round_up(std::max(pr.k, 1l), amx ? 32 : 2);
  // Equal MC blocks (in whole micro-tiles): M = 256 as 192 + 64 left a short block
  // that reused each B panel a third as often.
  const long m_tiles = (m1 - m0 + uk.mr - 1) / uk.mr, blocks = (m_tiles * uk.mr + uk.mc - 1) / uk.mc;
  long mc_max = (m_tiles + blocks - 1) / blocks * uk.mr;
  // Deep K and at most three MC blocks of rows: all rows as one block instead, so B is
  // packed one K block at a time (below). Packed whole, k x NC (8 MiB at K = 4096) went
  // out to memory and came back once per MC block; the price, a rows x NC FP32 workspace
  // swept once per K block, measured smaller (NT 512,1024,4096: 0.93 -> 0.98 of oneDNN).
  if (uk.tile && pr.k >= 2048 && blocks <= 3) mc_max = m_tiles * uk.mr;
  // One MC block of rows (small M): B's K blocks are packed just before use, so each
  // stays in L2 for the micro-kernels instead of the whole packed K x NC panel (many MiB
  // at K = 4096) streaming out to memory and back.
  const bool b_just_in_time = m1 - m0 <= mc_max;
  // NC: as wide as L2 allows for the C block, and packed B (k x NC) at most ~16 MB.
  const long nc_max =
      b_just_in_time ? kNcMax : std::clamp(kPackedBFloats / k_pad / uk.nr * uk.nr, long(uk.nr), kNcMax);
  // The extra cache line keeps a tile's rows off one L1 set when widths are powers of two.
  const long ldws = round_up(std::min(nc_max, n1 - n0), uk.nr) + 16;
  void* a_pack = a_scratch.get(sizeof(float) * size_t(panel_floats(uk, mc_max, uk.kc)));
  const long b_depth = b_just_in_time ? std::min(k_pad, uk.kc) : k_pad;  // packed B: one K block or all
  float* b_pack = static_cast<float*>(b_scratch.get(sizeof(float) * size_t(panel_floats(uk, ldws, b_depth))));
  float* ws = sums32 ? sums32 : static_cast<float*>(ws_scratch.get(sizeof(float) * size_t(mc_max * ldws)));
  float* c_row = static_cast<float*>(row_scratch.get(sizeof(float) * size_t(ldws)));
  const bool pairs = uk.packing == detail::Packing::bf16_pairs;
  // Untransposed A with even K already holds its k pairs side by side in each row, so
  // a tile kernel reads it in place: no packing, which at large K and narrow NC blocks
  // cost as much as a third of the GEMM (A re-packed once per NC block).
  const bool a_in_place = reads_a_in_place(pr, uk);

  auto pack_b_block = [&](long pc, long jc, long nc, float* block) {
    const long kc = std::min(uk.kc, pr.k - pc);
    if (amx) pack_b_amx(pr, pc, kc, jc, nc, uk.nr, reinterpret_cast<std::uint32_t*>(block));
    else if (pairs) pack_b_pairs(pr, pc, kc, jc, nc, uk.nr, reinterpret_cast<std::uint32_t*>(block));
    else pack_b(pr, pc, kc, jc, nc, uk.nr, block);
  };
  for (long jc = n0; jc < n1; jc += nc_max) {
    const long nc = std::min(nc_max, n1 - jc), nc_pad = round_up(nc, uk.nr);
    if (!b_just_in_time && pairs && pr.tb == Trans::yes && uk.nr % 16 == 0)
      pack_bt_pairs_all(pr, uk.kc, jc, nc, uk.nr, reinterpret_cast<std::uint32_t*>(b_pack));
    else if (!b_just_in_time)
      for (long pc = 0; pc < pr.k; pc += uk.kc)
        pack_b_block(pc, jc, nc, b_pack + panel_floats(uk, nc_pad, pc));  // pc is even: whole pairs before it
    for (long ic = m0; ic < m1; ic += mc_max) {
      const long mc = std::min(mc_max, m1 - ic), mc_pad = round_up(mc, uk.mr);
      if (pr.k == 0) std::fill(ws, ws + mc_pad * ldws, 0.f);
      for (long pc = 0; pc < pr.k; pc += uk.kc) {
        const long kc = std::min(uk.kc, pr.k - pc);
        if (a_in_place) {
        } else if (amx) pack_a_amx(pr, ic, mc, pc, kc, uk.mr, static_cast<std::uint32_t*>(a_pack));
        else if (pairs) pack_a_pairs(pr, ic, mc, pc, kc, uk.mr, static_cast<std::uint32_t*>(a_pack));
        else pack_a(pr, ic, mc, pc, kc, uk.mr, static_cast<float*>(a_pack));
        const float* block = b_just_in_time ? b_pack : b_pack + panel_floats(uk, nc_pad, pc);
        if (b_just_in_time) pack_b_block(pc, jc, nc, b_pack);
        const bool last = pc + kc >= pr.k;
        for (long jr = 0; jr < nc_pad; jr += uk.nr) {
          if (uk.tile) {  // the whole column of tiles in one call
            detail::TileArgs t;
            t.kc = kc;
            t.a = a_in_place ? static_cast<const void*>(pr.a + ic * pr.lda + pc) : a_pack;
            t.a_row_bytes = a_in_place ? long(sizeof(bf16)) * pr.lda : 0;
            t.a_tile_bytes = a_in_place ? uk.mr * t.a_row_bytes : long(sizeof(float)) * panel_floats(uk, uk.mr, kc);
            t.b = block + panel_floats(uk, jr, kc);
            t.ws = ws + jr, t.ldws = ldws, t.partial = pc > 0;
            if (last && !sums32) t.c = &(pr.c + ic * pr.ldc + jc + jr)->bits, t.ldc = pr.ldc, t.accumulate_c = pr.accumulate;
            t.rows = int(mc), t.cols = int(std::min<long>(uk.nr, nc - jr));
            uk.tile(t);
            continue;
          }
          for (long ir = 0; ir < mc_pad; ir += uk.mr) {
            const float* a_panel = static_cast<const float*>(a_pack) + panel_floats(uk, ir, kc);
            if (last && uk.final)
              uk.final(kc, a_panel, block + panel_floats(uk, jr, kc), ws + ir * ldws + jr, ldws, pc > 0,
                       &(pr.c + (ic + ir) * pr.ldc + jc + jr)->bits, pr.ldc, pr.accumulate,
                       int(std::min<long>(uk.mr, mc - ir)), int(std::min<long>(uk.nr, nc - jr)));
            else
              uk.fn(kc, a_panel, block + panel_floats(uk, jr, kc), ws + ir * ldws + jr, ldws, pc > 0);
          }
        }
      }
      if (((uk.final || uk.tile) && pr.k > 0) || sums32) continue;  // C already written, or not ours
      for (long i = ic; i < ic + mc; ++i) {
        float* row = ws + (i - ic) * ldws;
        bf16* dst = pr.c + i * pr.ldc + jc;
        if (pr.accumulate) {
          to_float(dst, c_row, nc);
          for (long j = 0; j < nc; ++j) row[j] += c_row[j];
        }
        to_bf16(row, dst, nc);
      }
    }
  }
}

// K split (see gemm_bf16): tasks over K ranges of whole KC blocks, partial sums in FP32.
void gemm_split_k(const Problem& pr, const detail::MicroKernel& uk, ThreadPool& pool, int threads, long m, long n) {
  const long blocks = (pr.k + uk.kc - 1) / uk.kc;
  const long tasks = threads * std::clamp(blocks / (4l * threads), 1l, 4l);  // slices of >= 4 KC blocks
  const long ld = round_up(n, uk.nr) + 16;
  thread_local Scratch sums_scratch;
  float* sums = static_cast<float*>(sums_scratch.get(sizeof(float) * size_t(tasks * m * ld)));
  pool.run(int(tasks), [&](int t) {
    const long p0 = t * blocks / tasks * uk.kc, p1 = std::min(pr.k, (t + 1) * blocks / tasks * uk.kc);
    Problem sub = pr;
    sub.k = p1 - p0;
    sub.a = pr.ta == Trans::no ? pr.a + p0 : pr.a + p0 * pr.lda;
    sub.b = pr.tb == Trans::no ? pr.b + p0 * pr.ldb : pr.b + p0;
    gemm_block(sub, uk, 0, m, 0, n, sums + t * m * ld);
  }, threads);
  thread_local std::vector<float> c_row;
  c_row.resize(size_t(n));
  for (long i = 0; i < m; ++i) {
    float* row = sums + i * ld;
    for (long t = 1; t < tasks; ++t) {
      const float* other = sums + (t * m + i) * ld;
      for (long j = 0; j < n; ++j) row[j] += other[j];
    }
    bf16* dst = pr.c + i * pr.ldc;
    if (pr.accumulate) {
      to_float(dst, c_row.data(), n);
      for (long j = 0; j < n; ++j) row[j] += c_row[size_t(j)];
    }
    to_bf16(row, dst, n);
  }
}

detail::MicroKernel pick_kernel(Isa isa) {
  if (isa == Isa::amx_bf16 && cpu_has(Isa::amx_bf16)) return detail::amx_bf16_micro_kernel();
  if (isa == Isa::amx_bf16) isa = Isa::avx512_bf16;
  if (isa == Isa::avx512_bf16 && cpu_has(Isa::avx512_bf16)) return detail::avx512_bf16_micro_kernel();
  if ((isa == Isa::avx512 || isa == Isa::avx512_bf16) && cpu_has(Isa::avx512)) return detail::avx512_micro_kernel();
  if (isa != Isa::portable && cpu_has(Isa::avx2)) return detail::avx2_micro_kernel();
  return detail::portable_micro_kernel();
}

}  // namespace

void gemm_bf16(Trans trans_a, Trans trans_b, long m, long n, long k, const bf16* a, long lda,
               const bf16* b, long ldb, bf16* c, long ldc, const GemmOptions& options) {
  if (m <= 0 || n <= 0) return;
  const Problem pr{trans_a, trans_b, std::max(k, 0l), a, lda, b, ldb, c, ldc, options.accumulate};
  const detail::MicroKernel uk = pick_kernel(options.isa);
  ThreadPool& pool = options.pool ? *options.pool : ThreadPool::shared();
  int threads = options.threads > 0 ? std::min(options.threads, pool.size()) : pool.size();
  // Few rows, deep K and too few columns for every thread to get good column tasks
  // (narrow tasks pack B in short, scattered pieces): split K instead, each task summing
  // its K range into FP32, added up and rounded at the end. 32,576,6144 on 2 threads ran
  // no faster than on 1 as column tasks.
  if (threads > 1 && uk.tile && m <= uk.mc && n <= kNcMax && k >= 2 * n && k >= 4 * uk.kc * threads &&
      2.0 * double(m) * double(n) * double(k) >= 2e6)
    return gemm_split_k(pr, uk, pool, threads, m, n);
  // Split C where the threads repeat less packing: every thread packs all of op(B) it
  // touches, and its rows of op(A) once per NC block (unless read in place). Splitting
  // rows of a wide, short C (M = 256, N = 4096) would pack the whole of B twice.
  const double t_split = std::max(1, std::min(threads, pool.size()));
  const double nc_blocks = std::ceil(double(n) / double(kNcMax)), nc_blocks_split = std::ceil(double(n) / t_split / double(kNcMax));
  const double a_packed = reads_a_in_place(pr, uk) ? 0.0 : 1.0;
  const double pack_rows = a_packed * double(m) / t_split * double(k) * nc_blocks + double(k) * double(n);
  const double pack_cols = a_packed * double(m) * double(k) * nc_blocks_split + double(k) * double(n) / t_split;
  const bool split_rows = n < 2 * uk.nr || (m >= 2 * uk.mr && pack_rows <= pack_cols);
  const long unit = split_rows ? uk.mr : uk.nr, extent = split_rows ? m : n;
  const long tiles = (extent + unit - 1) / unit;
  threads = int(std::min<long>(threads, tiles));
  // Tiny problems are not worth waking a thread.
  if (2.0 * double(m) * double(n) * double(k) < 2e6) threads = 1;
  // Up to eight tasks per thread, taken one at a time: a thread that starts late (its CPU
  // busy with another process, or halted and slow to wake) leaves its share to the others
  // instead of holding up the call. Each task repeats the packing of the operand all tasks
  // share (op(B) across row tasks, op(A) across column tasks unless read in place), so a
  // task keeps at least 64 row tiles (384 rows at 6x64: packing all of B costs ~2.5% of
  // such a task) or, with op(A) packed, 4 column tiles (256 columns).
  long tasks = threads;
  if (threads > 1) {
    const long task_tiles = split_rows ? std::max(1l, 384l / uk.mr) : a_packed > 0 ? std::max(1l, 256l / uk.nr) : 1l;
    // A whole number of tasks per thread, and tasks within a tile of each other in size:
    // 22 column tiles as 5 tasks of up to 5 left one thread 3 of them (1.4x on 2 threads).
    tasks = threads * std::clamp(tiles / task_tiles / threads, 1l, 8l);
  }
  pool.run(int(tasks), [&](int t) {
    const long lo = t * tiles / tasks * unit, hi = std::min(extent, (t + 1) * tiles / tasks * unit);
    if (lo >= hi) return;
    if (split_rows) gemm_block(pr, uk, lo, hi, 0, n);
    else gemm_block(pr, uk, 0, m, lo, hi);
  }, threads);
}

}  // namespace tp::kernels
