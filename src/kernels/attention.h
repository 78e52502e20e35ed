// Tiled (flash-style) attention forward: O = softmax(scale * Q K^T [+ causal
// mask]) V per head, never materializing the seq_q x seq_k score matrix;
// scores, running max and sum stay in FP32. Element (h, s, e) of Q, K, V and
// O sits at h*head_stride + s*ld + e. Causal: query i sees keys j <= i + seq_k - seq_q.
// If logsumexp is given, it receives log(sum_j exp(score_ij)) per (head, query), index
// h*seq_q + i, for the backward pass (+inf for a query that sees no key).
#pragma once
#include "kernels/bf16.h"

namespace trainplan::kernels {

struct AttentionShape {
  long heads = 1, seq_q = 1, seq_k = 1, head_dim = 64;
  long ld = 64;           // row stride of Q, K, V, O in elements (>= head_dim)
  long head_stride = 64;  // elements between heads
  bool causal = false;
  float scale = 0.125f;   // usually 1/sqrt(head_dim)
};

void attention_forward_bf16(const bf16* q, const bf16* k, const bf16* v, bf16* o,
                            const AttentionShape& shape, int threads = 0, float* logsumexp = nullptr);

// FLOPs of the two matrix products, counting the causal half only when masked.
double attention_flops(const AttentionShape& shape);

}  // namespace trainplan::kernels
