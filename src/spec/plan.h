// Plan: one way to lay a job out. dp, grad_accum and (when 0) etp are derived
// from the others and the hardware by cost::complete_plan, which checks them.
// Ranks are ordered as Megatron-Core's default "tp-cp-ep-dp-pp": TP innermost,
// then CP, DP, PP; experts lay out their own grid ETP x EP x expert-DP x PP.
#pragma once
#include <algorithm>
#include <string_view>

namespace tp::spec {

enum class Recompute { none, selective, full };

struct Plan {
  int instances = 1;
  int tp = 1;
  int pp = 1;
  int dp = 1;                // devices / (tp * pp * cp)
  int cp = 1;                // context parallel: each sequence split over cp ranks (load-balanced causal chunks)
  // Expert parallel: the routed experts split over ep ranks. Megatron-Core's
  // rule (NVIDIA/Megatron-LM@d98e8a64 megatron/core/parallel_state.py,
  // initialize_model_parallel): the world divides by etp x ep x pp, and what
  // is left is the experts' data-parallel size; so etp x ep divides tp x cp x dp.
  int ep = 1;
  int etp = 0;               // expert tensor parallel; 0: TP's degree (Megatron-Core's default, arguments.py)
  bool sp = false;           // sequence parallel inside the TP group
  int virtual_stages = 1;    // interleaved 1F1B chunks per pipeline rank
  bool uneven_stages = false;  // PP need not divide the layers: stages hold ceil(layers / PP) or fewer (no interleaving)
  int micro_batch = 1;       // sequences per micro-batch per DP replica
  int grad_accum = 1;        // micro-batches per step per DP replica
  int zero = 0;              // ZeRO stage 0..3
  Recompute recompute = Recompute::none;
  bool overlap_dp_comm = true;   // DP gradient collectives hidden behind backward compute
  bool overlap_tp_comm = false;  // TP collectives overlapped with compute (async TP)
};

// The most pipeline stages, and model chunks per rank, a plan may name: each
// holds at least one layer and a model has at most 10000 (spec/plausible.h),
// and so their product stays far inside an int.
inline constexpr int kMaxPipelineStages = 10000;
inline constexpr int kMaxVirtualStages = 10000;

// Data-parallel replicas of the experts: tp * cp * dp / (etp * ep), etp 0 read as TP.
inline int expert_dp(const Plan& p) {
  const long grid = long(p.etp > 0 ? p.etp : p.tp) * p.ep;
  return int(std::max(1L, long(p.tp) * p.cp * p.dp / grid));
}

// Transformer layers on the busiest pipeline stage: layers / PP, or its ceiling
// for uneven stages.
double layers_per_stage(int layers, const Plan& plan);

const char* to_string(Recompute recompute);
bool parse_recompute(std::string_view text, Recompute& out);

}  // namespace tp::spec
