// Flash-style attention backward: dQ, dK, dV from Q, K, V, O, dO and the forward's
// logsumexp (attention_forward_bf16), recomputing the probabilities one key block at
// a time, so the seq_q x seq_k matrix never exists; sums in FP32, results rounded
// to BF16 once. Same layout, mask and scale as the forward (AttentionShape). As in
// FlashAttention, rowsum(dP * P) is taken as rowsum(dO * O) from the BF16 output O.
#pragma once
#include "kernels/attention.h"

namespace trainplan::kernels {

// dq, dk, dv are written (not accumulated) at the same offsets as q, k, v.
void attention_backward_bf16(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const bf16* d_o,
                             const float* logsumexp, bf16* dq, bf16* dk, bf16* dv, const AttentionShape& shape,
                             int threads = 0);

// FLOPs of its five matrix products (scores again, dV, dP, dK, dQ): 2.5x the forward's.
double attention_backward_flops(const AttentionShape& shape);

}  // namespace trainplan::kernels
