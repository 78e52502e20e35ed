// Plan: one way to lay a job out. dp and grad_accum are derived from the
// others and the hardware (see derive()); validity is checked by cost::check_plan.
#pragma once
#include <string_view>

namespace tp::spec {

enum class Recompute { none, selective, full };

struct Plan {
  int instances = 1;
  int tp = 1;
  int pp = 1;
  int dp = 1;                // devices / (tp * pp)
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

// Transformer layers on the busiest pipeline stage: layers / PP, or its ceiling
// for uneven stages.
double layers_per_stage(int layers, const Plan& plan);

const char* to_string(Recompute recompute);
bool parse_recompute(std::string_view text, Recompute& out);

}  // namespace tp::spec
