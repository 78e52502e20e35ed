// A scenario from the user's options: the model, hardware, stack, calibration
// and workload they name, with what they left out defaulted from the model
// (sequence length), the hardware (stack) and the stack (precision, recompute),
// each default said as an assumption. Shared by every planning command;
// registering the flags is the cli's, the figures are cost/'s.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "spec/calibration.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/optimizer_states.h"
#include "spec/plan.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::app {

struct ScenarioOptions {
  std::string model = "llama2-7b";
  std::string hardware = "trn1.32xlarge";  // or "host": this CPU, from --calibration
  std::string stack;        // empty: the hardware's default stack (named in the output as an assumption)
  std::string calibration;  // empty: looked up by (hardware, stack) (see spec/calibration_lookup.h)
  int seq_len = 0;  // 0: kDefaultSeqLen, or the model's positions where it has fewer
  long global_batch = 1024;
  double tokens = 0;  // 0: 20 tokens per parameter (Hoffmann et al. 2022)
  std::string precision;  // empty: the stack's default_precision
  double expert_imbalance = 1.0;  // spec::Workload::expert_imbalance
  int document_tokens = 0;        // spec::Workload::document_tokens
  std::string format = "text";
  // An architecture read from a launcher config (--from-config), used instead of `model` when set.
  std::optional<spec::ModelSpec> model_spec;
  // What a launcher config states that is priced otherwise (exporting::LaunchJob::notes), said as assumptions.
  std::vector<std::string> config_notes;
  // FP8 parameters as a launcher config states them (Megatron-LM --fp8-param-gather, NeMo
  // model.fp8_params), priced over the stack's fp8_param_gather; unset: the stack's.
  std::optional<bool> fp8_param_gather;
  // The optimizer states a NeMo file's optimizer keeps, in bytes per parameter, priced over the
  // stack's (Apex DistributedFusedAdam by its optim.dtype, Megatron-Core's distributed optimizer);
  // unset: the stack's.
  std::optional<spec::OptimizerStates> optimizer_states;
};

struct Scenario {
  spec::ModelSpec model;
  spec::HardwareSpec hardware;
  spec::Stack stack;
  spec::Calibration calibration;
  std::string calibration_file;  // the file that served, or "built-in default"
  spec::Workload workload;
  std::vector<std::string> assumptions;  // what was chosen for the user: the stack, the calibration
};

inline constexpr int kDefaultSeqLen = 4096;
// The workload the options name; what the user left out comes from the model
// (sequence length) and the stack (precision), each said in `assumptions`.
spec::Workload load_workload(const ScenarioOptions& options, const spec::ModelSpec& model, const spec::Stack& stack,
                             std::vector<std::string>& assumptions);
Scenario load_scenario(const ScenarioOptions& options, const std::string& hardware_name);
// Footer lines for a table: the stack and the calibration file that served,
// and every assumption made for the user.
std::vector<std::string> scenario_notes(const Scenario& scenario);

struct PlanOptions {
  int instances = 1;
  int tp = 1, pp = 1, virtual_stages = 1, micro_batch = 1, zero = 1;
  int cp = 1, ep = 1, etp = 0;  // etp 0: TP's degree
  bool sp = false, no_overlap_dp = false, overlap_tp = false, uneven_stages = false, edge_layer_slots = false;
  bool no_sp = false;  // neither sp nor no_sp: the stack's default (sequence_parallel_default) at TP > 1
  std::string recompute;  // empty: default_recompute(stack)
  int recompute_layers = 0;  // with full recompute: the layers per model chunk re-run; 0 all
};
// Selective recompute where the stack offers it, else none, else its first mode.
spec::Recompute default_recompute(const spec::Stack& stack);
// The plan the options name, recompute and SP defaulted from the stack (and said in `assumptions`).
spec::Plan to_plan(const PlanOptions& options, const spec::Stack& stack, std::vector<std::string>* assumptions = nullptr);

}  // namespace trainplan::app
