#include "app/scenario.h"

#include <cstdio>
#include <filesystem>

#include "app/search_query.h"
#include "app/stack_choice.h"
#include "spec/calibration_io.h"
#include "spec/calibration_lookup.h"
#include "calib/host_hardware.h"
#include "cost/layer_compute.h"
#include "spec/error.h"
#include "spec/precision_support.h"
#include "spec/load.h"

namespace trainplan::app {

spec::Workload load_workload(const ScenarioOptions& o, const spec::ModelSpec& model, const spec::Stack& stack,
                             std::vector<std::string>& assumptions) {
  spec::Workload w;
  w.seq_len = o.seq_len;
  if (w.seq_len == 0) {
    w.seq_len = kDefaultSeqLen;
    if (model.max_positions > 0 && model.max_positions < kDefaultSeqLen) {
      w.seq_len = model.max_positions;
      assumptions.push_back("sequence length " + std::to_string(w.seq_len) + ", " + model.name +
                            "'s positions (the default " + std::to_string(kDefaultSeqLen) +
                            " is past them); --seq-len sets it");
    }
  }
  w.global_batch_seqs = o.global_batch;
  w.tokens_to_train = o.tokens > 0 ? o.tokens : 20.0 * double(model.total_parameters());
  if (o.precision.empty()) {
    w.precision = stack.capabilities.default_precision;
    assumptions.push_back(std::string("precision ") + spec::to_string(w.precision) + ", stack " + stack.name +
                          "'s default; --precision names another");
  } else {
    spec::parse_precision(o.precision, w.precision);
  }
  if (!(o.expert_imbalance >= 1 && o.expert_imbalance <= 64))
    throw spec::SpecError("--expert-imbalance", "", "expected a number from 1 (balanced) to 64, got " +
                                                        std::to_string(o.expert_imbalance));
  w.expert_imbalance = o.expert_imbalance;
  if (o.document_tokens > w.seq_len)
    throw spec::SpecError("--document-tokens", "", "expected at most the sequence length (" +
                                                       std::to_string(w.seq_len) + " tokens), got " +
                                                       std::to_string(o.document_tokens));
  w.document_tokens = o.document_tokens;
  return w;
}

namespace {

// The stack named for this hardware (`named`, from --stack), or the hardware's default, said as an assumption.
spec::Stack choose_stack(const std::string& named, const spec::HardwareSpec& hw, std::vector<std::string>& assumptions) {
  if (!named.empty()) {
    spec::Stack stack = spec::load_stack(named);
    if (named.find('@') != std::string::npos && !stack.releases.line.empty())
      assumptions.push_back("stack " + named + " is " + stack.name + " (" + stack.releases.software + " " +
                            stack.releases.from + "-" + stack.releases.to + ")");
    return stack;
  }
  if (hw.default_stack.empty())
    throw spec::SpecError(hw.source_file, "$.default_stack",
                          "a default stack for " + hw.name + ", or --stack NAME (one of `trainplan list`'s stacks)");
  spec::Stack stack = spec::load_stack(hw.default_stack);
  std::string others = "--stack names another";
  // A default on a release line prices one generation; say which others the line has, as a user
  // running a later SDK must pick theirs (their efficiencies differ by tens of percent).
  if (!stack.releases.line.empty()) {
    const std::string ranges = spec::release_ranges_text(spec::stacks_of_line(stack.releases.line));
    others = "its line's " + stack.releases.software + " releases: " + ranges + "; --stack " + stack.releases.line +
             "@RELEASE prices the one you run, --stack names another";
  }
  assumptions.push_back("stack " + stack.name + " (" + stack.versions + "), " + hw.name + "'s default; " + others);
  return stack;
}

// FP8 parameters as the job states them, over the stack's (ScenarioOptions::fp8_param_gather):
// cost prices them as FP8 data and its transpose, no BF16 copy (cost/memory/state_bytes.cpp).
// They leave no BF16 weight for FP32 remainders to complete, so a stack that keeps Apex's
// remainders keeps whole FP32 masters with them (NVIDIA/NeMo@e938df32
// nemo/collections/nlp/models/language_modeling/megatron_base_model.py:804-805: with
// fp8_params, store_params = True, checked before store_param_remainders at :808-810).
void apply_fp8_params(spec::Stack& stack, bool on) {
  stack.memory.fp8_param_gather = on;
  if (on && stack.memory.master_weight_bytes == 2) stack.memory.master_weight_bytes = 4;
}

}  // namespace

Scenario load_scenario(const ScenarioOptions& o, const std::string& hardware_name) {
  Scenario s;
  s.model = o.model_spec ? *o.model_spec : spec::load_model(o.model);
  if (hardware_name == "host") {
    // This CPU as an accelerator: peak and bandwidth come from its measured calibration.
    if (o.calibration.empty())
      throw spec::SpecError("--hardware host", "", "expected --calibration FILE from `trainplan calibrate kernels`");
    const spec::CalibrationFile file = spec::load_calibration(o.calibration);
    s.hardware = calib::host_hardware(file);
    s.calibration = file.calibration;
    s.calibration_file = o.calibration;
    s.stack = o.stack.empty() ? spec::Stack{} : spec::load_stack(o.stack);
    if (o.stack.empty()) {
      s.stack.name = "generic";
      s.assumptions.push_back("stack generic (separate gradient-accumulation pass, flash attention, FP32 states)");
    }
  } else {
    s.hardware = spec::load_hardware(hardware_name);
    const std::vector<std::string> hardware_list = split_hardware(o.hardware);
    s.stack = choose_stack(stack_option_for(o.stack, hardware_name, hardware_list), s.hardware, s.assumptions);
    if (const std::string why = spec::runtime_refusal(s.hardware, s.stack); !why.empty())
      throw spec::SpecError("--stack " + s.stack.name, "",
                            why + (hardware_list.size() > 1 ? "; over several instance types, --stack HARDWARE=STACK "
                                                              "entries name one per hardware"
                                                            : ""));
    if (!o.calibration.empty()) {
      s.calibration = spec::load_calibration(o.calibration).calibration;
      spec::check_measured_bands(s.calibration, s.hardware, o.calibration);
      s.calibration_file = o.calibration;
    } else {
      const spec::CalibrationChoice choice = spec::find_calibration(s.hardware, s.stack.name, s.stack.bases);
      s.calibration = choice.calibration;
      s.calibration_file = choice.file;
      if (!choice.exact)
        s.assumptions.push_back("no calibration fitted for (" + s.hardware.name + ", " + s.stack.name + "); " +
                                choice.file + " serves (" + s.calibration.description + ")");
    }
  }
  if (o.optimizer_states) {  // as the launcher config's optimizer keeps them (apply_launch_config)
    s.stack.memory.optimizer_state_bytes = o.optimizer_states->moment_bytes;
    s.stack.memory.master_weight_bytes = o.optimizer_states->master_bytes;
  }
  if (o.fp8_param_gather) apply_fp8_params(s.stack, *o.fp8_param_gather);
  s.workload = load_workload(o, s.model, s.stack, s.assumptions);
  for (const std::string& note : o.config_notes) s.assumptions.push_back(note);
  if (s.model.moe()) {
    char load[32];
    std::snprintf(load, sizeof load, "%.2f", s.workload.expert_imbalance);
    s.assumptions.push_back(std::string("expert load imbalance ") + load +
                            " (busiest expert-parallel rank's routed tokens over the mean" +
                            (s.model.capacity_factor > 0 ? ", capped by the capacity factor" : "") +
                            "); --expert-imbalance sets it");
    if (s.stack.communication.dispatch_once_per_instance)
      s.assumptions.push_back("stack " + s.stack.name + " sends a token across instances once per instance its experts "
                              "reach (expert_dispatch: DeepEP / HybridEP)");
    if (const double share = s.stack.communication.ep_a2a_hidden_share; share > 0) {
      char percent[32];
      std::snprintf(percent, sizeof percent, "%.4g%%", 100 * share);
      s.assumptions.push_back("stack " + s.stack.name + " hides " + percent +
                              " of each paired pass's EP all-to-all behind another micro-batch's compute "
                              "(ep_a2a_overlap, measured on another layout), where Megatron-Core runs the overlap: "
                              "EP > 1, no full recompute, PP 1 or virtual stages");
    }
  }
  if (const double speedup = s.stack.attention_speedup(s.hardware.family); speedup != 1.0) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.2f", speedup);
    s.assumptions.push_back("stack " + s.stack.name + "'s flash attention on " + s.hardware.family + " runs at " + factor +
                            "x the FA2-class kernels the calibration's attention factor measures (attention_speedup)");
  }
  if (cost::attention_misses_alignment(s.model, s.hardware, s.stack, s.workload.precision))
    s.assumptions.push_back("head dimension " + std::to_string(s.model.qk_head_dim()) + " misses " + s.hardware.name +
                            "'s " + std::to_string(int(s.hardware.matrix_alignment_bytes)) +
                            "-byte matrix alignment: stack " + s.stack.name +
                            "'s unfused attention runs its batched GEMMs at the FP32 peak (matrix_alignment_bytes)");
  if (s.workload.document_tokens > 0) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%",
                  100 * cost::attention_score_fraction(s.model, s.workload, s.stack.compute.attention));
    s.assumptions.push_back(
        "packed documents of " + std::to_string(s.workload.document_tokens) +
        " tokens on average, attention masked to each: " +
        (s.stack.compute.attention == spec::AttentionKernel::flash
             ? std::string("the flash kernel computes ") + share + " of each score matrix (--document-tokens)"
             : "stack " + s.stack.name + "'s unfused attention computes the whole score matrix all the same"));
  }
  if (s.model.sliding_window_tokens > 0 && s.model.sliding_window_tokens < s.workload.seq_len) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "a sliding window of %d tokens on %.0f%% of the layers: %s computes %.1f%% of the score matrices",
                  s.model.sliding_window_tokens, 100 * s.model.sliding_window_layer_share,
                  s.stack.compute.attention == spec::AttentionKernel::flash ? "the flash kernel" : "unfused attention",
                  100 * cost::attention_score_fraction(s.model, s.workload, s.stack.compute.attention));
    s.assumptions.push_back(line);
  }
  for (const std::string& what : s.model.unpriced) s.assumptions.push_back(s.model.name + " states " + what + ": not priced");
  if (const std::string why = spec::precision_refusal(s.hardware, s.stack, s.workload.precision); !why.empty())
    throw spec::SpecError("--precision " + std::string(spec::to_string(s.workload.precision)), "", why);
  return s;
}

std::vector<std::string> scenario_notes(const Scenario& s) {
  std::vector<std::string> notes{s.hardware.name + ": stack " + s.stack.name + ", calibration " + s.calibration_file};
  for (const std::string& a : s.assumptions) notes.push_back("assumption: " + a);
  return notes;
}

spec::Recompute default_recompute(const spec::Stack& stack) {
  for (spec::Recompute mode : {spec::Recompute::selective, spec::Recompute::none})
    if (stack.offers_recompute(mode)) return mode;
  return stack.capabilities.recompute_modes.front();
}

spec::Plan to_plan(const PlanOptions& o, const spec::Stack& stack, std::vector<std::string>* assumptions) {
  spec::Plan p;
  p.instances = o.instances;
  p.tp = o.tp;
  p.pp = o.pp;
  p.virtual_stages = o.virtual_stages;
  p.uneven_stages = o.uneven_stages;
  p.edge_layer_slots = o.edge_layer_slots;
  p.sp = o.sp || (!o.no_sp && o.tp > 1 && stack.capabilities.sequence_parallel && stack.capabilities.sequence_parallel_default);
  if (assumptions && p.sp && !o.sp)
    assumptions->push_back("SP on: stack " + stack.name + "'s client runs sequence parallelism with TP > 1 by default "
                           "(stacks/" + stack.name + ".json sequence_parallel_default); --no-sp turns it off");
  p.cp = o.cp;
  p.ep = o.ep;
  p.etp = o.etp;
  p.micro_batch = o.micro_batch;
  p.zero = o.zero;
  if (o.recompute.empty()) {
    p.recompute = default_recompute(stack);
    if (assumptions && p.recompute != spec::Recompute::selective)
      assumptions->push_back(std::string("recompute ") + spec::to_string(p.recompute) + ": stack " + stack.name +
                             " offers no selective recompute; --recompute names another");
  } else {
    spec::parse_recompute(o.recompute, p.recompute);
  }
  p.recompute_layers = o.recompute_layers;
  p.overlap_dp_comm = !o.no_overlap_dp;
  p.overlap_tp_comm = o.overlap_tp;
  return p;
}

}  // namespace trainplan::app
