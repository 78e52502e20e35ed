// Host roofline probes: the FP32 FMA peak (avx512_bf16 counts as avx512 here) (independent FMA chains in
// registers, so latency hides and only throughput counts) and the streaming
// memory bandwidth (read a + b, write c, over buffers far larger than cache).
// Each returns the best of `repeats` runs; `threads` 0 means every pool thread.
#pragma once
#include "kernels/cpu_features.h"

namespace trainplan::kernels {

double fma_peak_flops_per_s(Isa isa, int threads, double seconds = 0.05, int repeats = 3);
// VDPBF16PS instruction peak (16 lanes x 2 products x 2 FLOPs per instruction),
// the ceiling of the avx512_bf16 GEMM; 0 where the CPU lacks avx512_bf16.
double dot_bf16_peak_flops_per_s(int threads, double seconds = 0.05, int repeats = 3);
// TDPBF16PS instruction peak (16 x 16 x 32 products, 2 FLOPs each, per instruction),
// the ceiling of the amx_bf16 GEMM; 0 where the CPU or OS lacks AMX-BF16.
double amx_bf16_peak_flops_per_s(int threads, double seconds = 0.05, int repeats = 3);
double stream_bytes_per_s(int threads, long bytes_per_array = 64l << 20, int repeats = 3);

}  // namespace trainplan::kernels
