// PlanSpace: every candidate Plan for one model, hardware and workload as a
// mixed-radix index 0..size()-1, so threads split it by ranges and no list of
// plans is ever built. TP runs over divisors of the instance that respect heads
// and kv heads; PP over divisors of the layers; the Stack removes what it does
// not offer (ZeRO stages, schedules, recompute modes, SP, async TP, CP, EP) and
// fixes DP overlap to its behaviour at each ZeRO stage; constraints narrow any axis. CP runs over
// powers of two whose chunks (seq / 2 CP; seq / CP for an all-to-all) keep at least min_cp_chunk tokens;
// EP over divisors of a MoE model's experts, expert TP over 1 and TP.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::search {

// An empty optional or list leaves the axis free.
struct SpaceConstraints {
  std::vector<int> instances{1};
  std::optional<int> tp, pp, virtual_stages, micro_batch, zero, cp, ep, etp;
  std::optional<bool> sp, overlap_dp, overlap_tp;
  std::optional<spec::Recompute> recompute;
  // Micro-batches tried: every divisor of the global batch (a batch below 2^31
  // has at most 1,600; evaluating a plan costs under a microsecond).
  // Pruning: a CP rank's two chunks shorter than this leave its attention too
  // small to hide the K/V ring behind, and CP exists for long sequences.
  int min_cp_chunk = 2048;
};

class PlanSpace {
 public:
  // Throws spec::SpecError when the constraints leave an axis empty (e.g. --tp 3
  // on a model whose heads it does not divide).
  PlanSpace(const spec::ModelSpec& model, const spec::HardwareSpec& hardware, const spec::Stack& stack,
            const spec::Workload& workload, const SpaceConstraints& constraints);

  std::uint64_t size() const { return size_; }
  // The index-th plan (dp and grad_accum left for cost::complete_plan). Allocation-free.
  spec::Plan at(std::uint64_t index) const;
  // Where the stack runs Megatron-Core's block method, a plan with full
  // recompute may recompute only the first layers of each chunk: the search
  // takes the fewest that fit (ranker.cpp), so "full" covers both.
  bool tries_block_recompute() const { return block_recompute_; }
  // Layers of the plan's busiest model chunk.
  double chunk_layers(const spec::Plan& plan) const;
  const std::vector<int>& instance_counts() const { return instances_; }

 private:
  struct TpChoice { int tp; bool sp, overlap_tp; int etp; };  // etp 0: TP's degree
  struct SplitChoice { int cp, ep; };
  struct PpChoice { int pp, virtual_stages; bool edge_layer_slots; };
  std::vector<int> instances_;
  std::vector<TpChoice> tp_;
  std::vector<PpChoice> pp_;
  std::vector<SplitChoice> split_;
  std::vector<int> micro_batch_, zero_;
  std::vector<spec::Recompute> recompute_;
  int model_layers_ = 0;
  bool block_recompute_ = false;
  // DP overlap per ZeRO stage: the user's, else the stack's behaviour at that stage (spec::at_zero_stage).
  std::array<bool, 4> overlap_dp_by_zero_{};
  std::uint64_t size_ = 0;
};

}  // namespace trainplan::search
