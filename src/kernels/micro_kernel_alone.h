// The GEMM's micro-kernel for one ISA on its own, on the calling thread, with every
// operand already in cache: the GEMM's two inner loops (each NR-column panel of B against
// every row of an MC x KC block of A, sums into an FP32 workspace) without packing,
// conversion, rounding to BF16 or operands streamed from memory. Set beside the
// instruction's peak and the whole GEMM, it says how much of the GEMM's shortfall is the
// kernel's own schedule and how much is feeding it. 0 for the portable and AMX kernels.
#pragma once
#include "kernels/cpu_features.h"

namespace trainplan::kernels {

// FLOP/s, the best of `passes` passes over the block (after one to warm the caches).
double micro_kernel_alone_flops_per_s(Isa isa, int passes = 30);

}  // namespace trainplan::kernels
