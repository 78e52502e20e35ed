// Whether a Plan can run at all for this model, hardware and workload, before
// any timing: divisibility of heads, layers, devices and batch. complete_plan
// derives dp and grad_accum. Memory fit is judged by evaluate() (it needs the
// memory model); its reason is PlanProblem::out_of_memory.
#pragma once
#include <string>

#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::cost {

enum class PlanProblem {
  none,
  non_positive,               // a degree or size below 1, ZeRO outside 0..3
  tp_not_dividing_heads,
  tp_not_matching_kv_heads,   // tp must divide kv heads, or kv heads divide tp (replicated)
  tp_not_dividing_instance,   // TP stays inside one instance
  pp_not_dividing_layers,     // layers % (pp * virtual_stages)
  devices_not_dividing,       // instances * devices_per_instance % (tp * pp)
  batch_not_dividing,         // global batch % (dp * micro_batch)
  interleave_needs_pp,        // virtual stages need pp > 1 and micro-batches % pp == 0
  sp_without_tp,
  seq_exceeds_positions,      // learned position embeddings end at max_positions
  cp_not_dividing_seq,        // seq_len % (2 cp): two load-balanced chunks per CP rank (seq_len % cp for all-to-all)
  ep_not_dividing_experts,    // experts % ep (ep > 1 or etp != tp on a dense model too)
  expert_grid_not_dividing,   // tp * cp * dp % (etp * ep); etp divides an instance
  moe_tp_needs_sp,            // MoE with TP > 1 runs with sequence parallelism
  cp_not_dividing_heads,      // an all-to-all CP exchange splits each TP rank's heads and kv heads over CP
  cp_beside_tp_or_pp,         // the stack runs CP > 1 only at TP 1 and PP 1
  cp_needs_all_kv_heads,      // the stack runs CP > 1 only with as many kv heads as heads
  partial_recompute_not_full, // recompute_layers > 0 names layers of a full recompute
  beyond_limits,              // more devices or micro-batches than the model is built for (see limits below)
  out_of_memory,
  count_
};

constexpr int plan_problem_count = int(PlanProblem::count_);

// Bounds that keep every evaluation's time and memory bounded: 2^24 devices
// (a thousand times the largest published cluster) and 2^20 micro-batches
// per step per replica. Plans beyond them are refused as beyond_limits.
inline constexpr long kMaxDevices = 1L << 24;
inline constexpr long kMaxMicroBatches = 1L << 20;

// The tokens a sequence's length must be a multiple of under CP `cp` with this
// exchange: 2 x CP where each rank holds two load-balanced chunks (the ring and
// the all-gather split the causal mask so), CP where an all-to-all gives each
// rank s / CP tokens and then the whole sequence for heads / CP.
long cp_sequence_multiple(spec::ContextParallel exchange, int cp);

// Fills plan.dp and plan.grad_accum from the others; returns the first problem
// found. `exchange`, the stack's CP exchange, sets the sequence rule above.
PlanProblem complete_plan(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                          const spec::Workload& workload, spec::Plan& plan,
                          spec::ContextParallel exchange = spec::ContextParallel::ring);

// What the stack's context parallelism needs beyond complete_plan: where the
// stack says so, TP 1 and PP 1 and as many kv heads as heads (DeepSpeed-Ulysses
// in microsoft's Megatron-DeepSpeed); for an all-to-all of heads (DeepSpeed-Ulysses,
// TE "a2a"), CP dividing each TP rank's heads and kv heads, which it splits.
PlanProblem check_context_parallel(const spec::ModelSpec& model, const spec::Stack& stack, const spec::Plan& plan);

// A short phrase for tables ("TP does not divide the heads").
const char* to_string(PlanProblem problem);
// A full sentence with the numbers, for refusing one plan (`exchange`: the
// stack's CP exchange, which sets the sequence rule).
std::string explain(PlanProblem problem, const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                    const spec::Workload& workload, const spec::Plan& plan,
                    spec::ContextParallel exchange = spec::ContextParallel::ring);

}  // namespace trainplan::cost
