// Packing for the GEMM driver (gemm_pack.h): source rows read in order where the
// layout allows, AVX-512 interleaves and transposes doing the bulk of the work.
#include "kernels/gemm_pack.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/gemm_micro.h"

namespace trainplan::kernels::detail {
namespace {

std::uint32_t pair(const bf16* lo, const bf16* hi) { return std::uint32_t(lo->bits) | std::uint32_t(hi->bits) << 16; }

// Source rows [first, first+count), `depth` elements each from column p0, widened
// into panels of `width` rows laid out depth-major, zero-padded: the packing of
// op(A) or op(B) wherever the operand's rows of the product are the stored rows.
void pack_rows_as_panels(const bf16* src, long ld, long first, long count, long p0, long depth, int width, float* out) {
  for (long r0 = 0; r0 < count; r0 += width, out += width * depth) {
    const int rows = int(std::min<long>(width, count - r0));
    // Eight rows at a time as a vector transpose: one value per scalar load and strided
    // store took a quarter of a 512 x 1024 x 30522 NT GEMM on the AVX2 path.
    int i0 = 0;
    if (cpu_has(Isa::avx2) && width == 4 && rows == 4) {  // op(A)'s panels on the AVX2 path
      four_rows_to_float_panel_avx2(&(src + (first + r0) * ld + p0)->bits, ld, depth, out);
      continue;
    }
    if (cpu_has(Isa::avx2))
      for (; i0 + 8 <= rows; i0 += 8)
        rows_to_float_columns_avx2(&(src + (first + r0 + i0) * ld + p0)->bits, ld, depth, out + i0, width);
    for (int i = i0; i < rows; ++i) {
      const bf16* row = src + (first + r0 + i) * ld + p0;
      for (long p = 0; p < depth; ++p) out[p * width + i] = to_float(row[p]);
    }
    for (int i = rows; i < width; ++i)
      for (long p = 0; p < depth; ++p) out[p * width + i] = 0.f;
  }
}

}  // namespace

// Packs rows [i0, i0+mc) x depth [p0, p0+kc) of op(A) into MR-row panels, zero-padded.
void pack_a(const Problem& pr, long i0, long mc, long p0, long kc, int mr, float* out) {
  if (pr.ta == Trans::yes && mr == 4 && cpu_has(Isa::avx2)) {
    // Stored A^T on the AVX2 path: eight k at a time, two panels at a time, so each panel
    // takes 128 contiguous bytes per group; a row at a time dealt 16-byte pieces to panels
    // exactly 4 KiB apart at KC 256, all on one 4 KiB offset.
    const long panel = 4 * kc, full = mc / 8 * 8;
    for (long p = 0; p < kc; p += 8) {
      const bf16* src = pr.a + (p0 + p) * pr.lda + i0;
      const long rows = std::min(8l, kc - p);
      for (long r = 8; r < 8 + rows && p + r < kc; ++r)
        for (long i = 0; i < mc; i += 32) __builtin_prefetch(src + r * pr.lda + i);
      rows_to_float_4_row_panels_avx2(&src->bits, pr.lda, rows, full, out + p * 4, panel);
      for (long i = full; i < round_up(mc, 4); ++i)
        for (long r = 0; r < rows; ++r)
          out[i / 4 * panel + (p + r) * 4 + i % 4] = i < mc ? to_float(src[r * pr.lda + i]) : 0.f;
    }
    return;
  }
  if (pr.ta == Trans::yes) {
    // Stored A^T: each k is one contiguous source row across the block; widen it once
    // (vectorized) and deal MR-wide pieces to the panels.
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(round_up(mc, mr)));
    const long panel = mr * kc;
    // As in pack_a_pairs: each source row is a short piece a whole row length from the last,
    // which the prefetchers do not follow, so pieces are fetched a few rows ahead.
    constexpr long kAhead = 8;
    for (long p = 0; p < kc; ++p) {
      const bf16* src = pr.a + (p0 + p) * pr.lda + i0;
      if (p + kAhead < kc)
        for (long i = 0; i < mc; i += 32) __builtin_prefetch(src + kAhead * pr.lda + i);
      to_float(src, row.data(), mc);
      std::fill(row.begin() + mc, row.end(), 0.f);
      // The AVX2 and AVX-512F tile heights as fixed-size copies, not a library call per piece.
      if (mr == 4)
        for (long ir = 0; ir < mc; ir += 4) std::memcpy(out + ir / 4 * panel + p * 4, row.data() + ir, 16);
      else if (mr == 6)
        for (long ir = 0; ir < mc; ir += 6) std::memcpy(out + ir / 6 * panel + p * 6, row.data() + ir, 24);
      else
        for (long ir = 0; ir < mc; ir += mr) std::memcpy(out + ir / mr * panel + p * mr, row.data() + ir, sizeof(float) * size_t(mr));
    }
    return;
  }
  pack_rows_as_panels(pr.a, pr.lda, i0, mc, p0, kc, mr, out);
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
    // Eight rows at a time, panel by panel, the next eight prefetched as they go: a call per
    // 24-column piece (each asking which ISA runs) took a tenth of 64,512,1024 NN on the AVX2
    // path, and a row at a time across all panels stored to pieces 24 KiB apart at KC 256,
    // all on one 4 KiB offset.
    constexpr long kRows = 8;
    if (nr % 8 == 0 && cpu_has(Isa::avx2)) {
      for (long p = 0; p < kc; p += kRows) {
        const bf16* src = pr.b + (p0 + p) * pr.ldb + j0;
        const long rows = std::min(kRows, kc - p), rows_ahead = std::clamp(kc - p - kRows, 0l, kRows);
        rows_to_float_panels_avx2(&src->bits, pr.ldb, rows, full / nr, nr, out + p * nr, nr * kc, rows_ahead);
        if (full < nc)
          for (long r = 0; r < rows; ++r) {
            float* dst = out + full * kc + (p + r) * nr;
            for (long j = full; j < nc; ++j) dst[j - full] = to_float(src[r * pr.ldb + j]);
            for (long j = nc - full; j < nr; ++j) dst[j] = 0.f;
          }
      }
      return;
    }
    // As in pack_b_pairs: each source row is a fresh stream a row length from the last, which
    // the prefetchers pick up late, so the rows are fetched a few ahead.
    constexpr long kAhead = 4;
    for (long p = 0; p < kc; ++p) {
      const bf16* src = pr.b + (p0 + p) * pr.ldb + j0;
      if (p + kAhead < kc)
        for (long j = 0; j < nc; j += 32) __builtin_prefetch(src + kAhead * pr.ldb + j);
      for (long jr = 0; jr < full; jr += nr) to_float(src + jr, out + jr * kc + p * nr, nr);
      if (full < nc) {
        float* dst = out + full * kc + p * nr;
        for (long j = full; j < nc; ++j) dst[j - full] = to_float(src[j]);
        for (long j = nc - full; j < nr; ++j) dst[j] = 0.f;
      }
    }
    return;
  }
  pack_rows_as_panels(pr.b, pr.ldb, j0, nc, p0, kc, nr, out);  // stored B^T: its rows are op(B)'s columns
}

// The same as BF16 pair words: word (p2, j) holds op(B)[2 p2][j] | op(B)[2 p2 + 1][j] << 16,
// untransposed B again walked two source rows at a time across all panels.
void pack_b_pairs(const Problem& pr, long p0, long kc, long j0, long nc, int nr, std::uint32_t* out, long pairs_pad) {
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
    // Each source row is a fresh stream of a few KiB (nc BF16) a row length from the
    // last, which the prefetchers pick up late: fetch the rows a few pairs ahead.
    constexpr long kAhead = 4;
    for (long q = 0; q < pairs; ++q) {
      const bf16* lo = pr.b + (p0 + 2 * q) * pr.ldb + j0;
      const bf16* hi = 2 * q + 1 < kc ? lo + pr.ldb : nullptr;
      if (2 * (q + kAhead) + 1 < kc)
        for (long j = 0; j < nc; j += 32) {
          __builtin_prefetch(lo + 2 * kAhead * pr.ldb + j);
          __builtin_prefetch(lo + (2 * kAhead + 1) * pr.ldb + j);
        }
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
      for (long q = 0; q < full_pairs; q += 16) {
        const bf16* src = pr.b + (j0 + jr + j) * pr.ldb + p0 + 2 * q;
        for (long r = 0; r < 16; ++r) __builtin_prefetch(src + r * pr.ldb + 128);  // 4 blocks ahead, as below
        detail::transpose_16x16_words_avx512(src, long(sizeof(bf16)) * pr.ldb, out + q * nr + j, nr);
      }
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

}  // namespace trainplan::kernels::detail
