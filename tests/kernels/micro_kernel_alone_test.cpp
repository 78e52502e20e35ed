#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/fma_peak.h"
#include "kernels/micro_kernel_alone.h"

using namespace tp::kernels;

// The probe runs the kernel's real work: it cannot beat the instruction loop it is made
// of (a pass that skipped its k loop would). The bound is loose against noise: it holds a
// probe to the hardware, not to a speed, which kernels_bench reports.
TEST(MicroKernelAlone, NoFasterThanItsInstructionsPeak) {
  int measured = 0;
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    const auto peak_once = [&] { return isa == Isa::avx512_bf16 ? dot_bf16_peak_flops_per_s(1) : fma_peak_flops_per_s(isa, 1); };
    // The fastest of peaks taken before and after the probe: on a shared machine one
    // reading can be slowed by another process (the fresh clone's ctest once read 62%
    // of the peak while a build ran beside it), which would make the bound bite.
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
