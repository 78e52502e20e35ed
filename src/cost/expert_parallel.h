// Expert parallel: the all-to-alls of the MoE layers' token dispatch and
// combine over the EP group (forward, and again for their gradients in
// backward; full recompute repeats the forward pair), with the all-gather and
// reduce-scatter of routed tokens inside an expert-TP group, per average layer
// and micro-batch, priced on the cluster graph. Megatron-Core's alltoall
// dispatcher runs them on the compute stream: they are exposed, except where
// the stack overlaps them with another micro-batch's layer compute
// (spec::StackCommunication::ep_a2a_hidden_share).
#pragma once
#include "cost/layer_compute.h"
#include "cost/step_context.h"

namespace trainplan::cost {

struct ExpertParallelTime {
  double forward_s = 0, backward_s = 0;  // exposed, per average layer
  double recompute_s = 0;                // forward pair re-run by full recompute
};

// Bytes one rank sends into one dispatch (or combine) all-to-all: its routed
// token copies (tokens after SP x top-k x the busiest rank's load) of h elements.
double dispatch_bytes(const StepContext& ctx);
// Other instances a token's top_k experts reach, routing uniform over `experts`
// spread evenly over `instances`: what a once-per-instance dispatcher sends over EFA.
double instances_reached_per_token(int experts, int top_k, int instances);
// Share of a rank's model-chunk passes that Megatron-Core's combined 1F1B
// pairs, a forward beside another micro-batch's backward: all but the first
// forward and the last backward without a pipeline, all but the first stage's
// warm-up under an interleaved one; 0 where the client runs no such pairs.
double ep_overlap_paired_share(const spec::Plan& plan);
ExpertParallelTime expert_parallel(const StepContext& ctx, const LayerCompute& layer);

}  // namespace trainplan::cost
