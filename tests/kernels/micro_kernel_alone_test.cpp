#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/fma_peak.h"
#include "kernels/micro_kernel_alone.h"

using namespace trainplan::kernels;

// The probe runs the kernel's real work: it cannot beat the instruction loop it is made
// of (a pass that skipped its k loop would). The bound is loose against noise: it holds a
// probe to the hardware, not to a speed, which kernels_bench reports.
TEST(MicroKernelAlone, NoFasterThanItsInstructionsPeak) {
  int measured = 0;
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    // Short windows, best of nine, as short as the probe's passes: under ctest -j2 a
    // neighbour takes time slices, and a 50 ms window always lost some while the
    // probe's few-millisecond passes could run clear (it read 1.6x a long-window
    // peak once, with a build beside it, and again beside another test).
    const auto peak_once = [&] {
      return isa == Isa::avx512_bf16 ? dot_bf16_peak_flops_per_s(1, 0.005, 9) : fma_peak_flops_per_s(isa, 1, 0.005, 9);
    };
    // The fastest of peaks taken before and after the probe.
    double peak = peak_once();
    const double alone = micro_kernel_alone_flops_per_s(isa, 3);
    peak = std::max({peak, peak_once(), peak_once()});
    EXPECT_GT(alone, 0) << to_string(isa);
    EXPECT_LT(alone, 1.25 * peak) << to_string(isa);
    ++measured;
  }
  if (measured == 0) GTEST_SKIP() << "no AVX2 on this CPU";
}

TEST(MicroKernelAlone, NoneForThePortableKernel) { EXPECT_EQ(micro_kernel_alone_flops_per_s(Isa::portable, 1), 0); }
