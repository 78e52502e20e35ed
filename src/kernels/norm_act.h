// Memory-bound layer kernels on BF16 rows (row-major, leading dimension ld in
// elements), computed in FP32 and rounded to nearest even on the way out.
// Output may alias input. Rows are spread over ThreadPool::shared() when
// `threads` is not 1 (0 means every pool thread).
#pragma once
#include "kernels/bf16.h"

namespace trainplan::kernels {

// Work is split over threads in chunks of at least this many elements, so
// calls under twice this run on the calling thread alone (no wake-up).
constexpr long kParallelGrainElements = 1 << 15;

// Row-wise softmax of x * scale. With causal, row r of a block whose first
// row is query position `first_row` keeps columns c <= first_row + r and
// writes 0 elsewhere (the mask of a decoder's attention scores).
void softmax_bf16(const bf16* x, bf16* y, long rows, long cols, long ld, float scale, bool causal,
                  long first_row = 0, int threads = 0);

// y = (x - mean) / sqrt(var + eps) * gamma + beta, per row; gamma and beta have `cols` entries.
void layernorm_bf16(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, long rows, long cols,
                    long ld, float eps, int threads = 0);

// y = x / sqrt(mean(x^2) + eps) * gamma, per row.
void rmsnorm_bf16(const bf16* x, const bf16* gamma, bf16* y, long rows, long cols, long ld, float eps,
                  int threads = 0);

// GELU, tanh form (GPT-2, GPT-NeoX): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), n elements.
void gelu_bf16(const bf16* x, bf16* y, long n, int threads = 0);

// SwiGLU: y = silu(gate) * up = gate / (1 + exp(-gate)) * up, n elements.
void swiglu_bf16(const bf16* gate, const bf16* up, bf16* y, long n, int threads = 0);

}  // namespace trainplan::kernels
