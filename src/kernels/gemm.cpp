// GEMM driver: BLIS-style blocking (NC columns, KC depth, MC rows) over packed panels
// (gemm_pack.h: FP32 for the FMA kernels, BF16 pairs for VDPBF16PS, AMX tiles; a packed
// op(A) is packed once per call, gemm_shared_pack.h). Partial sums over K live in an FP32
// workspace; BF16 rounding happens once, at the end. Threads take tasks of disjoint row or
// column ranges (several per thread).
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
#include "kernels/gemm_pack.h"
#include "kernels/gemm_shared_pack.h"
#include "kernels/thread_pool.h"

namespace trainplan::kernels {
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
constexpr long kJustInTimeNc = 512;  // NC where B is packed one K block at a time (just_in_time_nc)
constexpr long kPackedBFloats = 4l << 20;  // packed k x NC panel of B: at most 16 MiB
constexpr long kBInKernelMaxElements = 1l << 20;  // B packed by the tile kernel: up to 2 MiB of it
constexpr long kSharedMaxFloats = 4l << 20;  // op(A) packed once for the whole call: at most 16 MiB
constexpr long kAInPlaceTwoTilesBytes = 512l << 10;  // op(A) read in place: two column tiles per task from here
constexpr long kAInPlaceFourTilesRows = 1024;        // ... and four from this many rows
// Deep K (from kDeepK): all of up to three MC blocks of rows as one, B packed just in time
// in blocks of at most kAllRowsNc columns, kAllRowsNcFp32 for FP32 panels (gemm_block). From
// kLongKcDepth over at least kLongKcRows rows of op(A) read in place: K blocks of kLongKc
// (gemm_bf16).
constexpr long kDeepK = 2048, kAllRowsNc = 256, kAllRowsNcFp32 = 512;
constexpr long kLongKcDepth = 1024, kLongKcRows = 256, kLongKc = 2048;

using detail::pack_bt_pairs_all;
using detail::panel_floats;
using detail::Problem;
using detail::round_up;
using detail::SharedA;

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

// NC where B is packed one K block at a time (gemm_block): blocks of about 512 columns, as
// equal as whole tiles allow, and up to 640 as one block (576 and 640 as 512 + the rest left
// a thin block: 32,576,6144 NN 0.95x). The K block's packed B (KC x NC BF16, 1 MiB at 1024
// columns) then leaves room in the 1 MiB L2 for the A rows and FP32 sums the tiles re-read.
long just_in_time_nc(long n, long nr) {
  const long blocks = std::max(1l, (n - 128 + kJustInTimeNc - 1) / kJustInTimeNc);
  return round_up((n + blocks - 1) / blocks, nr);
}

bool reads_a_in_place(const Problem& pr, const detail::MicroKernel& uk) {
  return uk.tile && pr.ta == Trans::no && pr.k % 2 == 0;
}

// C[m0:m1, n0:n1] on the calling thread. Loop order jc (NC) -> ic (MC) -> pc (KC):
// op(B) for the whole depth is packed once per NC column block (it then lives in
// L2/L3), so the FP32 partial sums of one MC x NC block of C stay in L2 across the
// whole K loop and are rounded to BF16 as soon as they are complete. (Sweeping a
// whole-M FP32 workspace once per KC step, as a first version did, streamed 17 MB
// through DRAM per step at M = N = 2048 and halved the speed.)
// With shared_a, op(A) is packed once for the whole call (gemm_shared_pack.h), not per
// block here.
// col_shift: C's cache-line-aligned tile boundaries are the columns j with (j + col_shift) a
// multiple of NR (c_col_shift); a range starting between them opens with a narrow block up
// to the first one, so no tile's rows straddle lines that another tile writes.
void gemm_block(const Problem& pr, const detail::MicroKernel& uk, long m0, long m1, long n0, long n1,
                const SharedA* shared_a, long col_shift) {
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
  // The same for FP32 panels (AVX2), whose whole packed B is twice as large: 1 thread
  // against OpenBLAS sgemm, medians of 4: 512,1024,K NN and NT 0.92-0.94x -> 0.98-1.01x at
  // K 3072-4096, 512,1024,30522 NT 0.82x -> 1.00x.
  if (pr.k >= kDeepK && blocks <= 3) mc_max = m_tiles * uk.mr;
  // One MC block of rows (small M): B's K blocks are packed just before use, so each
  // stays in L2 for the micro-kernels instead of the whole packed K x NC panel (many MiB
  // at K = 4096) streaming out to memory and back.
  const bool b_just_in_time = m1 - m0 <= mc_max;
  // ... and untransposed into the BF16-pair tile kernel, by the kernel itself: the first
  // tile of each column of tiles interleaves its panel from B's rows as it multiplies.
  // Packed beforehand, the panels' passes through L2 (source in, words out and back) took
  // 20-25% of 64,1024,1024 NN (1.05-1.10x so, 1 thread). Only where B is small enough to
  // come from cache: from memory, 128 bytes of a row per panel lost to whole rows
  // streamed (0.93-0.96x at 3.5 and 6.5 MiB with caches flushed between calls).
  const bool b_in_kernel = b_just_in_time && uk.tile && uk.packing == detail::Packing::bf16_pairs &&
                           pr.tb == Trans::no && uk.nr == 64 && pr.k * pr.n <= kBInKernelMaxElements;
  // NC: as wide as L2 allows for the C block, and packed B (k x NC) at most ~16 MB; B packed
  // a K block at a time, about 512 columns (1 thread: 1.01-1.10x on 17 of 20 such shapes,
  // e.g. 32,16384,256 TN 1.10x, 32,5120,640 NN 1.08x, 80,1728,1024 TN 1.06x; the rest
  // 0.99-1.01x).
  // Untransposed A with even K already holds its k pairs side by side in each row, so
  // a tile kernel reads it in place: no packing, which at large K and narrow NC blocks
  // cost as much as a third of the GEMM (A re-packed once per NC block).
  const bool a_in_place = reads_a_in_place(pr, uk);
  // B packed whole for up to three MC blocks of rows whose A is not packed per NC block:
  // about 512 columns as well. At 1024, the FP32 sums of an MC block (724 KiB at 174 rows)
  // left too little of L2 to the A block and B panels the tiles re-read; reading A once
  // more per call costs less (1 thread: 512,1024,1024 NN 1.02x). With more row blocks,
  // all of A again lost: 4096,1024,512 TN 0.98x.
  const bool narrow_whole_b = uk.tile && blocks <= 3 && (a_in_place || shared_a);
  const long nc_packed = std::clamp(kPackedBFloats / k_pad / uk.nr * uk.nr, long(uk.nr), kNcMax);
  // More rows than an MC block (all rows of a deep K, above): at most kAllRowsNc columns, so
  // their FP32 sums stay in L2 across the K blocks (516 x 528 floats, 1.1 MiB at 512 columns,
  // went out to L3 and back once per K block; 1 thread, NT 512,1024,3072-30522 ~1% faster).
  // Packed FP32, op(A) is converted again for each NC block unless shared, and that costs
  // more: 512 columns (512,1024,30522 NT 1 thread: 256 columns 125 GFLOP/s, 512 132).
  const long all_rows_nc = uk.packing == detail::Packing::fp32 ? kAllRowsNcFp32 : kAllRowsNc;
  const long nc_max = b_just_in_time ? (m1 - m0 > uk.mc ? std::min(round_up(n1 - n0, uk.nr), all_rows_nc)
                                                        : just_in_time_nc(n1 - n0, uk.nr))
                      : narrow_whole_b ? std::min(nc_packed, just_in_time_nc(n1 - n0, uk.nr))
                                       : nc_packed;
  // The extra cache line keeps a tile's rows off one L1 set when widths are powers of two.
  const long ldws = round_up(std::min(nc_max, n1 - n0), uk.nr) + 16;
  void* a_pack = a_in_place || shared_a ? nullptr : a_scratch.get(sizeof(float) * size_t(panel_floats(uk, mc_max, uk.kc)));
  const long b_depth = b_just_in_time ? std::min(k_pad, uk.kc) : k_pad;  // packed B: one K block or all
  float* b_pack = static_cast<float*>(b_scratch.get(sizeof(float) * size_t(panel_floats(uk, ldws, b_depth))));
  float* ws = static_cast<float*>(ws_scratch.get(sizeof(float) * size_t(mc_max * ldws)));
  float* c_row = static_cast<float*>(row_scratch.get(sizeof(float) * size_t(ldws)));
  const bool pairs = uk.packing == detail::Packing::bf16_pairs;

  auto pack_b_block = [&](long pc, long jc, long nc, float* block) {
    detail::pack_b_block(pr, uk, pc, std::min(uk.kc, pr.k - pc), jc, nc, block);
  };
  // Only where op(A) is not packed per NC block, which the narrow block would repeat.
  const long lead = a_in_place || shared_a ? (uk.nr - (n0 + col_shift) % uk.nr) % uk.nr : 0;
  for (long jc = n0, nc = 0; jc < n1; jc += nc) {
    nc = std::min(jc == n0 && lead > 0 ? lead : nc_max, n1 - jc);
    const long nc_pad = round_up(nc, uk.nr);
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
        const void* a_block = shared_a ? shared_a->block(ic, mc, pc, kc) : a_pack;
        if (!a_in_place && !shared_a) detail::pack_a_block(pr, uk, ic, mc, pc, kc, a_pack);
        const float* block = b_just_in_time ? b_pack : b_pack + panel_floats(uk, nc_pad, pc);
        if (b_just_in_time && !b_in_kernel) pack_b_block(pc, jc, nc, b_pack);
        const bool last = pc + kc >= pr.k;
        for (long jr = 0; jr < nc_pad; jr += uk.nr) {
          const bool panel_in_kernel = b_in_kernel && kc % 2 == 0 && nc - jr >= uk.nr;
          if (b_in_kernel && !panel_in_kernel)
            pack_b_block(pc, jc + jr, std::min<long>(uk.nr, nc - jr), b_pack + panel_floats(uk, jr, kc));
          if (uk.tile) {  // the whole column of tiles in one call
            detail::TileArgs t;
            if (panel_in_kernel) t.b_src = &(pr.b + pc * pr.ldb + jc + jr)->bits, t.b_src_ld = pr.ldb;
            t.kc = kc;
            t.a = a_in_place ? static_cast<const void*>(pr.a + ic * pr.lda + pc) : a_block;
            t.a_row_bytes = a_in_place ? long(sizeof(bf16)) * pr.lda : 0;
            t.a_tile_bytes = a_in_place ? uk.mr * t.a_row_bytes : long(sizeof(float)) * panel_floats(uk, uk.mr, kc);
            t.b = block + panel_floats(uk, jr, kc);
            t.ws = ws + jr, t.ldws = ldws, t.partial = pc > 0;
            if (last) t.c = &(pr.c + ic * pr.ldc + jc + jr)->bits, t.ldc = pr.ldc, t.accumulate_c = pr.accumulate;
            t.rows = int(mc), t.cols = int(std::min<long>(uk.nr, nc - jr));
            uk.tile(t);
            continue;
          }
          for (long ir = 0; ir < mc_pad; ir += uk.mr) {
            const float* a_panel = static_cast<const float*>(a_block) + panel_floats(uk, ir, kc);
            if (last && uk.final)
              uk.final(kc, a_panel, block + panel_floats(uk, jr, kc), ws + ir * ldws + jr, ldws, pc > 0,
                       &(pr.c + (ic + ir) * pr.ldc + jc + jr)->bits, pr.ldc, pr.accumulate,
                       int(std::min<long>(uk.mr, mc - ir)), int(std::min<long>(uk.nr, nc - jr)));
            else
              uk.fn(kc, a_panel, block + panel_floats(uk, jr, kc), ws + ir * ldws + jr, ldws, pc > 0);
          }
        }
      }
      if ((uk.final || uk.tile) && pr.k > 0) continue;  // C already written
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

// Misaligned C (a 16-byte aligned heap buffer, say) cut into tiles from its first column
// splits each tile's row of C over three cache lines, two of them shared with the tiles
// beside it, written long apart: each line is fetched for ownership twice. 1 thread, K = 64
// TN, C 32 bytes past a line: 2048,1376,64 410 GFLOP/s, 474 aligned; 1600,800,64 384 and
// 445. So for tile kernels whose rows of C are whole lines (NR BF16 a multiple of 64 bytes),
// with every row of C in the same phase, the tiles are laid from C's first line boundary.
// Returns how many columns before column 0 such a tile grid starts (0: C is on a line).
long c_col_shift(const Problem& pr, const detail::MicroKernel& uk) {
  constexpr long kLine = 64;
  const long row_bytes = long(sizeof(bf16)) * uk.nr;
  if (!uk.tile || row_bytes % kLine != 0 || (long(sizeof(bf16)) * pr.ldc) % kLine != 0) return 0;
  const long misaligned_bytes = long(reinterpret_cast<std::uintptr_t>(pr.c) % kLine);
  const long lead = (kLine - misaligned_bytes) % kLine / long(sizeof(bf16));
  return (uk.nr - lead) % uk.nr;
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
  const Problem pr{trans_a, trans_b, std::max(k, 0l), a, lda, b, ldb, c, ldc, options.accumulate, n};
  detail::MicroKernel uk = pick_kernel(options.isa);
  // K from 1024 over many rows (BERT's 512-row forward and data gradients, 1024^3): K blocks
  // of up to 2048, so each tile's set-up, finish and FP32 partial-sum round trip come a
  // quarter as often, and up to K = 2048 not at all. The B panel (256 KiB) streams from L2
  // as the 64 KiB one already did. Blocks of 1024 against 512, interleaved against oneDNN,
  // medians: 1 thread NT 512,1024,K 1-3% faster at K 3072-30522 (with kAllRowsNc),
  // 512,1024,1024 NN and NT 3-4%, 512,3072,1024 NN 4%; 2 threads 512,1024,1024 NN and
  // 512,4096,1024 NT 2-8%. Then 2048 against 1024, medians of 9-15 cold calls, two rounds:
  // 1 thread 2048^3 NN 3-5% faster, 2048,1024,4096 NT 1-3%, 512,1024,4096 NN and NT 1-2%,
  // 512,1024,30522 NT 1-2%; 2 threads 2048^3 NN 3-4%, 512,1024,4096 NT 3-4%, NN 2%. 4096
  // against 2048 was mixed (-2% to +4%). Not for few rows: the tile
  // kernel's own packing of B lost ~15% at 32,576,6144 and 32,1024,4096 NN. Only with op(A)
  // read in place: packed, its blocks would double too, and that is not measured.
  if (uk.packing == detail::Packing::bf16_pairs && reads_a_in_place(pr, uk) && pr.k >= kLongKcDepth &&
      m >= kLongKcRows)
    uk.kc = kLongKc;
  ThreadPool& pool = options.pool ? *options.pool : ThreadPool::shared();
  int threads = options.threads > 0 ? std::min(options.threads, pool.size()) : pool.size();
  // Split C where the threads repeat less packing: every thread packs all of op(B) it
  // touches, and its rows of op(A) once per NC block (unless read in place). Splitting
  // rows of a wide, short C (M = 256, N = 4096) would pack the whole of B twice.
  const double t_split = std::max(1, std::min(threads, pool.size()));
  const double nc_blocks = std::ceil(double(n) / double(kNcMax)), nc_blocks_split = std::ceil(double(n) / t_split / double(kNcMax));
  const double a_packed = reads_a_in_place(pr, uk) ? 0.0 : 1.0;
  // FP32 panels: column tasks pack op(A) once between them where it can be shared (below),
  // so each thread's part is a share of it. (2 threads, AVX2, against OpenBLAS: 1024,1024,512
  // TN 0.88x -> 0.96x, 4096,1024,512 TN 0.92x -> 0.98x as column tasks. Not for BF16 pairs:
  // there column tasks lost on 1024,1024,512 TN, 0.91-0.97x of row tasks.)
  const bool a_shared_by_columns = a_packed > 0 && uk.packing == detail::Packing::fp32 &&
                                   detail::shared_a_floats(uk, m, pr.k) <= kSharedMaxFloats;
  const double a_per_column_task = a_shared_by_columns ? 1.0 / t_split : nc_blocks_split;
  const double pack_rows = a_packed * double(m) / t_split * double(k) * nc_blocks + double(k) * double(n);
  const double pack_cols = a_packed * double(m) * double(k) * a_per_column_task + double(k) * double(n) / t_split;
  const bool split_rows = n < 2 * uk.nr || (m >= 2 * uk.mr && pack_rows <= pack_cols);
  // Column tasks split at C's aligned tile boundaries: as if col_shift columns came first.
  const long col_shift = c_col_shift(pr, uk), shift = split_rows ? 0 : col_shift;
  const long unit = split_rows ? uk.mr : uk.nr, extent = split_rows ? m : n;
  const long tiles = (extent + shift + unit - 1) / unit;
  threads = int(std::min<long>(threads, tiles));
  // Tiny problems are not worth waking a thread.
  if (2.0 * double(m) * double(n) * double(k) < 2e6) threads = 1;
  // Where op(A) is packed, it is packed once for the whole call, a piece at a time by the
  // first task to need it: column tasks do not repeat it, so they can be as small as one
  // tile, and no NC block of columns re-packs it (1024 x 30522 x 512 TN packed all of A 30
  // times). Not for several row tasks: they never repeat each other's A, and sharing
  // measured 0.93-0.96x (1024 x 1024 x 512 TN, 2 threads). Nor op(B) across row tasks:
  // 0.94-1.01x, B's pieces packed on the other core came from its cache.
  const bool share_a = a_packed > 0 && !(split_rows && threads > 1) &&
                       detail::shared_a_floats(uk, m, pr.k) <= kSharedMaxFloats;
  // Up to eight tasks per thread, taken one at a time: a thread that starts late (its CPU
  // busy with another process, or halted and slow to wake) leaves its share to the others
  // instead of holding up the call. Each task repeats the packing of the operand all tasks
  // share unless shared (op(B) across row tasks, op(A) across column tasks unless read in
  // place), so a task keeps at least 64 row tiles (384 rows at 6x64: packing all of B costs
  // ~2.5% of such a task) or, with op(A) packed per task, 4 column tiles (256 columns).
  long tasks = threads;
  if (threads > 1) {
    // Column tasks reading op(A) in place: two tiles each where op(A) outgrows half of L2, so
    // each K block of it comes in from L3 for two columns of tiles rather than one (2
    // threads: 512 x 1024 NN at K 1024 and 4096 1.02-1.06x, NT 0.99-1.02x; for small M, where
    // A stays in L2, fewer tasks only lost balance: 64,512,1024 NN 0.96x). From 1024 rows,
    // four (2 threads, medians: 2048^3 NN 1.03-1.07x, 4096,4096,1024 NN 1.00-1.06x, 1024^3
    // NN and 2048,1024,4096 NT 1.00-1.01x; beside a busy loop 0.96-1.07x). Eight gained a
    // little more when idle (2048^3 1.04-1.07x) but lost beside a busy loop (0.88-0.98x):
    // two or four tasks left nothing to balance a slow worker.
    const bool a_outgrows_l2 = double(m) * double(pr.k) * sizeof(bf16) >= double(kAInPlaceTwoTilesBytes);
    // Few rows, so B is packed one K block at a time by the task, from untransposed rows too
    // many for the tile kernel to pack: a task of one tile packed 128-byte pieces of each
    // row, waiting on memory once per K block. Three tiles each (192 columns; 2 threads,
    // medians: 128,1376,1024 TN 1.17-1.22x, 80,1728,1024 TN 1.10-1.11x, 64,1792,1024 TN
    // 1.01-1.12x, 32,5120,640 NN 1.01-1.06x; four lost 0.96x on 32,5120,640 NN). One K
    // block (K <= 512) gained nothing: 96,6144,256 TN 0.97-0.98x.
    const bool b_in_short_pieces = uk.tile && m <= uk.mc && pr.k > uk.kc && pr.tb == Trans::no &&
                                   pr.k * n > kBInKernelMaxElements;
    // Column tasks over op(A) packed once as FP32 (twice the bytes of BF16 pairs): 192
    // columns each, so each of its blocks, read from L3, serves 8 AVX2 column panels, not one
    // (2 threads against OpenBLAS, medians of 4: 512,3072,1024 NN 0.96x -> 1.00x,
    // 512,1024,4096 NN 0.95x -> 0.97x).
    const bool fp32_shared_a = share_a && uk.packing == detail::Packing::fp32;
    const long task_tiles = split_rows ? std::max(1l, 384l / uk.mr)
                            : b_in_short_pieces ? 3l
                            : fp32_shared_a ? std::max(1l, 192l / uk.nr)
                            : a_packed > 0 && !share_a ? std::max(1l, 256l / uk.nr)
                            : a_packed == 0 && a_outgrows_l2 ? (m >= kAInPlaceFourTilesRows ? 4l : 2l) : 1l;
    // A whole number of tasks per thread, and tasks within a tile of each other in size:
    // 22 column tiles as 5 tasks of up to 5 left one thread 3 of them (1.4x on 2 threads).
    // Row tasks each pack all of B (6.5% of the time of a 410-row task at 1024 x 512): two
    // per thread at most.
    tasks = threads * std::clamp(tiles / task_tiles / threads, 1l, split_rows ? 2l : 8l);
  }
  thread_local Scratch shared_scratch;
  thread_local detail::PackOnce once;
  SharedA shared_a;
  if (share_a)
    shared_a = detail::shared_a(pr, uk, m, static_cast<float*>(shared_scratch.get(sizeof(float) * size_t(detail::shared_a_floats(uk, m, pr.k)))), once);
  // The larger tasks first (tile counts differ by one at most): threads taking them in turn
  // then even out, where 3, 4, 3, 4 tiles left one thread 6 and the other 8. So ordered,
  // column tasks beat splitting K into FP32 partial sums added at the end, which an earlier
  // version did for few rows and deep K (2 threads, medians of 3 against oneDNN: 32,1024,4096
  // NN 0.92x -> 1.18x, 32,896,4096 1.06x -> 1.11x, 32,640,5120 1.06x -> 1.23x, 64,768,3072
  // 0.97x -> 1.01x).
  auto first_tile = [&](long t) { return t * (tiles / tasks) + std::min(t, tiles % tasks); };
  pool.run(int(tasks), [&](int t) {
    const long lo = std::max(0l, first_tile(t) * unit - shift), hi = std::min(extent, first_tile(t + 1) * unit - shift);
    if (lo >= hi) return;
    if (split_rows) gemm_block(pr, uk, lo, hi, 0, n, share_a ? &shared_a : nullptr, col_shift);
    else gemm_block(pr, uk, 0, m, lo, hi, share_a ? &shared_a : nullptr, col_shift);
  }, threads);
}

}  // namespace trainplan::kernels
