// Plan: one way to lay a job out. dp, grad_accum and (when 0) etp are derived
// from the others and the hardware by cost::complete_plan, which checks them.
// Ranks are ordered as Megatron-Core's default "tp-cp-ep-dp-pp": TP innermost,
// then CP, DP, PP; experts lay out their own grid ETP x EP x expert-DP x PP.
#pragma once
#include <algorithm>
#include <string>
#include <string_view>

namespace trainplan::spec {

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
  // The embedding and the LM head each take one layer's slot in the pipeline
  // split: PP divides layers + 2, and the first and last stage hold one layer
  // fewer (Megatron-Core --account-for-embedding/loss-in-pipeline-split,
  // DeepSpeed partition_method 'type:transformer|embedding'). Interleaved,
  // PP x virtual stages divides layers + 2 and the slots fall in the first
  // rank's first chunk and the last rank's last chunk (Megatron-Core
  // transformer_block.py@d98e8a64 get_num_layers_to_build).
  bool edge_layer_slots = false;
  int micro_batch = 1;       // sequences per micro-batch per DP replica
  int grad_accum = 1;        // micro-batches per step per DP replica
  int zero = 0;              // ZeRO stage 0..3
  Recompute recompute = Recompute::none;
  // With full recompute: how many transformer layers of each model chunk (a
  // pipeline rank's stage, or each of its virtual stages) are recomputed, the
  // chunk's first ones, the rest keeping every activation (Megatron-Core
  // --recompute-method block --recompute-num-layers: NVIDIA/Megatron-LM@d98e8a64
  // megatron/core/recompute.py:167-181 checkpoints layer l of each block while
  // l < recompute_num_layers); 0: every layer.
  int recompute_layers = 0;
  bool overlap_dp_comm = true;   // DP gradient collectives hidden behind backward compute
  bool overlap_tp_comm = false;  // TP collectives overlapped with compute (async TP)
};

// The most pipeline stages, and model chunks per rank, a plan may name: each
// holds at least one layer and a model has at most 10000 (spec/plausible.h),
// and so their product stays far inside an int.
inline constexpr int kMaxPipelineStages = 10000;
inline constexpr int kMaxVirtualStages = 10000;

// Expert tensor-parallel degree: etp, or TP's where it is 0.
inline int expert_tp(const Plan& p) { return p.etp > 0 ? p.etp : p.tp; }

// Data-parallel replicas of the experts: tp * cp * dp / (etp * ep).
inline int expert_dp(const Plan& p) {
  const long grid = long(expert_tp(p)) * p.ep;
  return int(std::max(1L, long(p.tp) * p.cp * p.dp / grid));
}

// Layer slots per pipeline stage: layers / PP, or its ceiling for uneven
// stages; with edge_layer_slots the embedding and the head take a slot each.
// Every stage is timed as if it held this many (a middle stage's layers).
double layers_per_stage(int layers, const Plan& plan);
// Transformer layers on pipeline rank `rank`: layers_per_stage, less the slot
// the embedding (rank 0) or the head (rank PP - 1) takes under edge_layer_slots.
double stage_layers(int layers, const Plan& plan, int rank);
// Whether the first and last stage give a slot to the embedding and the head.
inline bool edge_slots_active(const Plan& p) { return p.edge_layer_slots && p.pp > 1; }

// Transformer layers of the busiest model chunk: its stage's slots over the
// virtual stages (every stage is timed as the busiest).
double chunk_layers(int layers, const Plan& plan);
// Layers of a chunk of `chunk_layers` that full recompute re-runs: all of
// them, or recompute_layers where fewer; 0 without full recompute.
double recomputed_layers(const Plan& plan, double chunk_layers);
// That share of the chunk (0..1): what the recompute's time and the chunk's
// checkpoints scale with.
double recomputed_share(const Plan& plan, double chunk_layers);
// The busiest chunk's share.
double recomputed_share(int layers, const Plan& plan);

const char* to_string(Recompute recompute);
// The mode as a person reads it: "full", "full, first 5 layers of each
// chunk", or in a table's cell "full, first 5".
std::string recompute_text(const Plan& plan, bool spelled_out = true);
bool parse_recompute(std::string_view text, Recompute& out);

}  // namespace trainplan::spec
