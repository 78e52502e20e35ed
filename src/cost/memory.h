// Memory per device, one function per component, each named as the Estimate's
// MemoryBreakdown names it and reading the dtypes, sharding and recompute as
// the Stack implements them. memory_per_device composes them for the heavier
// of the first pipeline stage (embedding, most micro-batches in flight) and
// the last (head, logits). Plans must be completed (dp set), and the stack is
// the one the plan's ZeRO stage sees (spec::at_zero_stage; cost::Evaluator passes it).
#pragma once
#include "cost/estimate.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "cost/state_bytes.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::cost {


// Parameters held by one device of the heaviest pipeline stage (before ZeRO).
double parameters_per_device(const spec::ModelSpec& model, const spec::Plan& plan);
// Routed-expert parameters one device of a stage holds: the stage's share of
// the experts, split over EP and expert TP (the MoE layers spread evenly over
// the stages, an approximation where dense layers lead). 0 for a dense model.
double expert_parameters_per_device(const spec::ModelSpec& model, const spec::Plan& plan);
// The plan as the state components see one parameter group: its weights
// replicated over `replicas` ranks that ZeRO shards over (DP x CP for the
// dense parameters, the experts' DP for the routed experts).
spec::Plan sharded_over(const spec::Plan& plan, int replicas);
// Parameters of pipeline rank `rank` on one device: its layers (spec::stage_layers)
// plus the embedding on rank 0 and the head on rank PP - 1 (both at PP 1).
double stage_parameters_per_device(const spec::ModelSpec& model, const spec::Plan& plan, int rank);

// Components, bytes per device. `params`: this stage's parameters per device.
// The part of stage_parameters_per_device in transformer layers: the weights
// FP8 GEMMs keep FP8 copies of (the embedding and the LM head have none).
double stage_layer_parameters_per_device(const spec::ModelSpec& model, const spec::Plan& plan, int rank);
// `params` of one parameter group, `layer_params` of them in the layers' GEMMs.
double weights_bytes(const StateBytes& state, double params, double layer_params, const spec::Plan& plan);
double master_weights_bytes(const StateBytes& state, double params, const spec::Plan& plan);
// Gradients as accumulated (ZeRO-2 on: the rank's partition, two of them under accumulation where
// StateBytes::gradient_partition_per_micro_batch) and the 16-bit copies beside them.
double gradients_bytes(const StateBytes& state, double params, const spec::Plan& plan);
double optimizer_states_bytes(const StateBytes& state, double params, const spec::Plan& plan);
// One layer's stored activations for one micro-batch (the recompute mode and
// attention kernel of the stack decide what is kept).
double layer_activation_bytes(const spec::ModelSpec& model, const spec::Stack& stack, const spec::Workload& workload,
                              const spec::Plan& plan);
// Model chunks whose activations pipeline rank `rank` holds at its peak:
// 1F1B keeps PP - rank micro-batches of its one chunk; interleaved 1F1B warms
// up with 2 (PP - 1 - rank) + (v - 1) PP chunks and holds one more (Narayanan
// et al. 2021, section 2.2; Megatron-LM's interleaved schedule), never more
// than the step's micro-batches times v.
int chunks_in_flight(const spec::Plan& plan, int rank);
// Whether a stage's peak holds a replayed layer beside its checkpoints: under
// full recompute of every layer of its chunks of `chunk_layers`.
bool replays_a_layer_at_peak(const spec::Plan& plan, double chunk_layers);
// A stage's activations: its in-flight chunks times the layers of a chunk
// (under full recompute of some layers, those at their checkpoint, the rest
// whole), plus one layer's working set where every layer is recomputed.
double activations_bytes(const spec::ModelSpec& model, const spec::Stack& stack, const spec::Workload& workload,
                         const spec::Plan& plan, int rank);
// The loss's logits on the last stage, at the stack's bytes per logit.
double logits_bytes(const spec::ModelSpec& model, const spec::Stack& stack, const spec::Workload& workload,
                    const spec::Plan& plan);
// During the step: a tensor-list (foreach) Adam holds one intermediate the
// size of the parameters it updates (masters, else weights; its ZeRO shard);
// DeepSpeed copies the rank's gradient shard (step_grad_shard_copy), ZeRO-3 one
// sub-group of it at a time (StackMemory::optimizer_sub_group_parameters).
double optimizer_temporaries_bytes(const spec::Stack& stack, const StateBytes& state, double params,
                                   const spec::Plan& plan);
// Gradients while the optimizer steps: all of them, or only the rank's ZeRO
// shard where the stack frees the rest first (DeepSpeed ZeRO-1/2).
double step_gradients_bytes(const spec::Stack& stack, const StateBytes& state, double params,
                            const spec::Plan& plan);
// What the caching allocator holds through an optimizer step that allocates
// temporaries: the blocks backward freed (activations, logits, gradients
// outside the shard) stay cached, and a freed block serves no larger request,
// so the step's temporaries (DeepSpeed's flat shard copies; a foreach Adam's
// parameter-sized intermediates, assumed too large for one layer's blocks)
// take new segments on top. 0 without temporaries.
double cached_through_step_bytes(const spec::Stack& stack, double backward_tensors_bytes, double temporaries_bytes);
// What the runtime holds outside the framework's tensors: its context, and one
// communicator's buffers per parallel group (TP, PP, DP, CP, EP) of more than
// one rank, where the stack states a communicator's size.
double runtime_reserve_bytes(const spec::Stack& stack, const spec::Plan& plan);
// A reduction buffer the stack keeps apart from the gradients, across steps,
// as the stack sizes it at the plan's ZeRO stage (hidden^2 16-bit elements
// where it takes the Hugging Face integration's "auto").
double reduction_buffers_bytes(const spec::ModelSpec& model, const spec::Stack& stack, const StateBytes& state,
                               const spec::Plan& plan);
// After backward, before the step: the flat copy of one gradient bucket that a
// buffered all-reduce makes (StackCommunication::dp_reduction_copy_bytes), at least the largest
// single gradient of pipeline rank `rank` (a bucket closes once it passes its
// size: BLOOM's embedding shard goes alone), at most all of them. 0 at DP 1.
double reduction_copy_bytes(const spec::ModelSpec& model, const spec::Stack& stack, const StateBytes& state,
                            double params, const spec::Plan& plan, int rank);
// ZeRO-3 / FSDP: one layer's gathered weights plus the prefetched next, and
// its unsharded gradients before the reduce-scatter.
double sharding_buffers_bytes(const spec::ModelSpec& model, const StateBytes& state, const spec::Plan& plan);
// ZeRO-3 under PP > 1 where the stack keeps the stage gathered through the
// step (StackMemory::fsdp_gathered_under_pipeline): then the 16-bit weights and the
// main-dtype gradients of all `params` are held unsharded, and no per-layer
// sharding buffers are needed beside them.
bool gathered_through_step(const spec::Stack& stack, const spec::Plan& plan);
double gathered_weights_bytes(const StateBytes& state, double params);
double gathered_gradients_bytes(const StateBytes& state, double params);

// One pipeline rank: the first (embedding, PP micro-batches in flight), the
// last (head and logits, one in flight) or, where the edges take a layer's
// slot, the second (a full stage, PP - 1 in flight); with PP 1 one stage.
MemoryBreakdown stage_memory(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                             const spec::Stack& stack, const spec::Workload& workload, const spec::Plan& plan,
                             int rank);
// The heaviest of those: what decides whether the plan fits.
MemoryBreakdown memory_per_device(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                                  const spec::Stack& stack, const spec::Workload& workload, const spec::Plan& plan);

}  // namespace trainplan::cost
