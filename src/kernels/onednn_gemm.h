// oneDNN's BF16 matmul (FP32 accumulate, BF16 out) behind the shape of gemm_bf16:
// the vendor library a framework calls, for kernels_bench and `calibrate kernels
// --backend onednn`. Built only with oneDNN (Debian libdnnl-dev, CMake option
// TRAINPLAN_ONEDNN); without it onednn_built() is false and OnednnGemm's
// constructor throws std::runtime_error saying so. No accumulate, contiguous rows.
#pragma once
#include <memory>
#include <string>

#include "kernels/bf16.h"
#include "kernels/gemm.h"

namespace trainplan::kernels {

bool onednn_built();

// "" where oneDNN is built in and has a native BF16 matmul on this CPU; else why not, in
// words (not built; no BF16 matmul at all, as under ONEDNN_MAX_CPU_ISA=avx2; reference code only).
std::string onednn_bf16_unavailable();

// One matmul primitive, created once for its shape (creation is the slow part). Where
// oneDNN cannot create it, the constructor throws std::runtime_error saying so.
class OnednnGemm {
 public:
  OnednnGemm(Trans trans_a, Trans trans_b, long m, long n, long k, long lda, long ldb, long ldc);
  ~OnednnGemm();
  OnednnGemm(const OnednnGemm&) = delete;
  OnednnGemm& operator=(const OnednnGemm&) = delete;

  // C = op(A) op(B) on `threads` OpenMP threads (0: oneDNN's default).
  void run(const bf16* a, const bf16* b, bf16* c, int threads) const;
  // oneDNN's name for the implementation it chose, e.g. "brg:avx512_core_amx_bf16".
  std::string implementation() const;
  // False where oneDNN only has its reference (scalar) code for BF16 on this CPU.
  bool native() const { return implementation().rfind("ref", 0) != 0; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainplan::kernels
