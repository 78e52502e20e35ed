// Host roofline probes: the FP32 FMA peak (independent FMA chains in
// registers, so latency hides and only throughput counts) and the streaming
// memory bandwidth (read a + b, write c, over buffers far larger than cache).
// Each returns the best of `repeats` runs; `threads` 0 means every pool thread.
#pragma once
#include "kernels/cpu_features.h"

namespace tp::kernels {

double fma_peak_flops_per_s(Isa isa, int threads, double seconds = 0.05, int repeats = 3);
double stream_bytes_per_s(int threads, long bytes_per_array = 64l << 20, int repeats = 3);

}  // namespace tp::kernels
