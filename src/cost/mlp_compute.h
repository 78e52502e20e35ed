// MLP compute: the MLP work of one average layer for one micro-batch on
// one device: a dense model's MLP, or, in the MoE layers' share, the router
// GEMM, the shared experts (split by TP like a dense MLP) and this rank's
// routed experts, each run on the tokens routed to it at the busiest rank's
// load (the workload's imbalance, capped by a capacity factor); plus the
// permutation of routed tokens around the all-to-alls. Part of layer_compute.
#pragma once
#include "cost/gemm_time.h"
#include "cost/step_context.h"

namespace trainplan::cost {

// One MLP's GEMMs, not weighted by the share of layers that have it: the
// dense MLP's up projection (gate included) and down projection, and the
// shared experts' up projection (zero where the model has none).
struct MlpGemms {
  GemmTime dense_up, dense_down, shared_up;
};
// Adds the MLP GEMMs to the layer's GEMM time, forward and both backward.
MlpGemms mlp_compute(const StepContext& ctx, double& gemm_forward_s, double& gemm_backward_s);
// Elements of the MLP intermediates on this device (what the activation
// function reads): tokens x width, summed over dense, shared and routed parts.
double mlp_intermediate_elements(const StepContext& ctx);
// Memory-bound MoE work, forward: permuting routed tokens into expert order and back.
double moe_memory_s(const StepContext& ctx);
// Rows (token copies) the routed experts of this device take per micro-batch:
// tokens after SP x top-k x expert TP (an ETP group gathers its members'
// tokens) x the busiest rank's load.
double routed_rows(const StepContext& ctx);

}  // namespace trainplan::cost
