#include "cli/scenario.h"

#include "cli/validators.h"

#include <cstdio>
#include <filesystem>

#include "spec/calibration_io.h"
#include "spec/calibration_lookup.h"
#include "calib/host_hardware.h"
#include "cost/layer_compute.h"
#include "spec/error.h"
#include "spec/precision_support.h"
#include "spec/load.h"

namespace tp::cli {

void add_scenario_options(CLI::App* c, ScenarioOptions& o, bool multiple_hardware) {
  c->add_option("-m,--model", o.model, "Model: a name from `trainplan list`, a models/*.json path, or a Hugging Face config.json")
      ->capture_default_str();
  c->add_option("-H,--hardware", o.hardware,
                multiple_hardware ? "Instance types, comma-separated: names from `trainplan list` or descriptor paths"
                                  : "Instance type: a name from `trainplan list`, a hardware/*.json path, or host (this CPU, with --calibration)")
      ->capture_default_str();
  c->add_option("--stack", o.stack,
                "Training software: a name from `trainplan list` (megatron-lm, nemo, neuronx-distributed, ...) or a "
                "stacks/*.json path; default: the hardware's default stack");
  c->add_option("--calibration", o.calibration,
                "Calibration file; default: data/calibration/<hardware>+<stack>.json, <family>+<stack>.json, "
                "<family>.json, <hardware>.json, the first that exists, else the assumed default");
  c->add_option("-s,--seq-len", o.seq_len,
                "Sequence length in tokens; default " + std::to_string(kDefaultSeqLen) +
                    ", or the model's positions where it has fewer (BERT: 512)")
      ->check(positive_whole());
  c->add_option("-b,--global-batch", o.global_batch, "Global batch in sequences per optimizer step")
      ->capture_default_str()
      ->check(positive_whole());
  c->add_option("--tokens", o.tokens, "Tokens to train; default 20 per parameter (Chinchilla-optimal)")
      ->check(non_negative());
  c->add_option("--precision", o.precision,
                "mixed-bf16 (FP32 master weights and Adam), bf16-sr (BF16 with stochastic rounding), fp32, fp8 "
                "(mixed-bf16 with FP8 GEMMs in the transformer layers: hardware with an FP8 peak, a stack that offers it), "
                "or fp32-bf16-matmul (an FP32 model whose matmuls the compiler casts to BF16: neuronx-cc --auto-cast matmult); "
                "default: the stack's (bf16-sr under the Neuron stacks, mixed-bf16 elsewhere)")
      ->check(CLI::IsMember({"mixed-bf16", "bf16-sr", "fp32", "fp8", "fp32-bf16-matmul"}));
  c->add_option("--expert-imbalance", o.expert_imbalance,
                "MoE models: tokens the busiest expert-parallel rank computes over the mean (an assumption; 1: "
                "balanced routing), capped by the model's capacity factor")
      ->capture_default_str()
      ->check(non_negative());
  c->add_option("--document-tokens", o.document_tokens,
                "Packed sequences: mean tokens per document when attention is masked to each document (torchtune and "
                "torchtitan block masks, Megatron's packed THD sequences); a flash kernel computes only those tiles. "
                "Default: one document per sequence")
      ->check(positive_whole());
  c->add_option("-f,--format", o.format, "Output: text (aligned, for people), markdown, csv or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "markdown", "csv", "json"}));
}

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
    w.precision = stack.default_precision;
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

// The stack named on the command line, or the hardware's default, said as an assumption.
spec::Stack choose_stack(const ScenarioOptions& o, const spec::HardwareSpec& hw, std::vector<std::string>& assumptions) {
  if (!o.stack.empty()) return spec::load_stack(o.stack);
  if (hw.default_stack.empty())
    throw spec::SpecError(hw.source_file, "$.default_stack",
                          "a default stack for " + hw.name + ", or --stack NAME (one of `trainplan list`'s stacks)");
  spec::Stack stack = spec::load_stack(hw.default_stack);
  assumptions.push_back("stack " + stack.name + " (" + stack.versions + "), " + hw.name +
                        "'s default; --stack names another");
  return stack;
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
    s.stack = choose_stack(o, s.hardware, s.assumptions);
    if (!o.calibration.empty()) {
      s.calibration = spec::load_calibration(o.calibration).calibration;
      spec::check_collective_shares(s.calibration, s.hardware, o.calibration);
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
  s.workload = load_workload(o, s.model, s.stack, s.assumptions);
  for (const std::string& note : o.config_notes) s.assumptions.push_back(note);
  if (s.model.moe()) {
    char load[32];
    std::snprintf(load, sizeof load, "%.2f", s.workload.expert_imbalance);
    s.assumptions.push_back(std::string("expert load imbalance ") + load +
                            " (busiest expert-parallel rank's routed tokens over the mean" +
                            (s.model.capacity_factor > 0 ? ", capped by the capacity factor" : "") +
                            "); --expert-imbalance sets it");
    if (s.stack.dispatch_once_per_instance)
      s.assumptions.push_back("stack " + s.stack.name + " sends a token across instances once per instance its experts "
                              "reach (expert_dispatch: DeepEP / HybridEP)");
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
                  100 * cost::attention_score_fraction(s.model, s.workload, s.stack.attention));
    s.assumptions.push_back(
        "packed documents of " + std::to_string(s.workload.document_tokens) +
        " tokens on average, attention masked to each: " +
        (s.stack.attention == spec::AttentionKernel::flash
             ? std::string("the flash kernel computes ") + share + " of each score matrix (--document-tokens)"
             : "stack " + s.stack.name + "'s unfused attention computes the whole score matrix all the same"));
  }
  if (s.model.sliding_window_tokens > 0 && s.model.sliding_window_tokens < s.workload.seq_len) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "a sliding window of %d tokens on %.0f%% of the layers: %s computes %.1f%% of the score matrices",
                  s.model.sliding_window_tokens, 100 * s.model.sliding_window_layer_share,
                  s.stack.attention == spec::AttentionKernel::flash ? "the flash kernel" : "unfused attention",
                  100 * cost::attention_score_fraction(s.model, s.workload, s.stack.attention));
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

void add_plan_options(CLI::App* c, PlanOptions& o) {
  c->add_option("-n,--instances", o.instances, "Number of instances")->capture_default_str()->check(positive_whole());
  c->add_option("--tp", o.tp, "Tensor-parallel degree (devices; a NeuronCore on trn1)")
      ->capture_default_str()
      ->check(positive_whole());
  c->add_option("--pp", o.pp, "Pipeline-parallel degree")->capture_default_str()
      ->check(whole_in(1, spec::kMaxPipelineStages));
  c->add_option("--virtual-stages", o.virtual_stages, "Model chunks per pipeline rank (interleaved 1F1B when > 1)")
      ->capture_default_str()
      ->check(whole_in(1, spec::kMaxVirtualStages));
  c->add_flag("--uneven-stages", o.uneven_stages,
              "PP need not divide the layers: the busiest stage holds ceil(layers / PP), as Megatron's first/last-stage\n"
              "layer counts and DeepSpeed's partition methods allow (1F1B only; every stage is timed as the busiest)");
  c->add_flag("--edge-layer-slots", o.edge_layer_slots,
              "The embedding and the LM head each take one layer's slot in the pipeline split: PP divides layers + 2\n"
              "(Megatron-Core --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split,\n"
              "DeepSpeed partition_method 'type:transformer|embedding'; 1F1B only)");
  c->add_flag("--sp", o.sp, "Sequence parallel inside the TP group");
  c->add_option("--cp", o.cp, "Context-parallel degree: each sequence split over CP ranks (the stack's K/V exchange)")
      ->capture_default_str()
      ->check(positive_whole());
  c->add_option("--ep", o.ep, "Expert-parallel degree (MoE models): the routed experts split over EP ranks")
      ->capture_default_str()
      ->check(positive_whole());
  c->add_option("--etp", o.etp, "Expert tensor-parallel degree (MoE models); default: TP's, as in Megatron-Core")
      ->check(positive_whole());
  c->add_option("--micro-batch", o.micro_batch, "Sequences per micro-batch per data-parallel replica")
      ->capture_default_str()
      ->check(positive_whole());
  c->add_option("--zero", o.zero, "ZeRO stage: 0 none, 1 optimizer, 2 +gradients, 3 +weights")
      ->capture_default_str()
      ->check(whole_in(0, 3));
  c->add_option("--recompute", o.recompute,
                "Activation recompute: none, selective (attention core) or full; default: selective where the stack "
                "offers it, else none")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  c->add_flag("--no-overlap-dp", o.no_overlap_dp, "Do not overlap DP gradient collectives with backward");
  c->add_flag("--overlap-tp", o.overlap_tp, "Overlap TP collectives with the layer's GEMMs (async TP)");
}

spec::Recompute default_recompute(const spec::Stack& stack) {
  for (spec::Recompute mode : {spec::Recompute::selective, spec::Recompute::none})
    if (stack.offers_recompute(mode)) return mode;
  return stack.recompute_modes.front();
}

spec::Plan to_plan(const PlanOptions& o, const spec::Stack& stack, std::vector<std::string>* assumptions) {
  spec::Plan p;
  p.instances = o.instances;
  p.tp = o.tp;
  p.pp = o.pp;
  p.virtual_stages = o.virtual_stages;
  p.uneven_stages = o.uneven_stages;
  p.edge_layer_slots = o.edge_layer_slots;
  p.sp = o.sp;
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
  p.overlap_dp_comm = !o.no_overlap_dp;
  p.overlap_tp_comm = o.overlap_tp;
  return p;
}

}  // namespace tp::cli
