#include "cli/scenario.h"

#include "cli/validators.h"

namespace trainplan::cli {

void add_scenario_options(CLI::App* c, app::ScenarioOptions& o, bool multiple_hardware) {
  c->add_option("-m,--model", o.model, "Model: a name from `trainplan list`, a models/*.json path, or a Hugging Face config.json")
      ->capture_default_str();
  c->add_option("-H,--hardware", o.hardware,
                multiple_hardware ? "Instance types, comma-separated: names from `trainplan list` or descriptor paths"
                                  : "Instance type: a name from `trainplan list`, a hardware/*.json path, or host (this CPU, with --calibration)")
      ->capture_default_str();
  c->add_option("--stack", o.stack,
                std::string("Training software: a name from `trainplan list` (megatron-lm, nemo, neuronx-distributed, ...), a "
                            "release of a line (neuronx-distributed@2.21 picks the stack whose releases hold 2.21) or a "
                            "stacks/*.json path; default: the hardware's default stack") +
                    (multiple_hardware ? "; per hardware: HARDWARE=STACK entries, comma-separated "
                                         "(trn1.32xlarge=neuronx-distributed@2.21,p5.48xlarge=nemo), the others taking "
                                         "their default or one bare STACK among the entries"
                                       : ""));
  c->add_option("--calibration", o.calibration,
                "Calibration file; default: data/calibration/<hardware>+<stack>.json, <family>+<stack>.json, "
                "<family>.json, <hardware>.json, the first that exists, else the assumed default");
  c->add_option("-s,--seq-len", o.seq_len,
                "Sequence length in tokens; default " + std::to_string(app::kDefaultSeqLen) +
                    ", or the model's positions where it has fewer (BERT: 512)")
      ->check(positive_whole());
  c->add_option("-b,--global-batch", o.global_batch, "Global batch in sequences per optimizer step")
      ->capture_default_str()
      ->check(positive_whole());
  c->add_option("--tokens", o.tokens, "Tokens to train; default 20 per parameter (Chinchilla-optimal)")
      ->check(positive_number());
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

void add_plan_options(CLI::App* c, app::PlanOptions& o) {
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
              "DeepSpeed partition_method 'type:transformer|embedding'); interleaved, PP x virtual stages divides\n"
              "layers + 2 and the first rank's first chunk and the last rank's last chunk hold one layer fewer");
  auto* sp = c->add_flag("--sp", o.sp,
                         "Sequence parallel inside the TP group; default: on at TP > 1 where the stack's client turns it\n"
                         "on by default (NxD, NxD Training, Neuron NeMo, torchtitan), else off");
  c->add_flag("--no-sp", o.no_sp, "No sequence parallelism, whatever the stack's default")->excludes(sp);
  c->add_option("--cp", o.cp, "Context-parallel degree: each sequence split over CP ranks (the stack's exchange around attention)")
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
  c->add_option("--recompute-layers", o.recompute_layers,
                "With --recompute full: recompute only the first N layers of each model chunk (a pipeline stage, or\n"
                "each virtual stage), the rest keeping their activations (Megatron-Core --recompute-method block\n"
                "--recompute-num-layers N); default: every layer")
      ->check(positive_whole());
  c->add_flag("--no-overlap-dp", o.no_overlap_dp, "Do not overlap DP gradient collectives with backward");
  c->add_flag("--overlap-tp", o.overlap_tp, "Overlap TP collectives with the layer's GEMMs (async TP)");
}

}  // namespace trainplan::cli
