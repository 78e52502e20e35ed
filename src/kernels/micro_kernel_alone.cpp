#include "kernels/micro_kernel_alone.h"

#include <algorithm>
#include <chrono>

#include "kernels/aligned_vector.h"
#include "kernels/bf16.h"
#include "kernels/gemm_micro.h"

namespace trainplan::kernels {
namespace {

constexpr long kColumns = 1008;  // about the GEMM's NC cap (1024), a multiple of 24 and 16

detail::MicroKernel kernel_for(Isa isa) {
  if (isa == Isa::avx2 && cpu_has(Isa::avx2)) return detail::avx2_micro_kernel();
  if (isa == Isa::avx512 && cpu_has(Isa::avx512)) return detail::avx512_micro_kernel();
  if (isa == Isa::avx512_bf16 && cpu_has(Isa::avx512_bf16)) return detail::avx512_bf16_micro_kernel();
  return {};
}

template <typename Pass>
double best_seconds(int passes, Pass pass) {
  pass();
  double best = 1e30;
  for (int i = 0; i < passes; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

double micro_kernel_alone_flops_per_s(Isa isa, int passes) {
  const detail::MicroKernel uk = kernel_for(isa);
  if (uk.mr == 0) return 0;
  const long mc = uk.mc / uk.mr * uk.mr, kc = uk.kc, nc = kColumns / uk.nr * uk.nr, ldws = nc + 16;
  AlignedVector<float> ws(size_t(mc * ldws), 0.f);
  double seconds = 0;
  if (uk.packing == detail::Packing::fp32) {
    // Values whose sums over every pass stay far from overflow and from denormals alike.
    AlignedVector<float> a(size_t(mc * kc), 1e-3f), b(size_t(nc * kc), 1e-3f);
    seconds = best_seconds(passes, [&] {
      for (long jr = 0; jr < nc; jr += uk.nr)
        for (long ir = 0; ir < mc; ir += uk.mr)
          uk.fn(kc, a.data() + ir * kc, b.data() + jr * kc, ws.data() + ir * ldws + jr, ldws, true);
    });
  } else if (uk.packing == detail::Packing::bf16_pairs && uk.tile) {
    // op(A) read in place (rows kc apart), as the GEMM reads an untransposed A; B as
    // packed pair panels, kc x NR values each; the values do not matter to the timing.
    AlignedVector<bf16> a(size_t(mc * kc), to_bf16(1e-3f)), b(size_t(nc * kc), to_bf16(1e-3f));
    detail::TileArgs t;
    t.kc = kc;
    t.a = a.data();
    t.a_row_bytes = long(sizeof(bf16)) * kc;
    t.a_tile_bytes = uk.mr * t.a_row_bytes;
    t.ldws = ldws;
    t.partial = true;
    t.rows = int(mc), t.cols = uk.nr;
    seconds = best_seconds(passes, [&] {
      for (long jr = 0; jr < nc; jr += uk.nr) {
        t.b = b.data() + jr * kc;
        t.ws = ws.data() + jr;
        uk.tile(t);
      }
    });
  } else {
    return 0;
  }
  return 2.0 * double(mc) * double(nc) * double(kc) / seconds;
}

}  // namespace trainplan::kernels
