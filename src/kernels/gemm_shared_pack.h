// Internal to the GEMM: op(A) packed once per call, for all its tasks and NC blocks,
// piece by piece by whichever task needs a piece first, so no task repeats packing another
// task (or its own earlier NC block) did. The layout is the per-block one gemm_block packs,
// laid end to end. Also the per-block packing dispatch on the kernel's layout.
#pragma once
#include <atomic>
#include <memory>

#include "kernels/gemm_micro.h"
#include "kernels/gemm_pack.h"

namespace trainplan::kernels::detail {

// Floats a packed depth-kc panel of `rows` occupies (pair words count as one float each).
inline long panel_floats(const MicroKernel& uk, long rows, long kc) {
  if (uk.packing == Packing::amx) return rows * (round_up(kc, 32) / 2);
  return rows * (uk.packing == Packing::bf16_pairs ? (kc + 1) / 2 : kc);
}

// One block of op(A) (rows [i0, i0+mc), depth [p0, p0+kc)) or op(B) (depth [p0, p0+kc),
// columns [j0, j0+nc)) packed in the kernel's layout.
void pack_a_block(const Problem& pr, const MicroKernel& uk, long i0, long mc, long p0, long kc, void* out);
void pack_b_block(const Problem& pr, const MicroKernel& uk, long p0, long kc, long j0, long nc, float* out);

// Pieces of a shared operand, each packed by the first thread that needs it while later
// ones wait for it: packing spreads over the tasks as they run, with no barrier before
// them (a worker slow to wake would hold one up). Not copyable; one per GEMM call.
class PackOnce {
 public:
  void reset(long pieces);
  // Packs the pieces [first, last) not yet claimed (pack(i) each), then waits for the rest.
  template <class F>
  void ensure(long first, long last, const F& pack) {
    for (long i = first; i < last; ++i)
      if (claim(i)) pack(i), done(i);
    for (long i = first; i < last; ++i) wait(i);
  }

 private:
  bool claim(long i);
  void done(long i);
  void wait(long i) const;
  std::unique_ptr<std::atomic<unsigned char>[]> state_;
  long size_ = 0;
};

// All rows [0, m) of op(A) over the whole depth: K block p0 at panel_floats(uk, round_up(m,
// MR), p0), rows i0 (a multiple of MR) of it at panel_floats(uk, i0, kc); packed in pieces of
// one K block by chunk_rows rows.
struct SharedA {
  const Problem* pr = nullptr;
  const MicroKernel* uk = nullptr;
  float* base = nullptr;
  long m = 0, rows_pad = 0, chunk_rows = 0, chunks = 0;
  PackOnce* once = nullptr;
  // The packed rows [i0, i0+mc) of K block p0, packed first where not yet.
  const void* block(long i0, long mc, long p0, long kc) const;
};

// Floats the shared layout needs.
inline long shared_a_floats(const MicroKernel& uk, long m, long k) { return panel_floats(uk, round_up(m, uk.mr), round_up(k, 32)); }

// Shared op(A) over `out` (shared_a_floats floats), nothing packed yet; `once` is reset.
SharedA shared_a(const Problem& pr, const MicroKernel& uk, long m, float* out, PackOnce& once);

}  // namespace trainplan::kernels::detail
