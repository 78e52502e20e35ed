// Packing op(A) once per GEMM call (gemm_shared_pack.h): pieces of one K block by a
// chunk of rows, each claimed by the first task to need it.
#include "kernels/gemm_shared_pack.h"

#include <algorithm>
#include <thread>

namespace trainplan::kernels::detail {
namespace {

enum : unsigned char { kUnpacked, kPacking, kPacked };

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void PackOnce::reset(long pieces) {
  if (pieces > size_) state_ = std::make_unique<std::atomic<unsigned char>[]>(size_t(size_ = pieces));
  for (long i = 0; i < pieces; ++i) state_[i].store(kUnpacked, std::memory_order_relaxed);
}

bool PackOnce::claim(long i) {
  unsigned char expected = kUnpacked;
  return state_[i].load(std::memory_order_relaxed) == kUnpacked &&
         state_[i].compare_exchange_strong(expected, kPacking, std::memory_order_acquire);
}

void PackOnce::done(long i) { state_[i].store(kPacked, std::memory_order_release); }

// A piece takes microseconds to pack; past that its packer was probably preempted, so
// give the CPU away rather than spin (more threads than CPUs).
void PackOnce::wait(long i) const {
  for (long spins = 0; state_[i].load(std::memory_order_acquire) != kPacked; ++spins)
    if (spins < 4096) cpu_relax();
    else std::this_thread::yield();
}

void pack_a_block(const Problem& pr, const MicroKernel& uk, long i0, long mc, long p0, long kc, void* out) {
  if (uk.packing == Packing::amx) pack_a_amx(pr, i0, mc, p0, kc, uk.mr, static_cast<std::uint32_t*>(out));
  else if (uk.packing == Packing::bf16_pairs) pack_a_pairs(pr, i0, mc, p0, kc, uk.mr, static_cast<std::uint32_t*>(out));
  else pack_a(pr, i0, mc, p0, kc, uk.mr, static_cast<float*>(out));
}

void pack_b_block(const Problem& pr, const MicroKernel& uk, long p0, long kc, long j0, long nc, float* out) {
  if (uk.packing == Packing::amx) pack_b_amx(pr, p0, kc, j0, nc, uk.nr, reinterpret_cast<std::uint32_t*>(out));
  else if (uk.packing == Packing::bf16_pairs) pack_b_pairs(pr, p0, kc, j0, nc, uk.nr, reinterpret_cast<std::uint32_t*>(out));
  else pack_b(pr, p0, kc, j0, nc, uk.nr, out);
}

// Pieces of 8 MR-row tiles (48 rows at 6 x 64): small enough that the threads meeting at
// the start of a K block share its packing.
SharedA shared_a(const Problem& pr, const MicroKernel& uk, long m, float* out, PackOnce& once) {
  SharedA s{&pr, &uk, out, m, round_up(m, uk.mr), 8l * uk.mr, 0, &once};
  s.chunks = (m + s.chunk_rows - 1) / s.chunk_rows;
  once.reset(s.chunks * ((pr.k + uk.kc - 1) / uk.kc));
  return s;
}

const void* SharedA::block(long i0, long mc, long p0, long kc) const {
  float* k_block = base + panel_floats(*uk, rows_pad, p0);
  const long first = p0 / uk->kc * chunks;
  once->ensure(first + i0 / chunk_rows, first + (i0 + mc + chunk_rows - 1) / chunk_rows, [&](long piece) {
    const long r0 = (piece - first) * chunk_rows;
    pack_a_block(*pr, *uk, r0, std::min(chunk_rows, m - r0), p0, kc, k_block + panel_floats(*uk, r0, kc));
  });
  return k_block + panel_floats(*uk, i0, kc);
}

}  // namespace trainplan::kernels::detail
