// GEMM time: one m x n x k GEMM at a peak and the calibration's efficiency
// for its shape, with its two backward GEMMs; the peak a GEMM gets when its
// rows miss the hardware's matrix alignment; whether an unfused attention
// does. What the layer's, the MLP's and the head's compute all price with.
#pragma once
#include "cost/step_context.h"

namespace trainplan::cost {

// One GEMM of m x n x k at `peak` and the calibration's efficiency for its shape.
double gemm_s(const StepContext& ctx, double peak, double m, double n, double k);
// The peak a GEMM runs at whose operands have rows of row_a and row_b elements:
// `peak`, or the FP32 (SIMT) peak where a row misses the hardware's
// matrix_alignment_bytes (an assumption: cuBLAS then has no tensor-core kernel).
double matrix_peak(const StepContext& ctx, double peak, double row_a, double row_b);
// Whether the stack's unfused attention runs its batched GEMMs off the matrix
// unit: a head dimension whose rows miss the hardware's alignment.
bool attention_misses_alignment(const spec::ModelSpec& m, const spec::HardwareSpec& hw, const spec::Stack& stack,
                                spec::Precision precision);
// One m x n x k GEMM: forward, and its two backward GEMMs, the input gradient
// (m x k, inner n) and the weight gradient (n x k, inner m).
struct GemmTime {
  double forward_s = 0, dgrad_s = 0, wgrad_s = 0;
};
// Adds a forward GEMM to forward_s and its two backward GEMMs to backward_s,
// and returns the three.
GemmTime add_gemm(const StepContext& ctx, double peak, double m, double n, double k, double& forward_s,
                  double& backward_s);

}  // namespace trainplan::cost
