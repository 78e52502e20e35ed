// Composes the memory components for one pipeline rank, at the largest of its
// peaks (end of forward with every in-flight activation; where the stack
// allows, apart from it the replayed layer and backward's end with all the
// gradients; the optimizer step or the reduction's flat copy after backward),
// and picks the heaviest rank (cost/stages.h) for memory_per_device.
#include <algorithm>
#include <array>

#include "cost/memory.h"
#include "cost/stages.h"

namespace trainplan::cost {
MemoryBreakdown stage_memory(const spec::ModelSpec& m, const spec::HardwareSpec& hw, const spec::Stack& stack,
                             const spec::Workload& w, const spec::Plan& p, int rank) {
  const StateBytes state = state_bytes_per_parameter(stack, w.precision);
  const bool last_stage = rank == p.pp - 1;
  const double params = stage_parameters_per_device(m, p, rank);
  // Dense parameters shard over DP x CP, routed experts over their own DP.
  const spec::Plan dense = sharded_over(p, p.dp * p.cp), experts = sharded_over(p, spec::expert_dp(p));
  const double expert_params = expert_parameters_per_device(m, p);
  MemoryBreakdown mem;
  mem.stage = rank;
  mem.weights_bytes = weights_bytes(state, params, stage_layer_parameters_per_device(m, p, rank), dense) +
                      weights_bytes(state, expert_params, expert_params, experts);
  mem.master_weights_bytes = master_weights_bytes(state, params, dense) + master_weights_bytes(state, expert_params, experts);
  mem.gradients_bytes = gradients_bytes(state, params, dense) + gradients_bytes(state, expert_params, experts);
  mem.optimizer_states_bytes =
      optimizer_states_bytes(state, params, dense) + optimizer_states_bytes(state, expert_params, experts);
  mem.activations_bytes = activations_bytes(m, stack, w, p, rank);
  mem.logits_bytes = last_stage ? logits_bytes(m, stack, w, p) : 0.0;
  mem.sharding_buffers_bytes = sharding_buffers_bytes(m, state, dense);
  if (gathered_through_step(stack, p)) {
    // Beside whatever shard persists (FSDP's FP32 master, DeepSpeed's 16-bit
    // partition); dense parameters only, the experts keep their usual buffers.
    mem.weights_bytes += gathered_weights_bytes(state, params);
    mem.gradients_bytes += gathered_gradients_bytes(state, params) - gradients_bytes(state, params, dense);
    mem.sharding_buffers_bytes = 0;
  }
  mem.reduction_buffers_bytes = reduction_buffers_bytes(m, stack, state, dense);
  const double held = mem.weights_bytes + mem.master_weights_bytes + mem.optimizer_states_bytes + mem.reduction_buffers_bytes;
  const double gradients = mem.gradients_bytes;  // all of them, as backward ends
  // The forward and backward of one step, as three moments. By default all at
  // once: every gradient (held across steps or from earlier micro-batches),
  // the in-flight activations with the replayed layer, and the logits. Where
  // the stack frees its gradients at each step and a step runs one
  // micro-batch, the forward holds none; they peak at backward's end, beside
  // the first layer's activations (under full recompute its replay and its
  // checkpoint). Where nothing keeps the logits past the loss's backward, the
  // loss and the replayed layer are apart.
  const bool gradients_from_backward = stack.memory.gradients_freed_at_step &&
                                       p.grad_accum <= 1 && !gathered_through_step(stack, p);
  const double forward_gradients = gradients_from_backward ? 0.0 : gradients;
  spec::Plan stored_plan = p;  // a layer with nothing recomputed: what a replay re-creates
  stored_plan.recompute = spec::Recompute::none;
  const bool replays_layer =
      replays_a_layer_at_peak(p, spec::stage_layers(m.layers, p, rank) / p.virtual_stages);
  const double stored_layer =
      replays_layer || gradients_from_backward ? layer_activation_bytes(m, stack, w, stored_plan) : 0.0;
  const double replay = replays_layer ? stored_layer : 0.0;
  struct Moment {
    double gradients, activations, logits;
  };
  std::array<Moment, 3> moments{};
  int count = 0;
  if (stack.memory.loss_freed_before_recompute && replay > 0 && mem.logits_bytes > 0) {
    const double stored = mem.activations_bytes - replay;
    moments[count++] = {forward_gradients, stored, mem.logits_bytes};     // the loss
    moments[count++] = {forward_gradients, mem.activations_bytes, 0.0};  // the last layer replayed
  } else {
    moments[count++] = {forward_gradients, mem.activations_bytes, mem.logits_bytes};
  }
  if (gradients_from_backward) {
    const double first_layer = stored_layer + (replay > 0 ? layer_activation_bytes(m, stack, w, p) : 0.0);
    moments[count++] = {gradients, first_layer, 0.0};  // backward's end
  }
  mem.tensors_bytes = -1;
  for (int i = 0; i < count; ++i) {
    const Moment& at = moments[i];
    const double tensors = held + at.gradients + at.activations + at.logits + mem.sharding_buffers_bytes;
    if (tensors <= mem.tensors_bytes) continue;
    mem.tensors_bytes = tensors;
    mem.gradients_bytes = at.gradients;
    mem.activations_bytes = at.activations;
    mem.logits_bytes = at.logits;
  }
  // The other peak: the optimizer step, after backward has freed the activations.
  const double temporaries = optimizer_temporaries_bytes(stack, state, params, dense) +
                             optimizer_temporaries_bytes(stack, state, expert_params, experts);
  const double step_gradients =
      step_gradients_bytes(stack, state, params, dense) + step_gradients_bytes(stack, state, expert_params, experts);
  const double backward_tensors = mem.tensors_bytes;
  // Between backward and the step a buffered all-reduce flattens one bucket of
  // the gradients, all still held.
  const double reduction_copy = reduction_copy_bytes(m, stack, state, params, dense, rank);
  const double reduction_peak = held + gradients + reduction_copy;
  const double step_peak = held + step_gradients + temporaries;
  // DeepSpeed's flat copies (the reduction's bucket, the step's gradient shard)
  // are single allocations, each its own segment: nothing of them is split or
  // stranded, so they carry no allocator reserve.
  double flat_copies = 0;
  if (std::max(reduction_peak, step_peak) > mem.tensors_bytes) {
    mem.activations_bytes = mem.logits_bytes = mem.sharding_buffers_bytes = 0;
    mem.peak_at_optimizer_step = true;
    if (reduction_peak > step_peak) {
      mem.gradients_bytes = gradients;
      mem.reduction_buffers_bytes += reduction_copy;
      mem.tensors_bytes = reduction_peak;
      flat_copies = reduction_copy;
    } else {
      mem.gradients_bytes = step_gradients;
      mem.optimizer_temporaries_bytes = temporaries;
      mem.tensors_bytes = step_peak;
      const spec::StepTemporaries kind = stack.memory.step_temporaries;
      if (kind == spec::StepTemporaries::fp32_grad_shard || kind == spec::StepTemporaries::fp32_grad_partition)
        flat_copies = temporaries;
      // FP16_Optimizer's per-tensor casts are ordinary blocks; only their flat copy (half) is one segment.
      if (kind == spec::StepTemporaries::fp32_grad_casts) flat_copies = temporaries / 2;
    }
  }
  // What the allocator reserves beyond the tensors (a reserved counter reads
  // it), and the part of it that it cannot give back: only that decides the fit.
  const double persistent = mem.weights_bytes + mem.master_weights_bytes + mem.gradients_bytes + mem.optimizer_states_bytes;
  const double fragmenting =
      mem.tensors_bytes - flat_copies - (stack.memory.allocator_overhead_on_transients ? persistent : 0.0);
  const double reserve = stack.memory.allocator_overhead_fraction * fragmenting;
  mem.allocator_bytes = stack.memory.allocator_unreleasable() * fragmenting;
  mem.runtime_reserve_bytes = runtime_reserve_bytes(stack, p);
  mem.total_bytes = mem.tensors_bytes + mem.allocator_bytes + mem.runtime_reserve_bytes;
  mem.capacity_bytes = hw.hbm_bytes;
  // The allocator frees its cache before it lets an allocation fail.
  mem.reserved_bytes = std::max(mem.tensors_bytes + reserve,
                                std::min(cached_through_step_bytes(stack, backward_tensors, std::max(temporaries, reduction_copy)),
                                         hw.hbm_bytes - mem.runtime_reserve_bytes));
  mem.margin_bytes = mem.capacity_bytes - mem.total_bytes;
  mem.fits = mem.margin_bytes >= 0;
  return mem;
}

MemoryBreakdown memory_per_device(const spec::ModelSpec& m, const spec::HardwareSpec& hw, const spec::Stack& stack,
                                  const spec::Workload& w, const spec::Plan& p) {
  const CandidateRanks candidates = candidate_ranks(p);
  std::array<MemoryBreakdown, 3> stages;  // in the candidates' order: the first rank, then the last where PP > 1
  for (int i = 0; i < candidates.count; ++i) stages[i] = stage_memory(m, hw, stack, w, p, candidates.ranks[i]);
  const auto of_rank = [&](int rank) -> const MemoryBreakdown& {
    for (int i = 1; i < candidates.count; ++i)
      if (candidates.ranks[i] == rank) return stages[i];
    return stages[0];
  };
  MemoryBreakdown heaviest = of_rank(heaviest_rank(p, [&](int rank) { return of_rank(rank).total_bytes; }));
  const MemoryBreakdown& first = stages[0];
  const MemoryBreakdown& last = of_rank(p.pp - 1);
  heaviest.first_stage_total_bytes = first.total_bytes;
  heaviest.last_stage = last.stage;
  heaviest.last_stage_total_bytes = last.total_bytes;
  return heaviest;
}

const char* MemoryBreakdown::largest_component() const {
  const MemoryPart* best = &kMemoryParts[0];
  for (const MemoryPart& part : kMemoryParts)
    if (this->*part.bytes > this->*best->bytes) best = &part;
  return best->label;
}

}  // namespace trainplan::cost
