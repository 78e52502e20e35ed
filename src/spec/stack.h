// Stack: the training software that runs a Plan (Megatron-LM, NeMo, NeuronX
// Distributed, DeepSpeed, an FSDP stack), read from stacks/<name>.json. Plain
// data: what the stack offers (ZeRO stages, schedules, recompute modes) and how
// it behaves where stacks differ; every figure in the file carries its source.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/stack_parts.h"
#include "spec/workload.h"

namespace trainplan::spec {

// The releases of one software line (NeuronX Distributed, Intel Gaudi's
// Megatron-DeepSpeed) a stack file describes: `--stack LINE@VERSION` picks the
// file whose range holds VERSION. Not inherited through "extends".
struct ReleaseRange {
  std::string line;      // empty: the stack belongs to no line
  std::string software;  // whose version numbers they are ("Neuron SDK")
  std::string from, to;  // dotted numbers, both inclusive ("2.20" holds 2.20.x)
};

// Whether `version` ("2.21.0") lies in [from, to], each bound read to its own depth.
bool release_holds(const ReleaseRange& range, const std::string& version);
// Whether `text` is a dotted release number ("2.21", "1.18.0").
bool is_release_number(const std::string& text);

struct Stack;

// One entry of a stack file's "by_zero_stage": the fields it states for plans
// at that ZeRO stage, where one stack runs a different config per stage
// (optimum-habana's CI ships a DeepSpeed config per stage). Empty: none.
struct ZeroStageFields {
  std::vector<std::string> keys;        // the file's field names the entry states
  std::shared_ptr<const Stack> values;  // the stack read with the entry's fields; only `keys` are taken from it
};

struct Stack {
  std::string name;
  std::string source_file;
  std::string description;
  std::string versions;
  ReleaseRange releases;
  // The stack files this one "extends", nearest first: where it has no
  // calibration of its own, theirs serve before the family's (spec/calibration_lookup.h).
  std::vector<std::string> bases;

  StackCapabilities capabilities;    // what a plan may ask of it
  StackCompute compute;              // how its kernels and host run the step
  StackMemory memory;                // what it keeps on a device
  StackCommunication communication;  // how it reduces, gathers, dispatches and hands off
  // Behaviour that differs by ZeRO stage (index 0..3), as the file's
  // "by_zero_stage" states it; spec::at_zero_stage applies it. The fields above
  // are the stack as a plan at a stage without an entry sees it.
  std::array<ZeroStageFields, 4> by_zero_stage;

  // Whether a plan in `precision` runs as that autocast (its mixed BF16 only).
  bool fp32_autocast(Precision precision) const {
    return compute.mixed_precision_autocast && precision == Precision::mixed_bf16;
  }
  double attention_speedup(const std::string& family) const;
  bool offers_zero(int stage) const;
  bool offers_recompute(Recompute mode) const;
  bool offers_pipeline(int pp, int virtual_stages) const;
};

// The stack as a plan at ZeRO stage `stage` sees it: `stack` with the fields
// its by_zero_stage entry for that stage states taken from the entry. The one
// place a stage's entry is applied (cost::Evaluator, the search's defaults and
// the launch export call it); resolve from the loaded stack, never from a view.
Stack at_zero_stage(const Stack& stack, int stage);
// Whether a by_zero_stage entry may state the stack field `key`, and the names of
// those that may (what a ZeRO config sets per stage: overlap, buckets, reduction,
// sub-groups); the rest describe the software whatever the stage.
bool varies_by_zero_stage(const std::string& key);
std::string zero_stage_fields();

// Why this stack cannot run the plan, or empty when it can.
std::string stack_refusal(const Stack& stack, const Plan& plan);

// Whether the stack's selective recompute wraps the whole MLP, which then keeps
// only its input and runs forward again in backward: NxD's TP/PP example at
// 8,192 tokens, and NxD's MoE layers wherever it wraps its CoreAttention module
// (spec::SelectiveRecompute).
bool selective_wraps_mlp(const Stack& stack, const ModelSpec& model);
// Tokens the busiest expert rank computes, over the mean routed load: the routed
// tokens at `imbalance` (ModelSpec::routed_load), or where the stack runs every
// expert's capacity slots (StackCompute::experts_compute_capacity), the capacity.
double expert_load(const Stack& stack, const ModelSpec& model, double imbalance);

const char* to_string(GradAccumulation mode);
const char* to_string(AttentionKernel kernel);
const char* to_string(ContextParallel mode);

}  // namespace trainplan::spec
