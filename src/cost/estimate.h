// Estimate: everything cost::evaluate says about one Plan. Times in seconds
// per optimizer step, memory in bytes per device. A plain value: evaluate()
// allocates nothing. Money per price kind comes from cost/prices.h.
#pragma once
#include <string>
#include <vector>

namespace trainplan::cost {

// Where one step's time goes. The parts add up to step_s.
struct StepBreakdown {
  double forward_compute_s = 0;   // on the slowest pipeline stage, all micro-batches
  double backward_compute_s = 0;  // includes recompute
  double recompute_s = 0;         // part of backward_compute_s spent re-running forward
  double memory_bound_s = 0;      // norms, softmax, activations, residuals (inside the compute figures above)
  double tp_comm_exposed_s = 0;
  double cp_comm_exposed_s = 0;   // context parallel exchange (K/V ring or gather, head all-to-all) not hidden
  double ep_comm_exposed_s = 0;   // expert parallel dispatch and combine all-to-alls
  double pp_comm_exposed_s = 0;
  double pipeline_bubble_s = 0;
  double dp_comm_exposed_s = 0;
  double dp_comm_total_s = 0;     // before overlap, for reference
  double grad_accumulation_s = 0;  // adding each later micro-batch's gradients into the buffer
  double optimizer_s = 0;
  // Where the stack traces each micro-batch on the host (StackCompute::lazy_tracing):
  // the host's recording beyond the device work it overlaps.
  double host_tracing_exposed_s = 0;
  // Where the runtime launches each graph synchronously (StackCompute::sync_launch_share):
  // the device idle between one graph's end and the next one's start.
  double sync_launch_gaps_s = 0;
  double overhead_s = 0;
  double step_s = 0;
};

// The parts a step's time is the sum of, in the order every report lists them:
// the one declaration the sum, the summaries and the comparisons read.
struct StepPart {
  const char* key;    // its field in JSON output
  const char* label;  // as tables and summaries name it
  double StepBreakdown::*seconds;
  bool listed_when_zero;  // CP, EP, host tracing and launch gaps are listed only where the plan has them
};
inline constexpr StepPart kStepParts[] = {
    {"forward_compute_s", "forward compute", &StepBreakdown::forward_compute_s, true},
    {"backward_compute_s", "backward compute (with recompute)", &StepBreakdown::backward_compute_s, true},
    {"tp_comm_exposed_s", "exposed TP communication", &StepBreakdown::tp_comm_exposed_s, true},
    {"cp_comm_exposed_s", "exposed CP communication (attention exchange)", &StepBreakdown::cp_comm_exposed_s, false},
    {"ep_comm_exposed_s", "exposed EP communication (all-to-all)", &StepBreakdown::ep_comm_exposed_s, false},
    {"pp_comm_exposed_s", "exposed PP communication", &StepBreakdown::pp_comm_exposed_s, true},
    {"pipeline_bubble_s", "pipeline bubble", &StepBreakdown::pipeline_bubble_s, true},
    {"dp_comm_exposed_s", "exposed DP communication", &StepBreakdown::dp_comm_exposed_s, true},
    {"grad_accumulation_s", "gradient accumulation", &StepBreakdown::grad_accumulation_s, true},
    {"optimizer_s", "optimizer", &StepBreakdown::optimizer_s, true},
    {"host_tracing_exposed_s", "exposed host tracing (lazy mode)", &StepBreakdown::host_tracing_exposed_s, false},
    {"sync_launch_gaps_s", "synchronous launch gaps", &StepBreakdown::sync_launch_gaps_s, false},
    {"overhead_s", "overhead", &StepBreakdown::overhead_s, true}};

inline double sum_of_step_parts(const StepBreakdown& b) {
  double sum = 0;
  for (const StepPart& part : kStepParts) sum += b.*part.seconds;
  return sum;
}

// Per device, on the heavier of the first and last pipeline stage. Component
// names match cost/memory.h. tensors_bytes is what a framework's peak-allocated
// counter sees; the allocator's reserve and the runtime's own memory come on top.
struct MemoryBreakdown {
  double weights_bytes = 0;
  double master_weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_states_bytes = 0;
  double activations_bytes = 0;
  double logits_bytes = 0;
  double sharding_buffers_bytes = 0;  // ZeRO-3 / FSDP gathered weights and unsharded gradients
  double reduction_buffers_bytes = 0;  // a DP reduction buffer kept apart from the gradients
  double optimizer_temporaries_bytes = 0;  // a tensor-list Adam's intermediates, during the step
  bool peak_at_optimizer_step = false;     // after backward (the reduction or the step), not its start, is the peak
  double tensors_bytes = 0;
  // The allocator's reserve that it cannot give back on a failed allocation
  // (fragmentation; StackMemory::allocator_unreleasable), counted in the fit.
  double allocator_bytes = 0;
  double runtime_reserve_bytes = 0;   // runtime context and communication buffers
  double total_bytes = 0;
  // What the caching allocator holds at its peak (tensors, their reserve and
  // cached free blocks), which a reserved counter or nvidia-smi (with the
  // runtime's) reads; it frees its cache before failing, so `fits` ignores it.
  double reserved_bytes = 0;
  // Of that, the free blocks it keeps cached and would give back before an
  // allocation fails: the releasable part of its reserve, and the blocks freed
  // in backward and kept cached through the step.
  // Subtracts the sum as stage_memory adds it, so a reserve that is exactly
  // the peak leaves zero, not a rounding residue.
  double cached_free_bytes() const { return reserved_bytes - (tensors_bytes + allocator_bytes); }
  double capacity_bytes = 0;
  double margin_bytes = 0;     // capacity - total; negative: does not fit
  bool fits = false;
  // Which pipeline stage this is (memory_per_device: the heaviest) and, from
  // memory_per_device, the totals of the first stage (embedding, most micro-batches in
  // flight) and the last (LM head, logits): with PP > 1, the imbalance that uneven or
  // edge-slot splits trade. With PP 1 both are the total.
  int stage = 0;
  int last_stage = 0;
  double first_stage_total_bytes = 0;
  double last_stage_total_bytes = 0;
  // The largest component: what a plan that does not fit should shrink first.
  const char* largest_component() const;
};

// The components a device's memory is listed by, in the order every report
// lists them (the summary, JSON, the largest component): the one declaration
// they read. total_bytes is their sum at the peak (stage_memory).
struct MemoryPart {
  const char* key;    // its field in JSON output
  const char* label;  // as summaries and refusals name it
  double MemoryBreakdown::*bytes;
};
inline constexpr MemoryPart kMemoryParts[] = {
    {"weights_bytes", "weights", &MemoryBreakdown::weights_bytes},
    {"master_weights_bytes", "master weights", &MemoryBreakdown::master_weights_bytes},
    {"gradients_bytes", "gradients", &MemoryBreakdown::gradients_bytes},
    {"optimizer_states_bytes", "optimizer states", &MemoryBreakdown::optimizer_states_bytes},
    {"activations_bytes", "activations", &MemoryBreakdown::activations_bytes},
    {"logits_bytes", "logits", &MemoryBreakdown::logits_bytes},
    {"sharding_buffers_bytes", "sharding buffers", &MemoryBreakdown::sharding_buffers_bytes},
    {"reduction_buffers_bytes", "reduction buffers", &MemoryBreakdown::reduction_buffers_bytes},
    {"optimizer_temporaries_bytes", "optimizer temporaries", &MemoryBreakdown::optimizer_temporaries_bytes},
    {"allocator_bytes", "allocator reserve", &MemoryBreakdown::allocator_bytes},
    {"runtime_reserve_bytes", "runtime reserve", &MemoryBreakdown::runtime_reserve_bytes}};

// Per price kind; computed apart from the Estimate (cost/prices.h) so that
// evaluate() allocates nothing.
struct PriceFigures {
  std::string kind;
  double usd_per_instance_hour = 0;
  double usd_per_hour = 0;        // whole cluster
  double tokens_per_usd = 0;
  double usd_per_million_tokens = 0;
  double cost_to_train_usd = 0;   // for the Workload's tokens, at full utilisation
};

struct Estimate {
  StepBreakdown time;
  MemoryBreakdown memory;
  double model_flops_per_step = 0;     // 6ND-style model FLOPs on active parameters, no recompute
  double total_parameters = 0;         // every parameter of the model
  double active_parameters = 0;        // those a token runs through (MoE: top-k of the routed experts)
  double hardware_flops_per_step = 0;  // including recompute
  double seqs_per_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_device = 0;
  double mfu = 0;
  double hfu = 0;
  double time_to_train_s = 0;          // at full utilisation
  int devices = 0;
  int micro_batches = 0;               // per step per DP replica (gradient accumulation)
};

}  // namespace trainplan::cost
