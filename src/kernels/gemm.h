// BF16 GEMM with FP32 accumulation: C = op(A) * op(B) (+ C if accumulate),
// all matrices row-major with leading dimensions in elements. op(A) is m x k:
// A itself (m x k, lda >= k) or, with Trans::yes, the transpose of a stored
// k x m matrix (lda >= m); likewise op(B) is k x n. Results round to nearest even.
// Covers the forward (X W), and backward (dY W^T, X^T dY) passes of a layer.
#pragma once
#include "kernels/bf16.h"
#include "kernels/cpu_features.h"

namespace trainplan::kernels {

class ThreadPool;

enum class Trans { no, yes };

struct GemmOptions {
  int threads = 0;             // 0: every thread of the pool; else at most this many
  bool accumulate = false;     // C += op(A) op(B), C read as BF16
  Isa isa = best_isa();        // micro-kernel to use (falls back if unsupported)
  ThreadPool* pool = nullptr;  // nullptr: ThreadPool::shared()
};

void gemm_bf16(Trans trans_a, Trans trans_b, long m, long n, long k, const bf16* a, long lda,
               const bf16* b, long ldb, bf16* c, long ldc, const GemmOptions& options = {});

}  // namespace trainplan::kernels
