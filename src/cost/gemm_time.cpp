#include "cost/gemm_time.h"

#include <algorithm>
#include <cmath>

namespace trainplan::cost {

double gemm_s(const StepContext& ctx, double peak, double m, double n, double k) {
  return 2 * m * n * k / (peak * ctx.calibration.gemm.at(m, n, k));
}

namespace {

bool row_aligned(const spec::HardwareSpec& hw, double element_bytes, double elements) {
  return hw.matrix_alignment_bytes <= 0 || std::fmod(elements * element_bytes, hw.matrix_alignment_bytes) == 0;
}

}  // namespace

double matrix_peak(const StepContext& ctx, double peak, double row_a, double row_b) {
  const double e = spec::matmul_element_bytes(ctx.workload.precision);
  return row_aligned(ctx.hardware, e, row_a) && row_aligned(ctx.hardware, e, row_b)
             ? peak
             : std::min(peak, ctx.hardware.peak_fp32_flops_per_s);
}

bool attention_misses_alignment(const spec::ModelSpec& m, const spec::HardwareSpec& hw, const spec::Stack& stack,
                                spec::Precision precision) {
  const double e = spec::matmul_element_bytes(precision);
  return stack.compute.attention != spec::AttentionKernel::flash &&
         !(row_aligned(hw, e, m.qk_head_dim()) && row_aligned(hw, e, m.value_head_dim()));
}

// Forward GEMM plus its two backward GEMMs: dX = dY W^T (m, k, n) and dW = X^T dY (k, n, m).
// All three read rows of k and n elements, so one alignment check covers them.
GemmTime add_gemm(const StepContext& ctx, double peak, double m, double n, double k, double& forward_s,
                  double& backward_s) {
  peak = matrix_peak(ctx, peak, n, k);
  const GemmTime g{gemm_s(ctx, peak, m, n, k), gemm_s(ctx, peak, m, k, n), gemm_s(ctx, peak, k, n, m)};
  forward_s += g.forward_s;
  backward_s += g.dgrad_s + g.wgrad_s;
  return g;
}

}  // namespace trainplan::cost
