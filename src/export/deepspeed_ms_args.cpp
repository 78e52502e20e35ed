#include "export/deepspeed_ms_args.h"

#include "export/megatron_args.h"
#include "export/refusal.h"
#include "spec/error.h"

namespace trainplan::exporting {
namespace {

// Options one fork's megatron/arguments.py defines and the other's does not: every add_argument of
// microsoft/Megatron-DeepSpeed@f4157bea and of bigscience-workshop/Megatron-DeepSpeed@8387ae17 (neither
// pretrain_gpt.py adds any; DeepSpeed's add_config_arguments is common to both). Each fork parses strictly
// (parser.parse_args with allow_abbrev=False: microsoft arguments.py:21-24, 57-60; bigscience :32-36, 64-67),
// so a script passing one of these runs on that fork alone: the other exits on an unrecognized argument.
const char* const kBigscienceOnly[] = {
    "--abort-on-unmet-fused-kernel-constraints", "--codecarbon-dir", "--embed-layernorm", "--eval-only",
    "--glu-activation", "--img-dim", "--kill-switch-path", "--log-level", "--log-level-replica", "--log-path",
    "--loss-on-targets-only", "--mean-noise-span-length", "--noise-density", "--override-lr-scheduler",
    "--pad-vocab-size-to", "--position-embedding-type", "--pp-partition-method",
    "--reweight-loss-based-on-position-frequency", "--skip-train-iteration-range", "--sync-tp-duplicated-parameters",
    "--test-weighted-split-paths", "--test-weighted-split-paths-path", "--tokenizer-name-or-path",
    "--train-weighted-split-paths", "--train-weighted-split-paths-path", "--use-bnb-optimizer",
    "--use-checkpoint-lr-scheduler", "--use-contiguous-buffers-in-ddp", "--valid-num-workers",
    "--valid-weighted-split-paths", "--valid-weighted-split-paths-path"};
const char* const kMicrosoftOnly[] = {
    "--aml-data-download-path", "--apply-layernorm-1p", "--bert-embedder-type", "--classes-fraction",
    "--create-moe-param-group", "--data-cache-path", "--data-efficiency-curriculum-learning",
    "--data-parallel-random-init", "--data-per-class-fraction", "--decoder-num-layers", "--dino-bottleneck-size",
    "--dino-freeze-last-layer", "--dino-head-hidden-size", "--dino-local-crops-number", "--dino-local-img-size",
    "--dino-norm-last-layer", "--dino-teacher-temp", "--dino-warmup-teacher-temp",
    "--dino-warmup-teacher-temp-epochs", "--disable-bias-linear", "--disable-mem-efficient-ln",
    "--disable-moe-token-dropping", "--disable-moe-top2-2nd-expert-sampling", "--distribute-saved-activations",
    "--distributed-timeout-minutes", "--ds-inference", "--ds-sequence-parallel-fpdt",
    "--ds-sequence-parallel-fpdt-chunk-size", "--ds-sequence-parallel-fpdt-offloading",
    "--ds-sequence-parallel-size", "--ds_fused_adam", "--embedding-weights-in-fp32", "--empty-unused-memory-level",
    "--enable-expert-tensor-parallelism", "--enable-zbh1-exact-semantics", "--enable-zbh1-pipeline",
    "--encoder-num-layers", "--end-weight-decay", "--exit-on-missing-checkpoint", "--exit-signal-handler",
    "--expert-interval", "--force-ds-sequence-parallel", "--fp8-amax-compute-algo", "--fp8-amax-history-len",
    "--fp8-e4m3", "--fp8-hybrid", "--fp8-interval", "--fp8-margin", "--head-lr-mult", "--hidden-size-teacher",
    "--img-h", "--img-w", "--inference-batch-times-seqlen-threshold", "--iter-per-epoch", "--kd", "--kd-alpha-ce",
    "--kd-beta-ce", "--kd-temp", "--kill-switch-file", "--load-tag", "--load-teacher", "--local-rank",
    "--log-memory-to-tensorboard", "--log-optimizer-states-to-tensorboard", "--log-world-size-to-tensorboard",
    "--lr-warmup-tokens", "--mask-factor", "--mask-type", "--max-tokens-to-oom", "--mlp-type",
    "--moe-eval-capacity-factor", "--moe-expert-parallel-size", "--moe-loss-coeff", "--moe-min-capacity",
    "--moe-train-capacity-factor", "--mos", "--no-async-tensor-model-parallel-allreduce",
    "--no-barrier-with-level-1-timing", "--no-contiguous-buffers-in-local-ddp", "--no-data-sharding",
    "--no-fp8-wgrad", "--no-gradient-accumulation-fusion", "--no-initialization", "--no-load-lr-state",
    "--no-persist-layer-norm", "--no-pipeline-parallel", "--no-position-embedding", "--normalization",
    "--num-attention-heads-teacher", "--num-experts", "--num-experts-switch", "--num-experts-teacher",
    "--num-key-value-heads", "--num-layers-teacher", "--output-bert-embeddings", "--overlap-p2p-communication",
    "--override-opt_param-scheduler", "--pipeline-model-parallel-split-rank", "--profile", "--profile-ranks",
    "--profile_steps", "--random-ltd", "--recompute-activations", "--recompute-granularity", "--recompute-method",
    "--recompute-num-layers", "--repeated-dataloader", "--reset-iteration", "--retro-add-retriever",
    "--retro-cyclic-train-iters", "--retro-encoder-attention-dropout", "--retro-encoder-hidden-dropout",
    "--retro-encoder-layers", "--retro-num-neighbors", "--retro-num-retrieved-chunks", "--retro-return-doc-ids",
    "--retro-workdir", "--return-data-index", "--rotary-percent", "--rotary-position-embeddings-theta",
    "--sequence-parallel", "--skip-train", "--squared-relu", "--standalone-embedding-stage", "--start-weight-decay",
    "--swiglu", "--swin-backbone-type", "--test-data-path", "--timing-log-level", "--timing-log-option",
    "--tokenizer-model", "--topk", "--train-data-exact-num-epochs", "--train-data-path", "--train-desc-path",
    "--train-doc-idx-path", "--train-idx-path", "--train-sample-idx-path", "--train-shuffle-idx-path",
    "--transformer-impl", "--trust-remote-code", "--untie-embeddings-and-output-weights", "--use-checkpoint-args",
    "--use-checkpoint-opt_param-scheduler", "--use-dataset-only", "--use-distributed-optimizer", "--use-flash-attn",
    "--use-flash-attn-builder", "--use-flash-attn-triton", "--use-flash-attn-v1", "--use-flash-attn-v2",
    "--use-ring-exchange-p2p", "--use-rotary-position-embeddings", "--use-tutel", "--valid-data-path",
    "--vision-backbone-type", "--vision-pretraining", "--vision-pretraining-type", "--vocab-size",
    "--wandb-exp-name", "--wandb-project", "--wandb-save-dir", "--weight-decay-incr-style"};

void refuse_what_the_fork_cannot_express(const LaunchJob& job) {
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  const bool bf16 = job.mixed_bf16();
  if (m.kind != spec::ModelKind::decoder) refuse_deepspeed("pretrain_gpt.py", "a decoder model; " + m.name + " is an encoder");
  if (job.workload.precision == spec::Precision::bf16_sr)
    refuse_deepspeed("bf16.enabled", "mixed-bf16 or fp32; DeepSpeed has no BF16 with stochastic rounding");
  if (job.workload.precision == spec::Precision::fp32_bf16_matmul)
    refuse_deepspeed("bf16.enabled", "mixed-bf16 or fp32; matmuls auto-cast to BF16 are a Neuron compiler mode");
  if (job.workload.precision == spec::Precision::fp8)
    refuse_deepspeed("--fp8-hybrid", "mixed-bf16 or fp32; FP8 needs --transformer-impl transformer_engine, which DeepSpeed's "
                           "pipeline model (ParallelTransformerLayerPipe) does not use and no microsoft Megatron-DeepSpeed "
                           "stack prices without it");
  if (p.virtual_stages > 1)
    refuse_deepspeed("--num-layers-per-virtual-pipeline-stage", "1 virtual stage: DeepSpeed's pipeline engine does not interleave");
  if (p.overlap_tp_comm) refuse_deepspeed("--tp-comm-overlap", "no async TP: Megatron-DeepSpeed has no such option");
  if (p.uneven_stages) refuse_deepspeed("--pipeline-model-parallel-size", "uneven pipeline stages are not exported yet");
  // The microsoft fork builds its PipelineModule with partition_method='type:transformer'
  // and no option to change it (microsoft/Megatron-DeepSpeed@f4157bea megatron/model/gpt_model.py:463).
  if (spec::edge_slots_active(p))
    refuse_deepspeed("--pipeline-model-parallel-size",
                     "no edge layer slots: Microsoft's Megatron-DeepSpeed fixes partition_method 'type:transformer'");
  // DeepSpeed-Ulysses (arguments.py:974): trainplan's CP under its own stack, as the fork runs it.
  const bool ulysses = job.stack_name == kMicrosoftDeepSpeedUlyssesStack;
  if (p.cp > 1 && !ulysses)
    refuse_deepspeed("--ds-sequence-parallel-size", "1 under stack " + job.stack_name + "; the fork's DeepSpeed-Ulysses "
                     "(an all-to-all of heads) is priced by stack " + kMicrosoftDeepSpeedUlyssesStack);
  if (p.cp > 1 && p.sp)
    refuse_deepspeed("--sequence-parallel", "off with --ds-sequence-parallel-size: Megatron-DeepSpeed raises on both "
                                            "(megatron/initialize.py:247-252)");
  if (p.cp > 1 && p.tp > 1)
    refuse_deepspeed("--tensor-model-parallel-size", "1 with --ds-sequence-parallel-size " + std::to_string(p.cp) +
                                                         " (megatron/core/parallel_state.py:145-147 asserts TP 1 and PP 1)");
  if (p.cp > 1 && m.kv_heads != m.heads)
    refuse_deepspeed("--num-key-value-heads", "as many as --num-attention-heads with --ds-sequence-parallel-size "
                                              "(megatron/model/transformer.py:729 asserts K and V as wide as Q); " +
                                                  m.name + " has " + std::to_string(m.kv_heads) + " for " +
                                                  std::to_string(m.heads));
  if (ulysses && p.recompute == spec::Recompute::selective)
    refuse_deepspeed("--recompute-granularity", "full or none under stack " + job.stack_name + ": with DeepSpeed sequence "
                                                "parallelism the fork sets no selective recompute "
                                                "(megatron/model/transformer.py:625-629)");
  if (p.ep > 1 || m.moe()) refuse_deepspeed("--num-experts", "a dense model; DeepSpeed-MoE is not exported");
  if (m.mla()) refuse_deepspeed("--num-key-value-heads", "grouped-query or multi-head attention; MLA is not offered");
  if (p.sp && p.tp == 1) refuse_deepspeed("--sequence-parallel", "TP > 1 (Megatron-DeepSpeed switches sequence parallelism off at TP 1)");
  if (p.pp > 1 && p.zero >= 2) refuse_deepspeed("zero_optimization.stage", "0 or 1 with pipeline parallelism (DeepSpeed rejects ZeRO-2 and -3 there)");
  // megatron/arguments.py:94-96 asserts PP 1 under --no-pipeline-parallel.
  if (p.pp > 1 && microsoft_deepspeed_without_pipeline(job.stack_name))
    refuse_deepspeed("--pipeline-model-parallel-size", "1: stack " + job.stack_name +
                                                           " runs --no-pipeline-parallel, which Megatron-DeepSpeed "
                                                           "asserts at PP 1 (megatron/arguments.py:94-96)");
  if (job.stack_name == kMicrosoftDeepSpeedZero3Stack) {
    // The stack describes DeepSpeed 0.16.2's stage-3 optimizer under FP16 and nothing else.
    if (p.zero != 3)
      refuse_deepspeed("zero_optimization.stage", "3: stack megatron-deepspeed-ms-zero3 describes DeepSpeed 0.16.2's stage-3 "
                                                  "optimizer only (ZeRO 0-1: stack megatron-deepspeed-ms, or without "
                                                  "the pipeline engine megatron-deepspeed-ms-nopipe)");
    // microsoft/DeepSpeed@v0.16.2 deepspeed/runtime/zero/stage3.py:903-905 clones the partition to FP32
    // even when it already is: FP32 training keeps two FP32 partitions, which the stack does not price.
    if (job.workload.precision != spec::Precision::mixed_bf16)
      refuse_deepspeed("fp16.enabled", "mixed precision (FP16): at ZeRO-3 DeepSpeed 0.16.2 keeps a second FP32 partition "
                                       "in FP32 training, which stack megatron-deepspeed-ms-zero3 does not price");
  } else if (microsoft_deepspeed_16bit_gradients(job.stack_name)) {
    // FP16_Optimizer (ZeRO 0) and the stage-1 optimizer with 16-bit gradients; without the pipeline
    // engine also that optimizer at stage 2 (stacks/megatron-deepspeed-ms-nopipe.json's by_zero_stage "2").
    const int highest = microsoft_deepspeed_without_pipeline(job.stack_name) ? 2 : 1;
    if (p.zero > highest)
      refuse_deepspeed("zero_optimization.stage",
                       highest == 2 ? "0, 1 or 2: stack " + job.stack_name + " describes DeepSpeed 0.16.2's FP16_Optimizer "
                                      "and ZeRO-1/2 optimizer only (ZeRO 3 is stack megatron-deepspeed-ms-zero3)"
                                    : "0 or 1: stack " + job.stack_name + " describes DeepSpeed 0.16.2's FP16_Optimizer "
                                      "and stage-1 optimizer only (ZeRO 3 is stack megatron-deepspeed-ms-zero3; ZeRO 2 "
                                      "without the pipeline engine stack megatron-deepspeed-ms-nopipe)");
    // Without fp16 DeepSpeed 0.16.2 steps the bare optimizer over FP32 gradients (engine.py:1229-1281),
    // all-reduced in 5e8 FP32 elements: other buckets and states than the stack's.
    if (job.workload.precision != spec::Precision::mixed_bf16)
      refuse_deepspeed("fp16.enabled", "mixed precision (FP16): stack " + job.stack_name + " prices DeepSpeed 0.16.2's "
                                       "16-bit gradients and buckets, not FP32 training");
  } else if (job.stack_name == kMicrosoftDeepSpeedBf16AccumStack) {
    // DeepSpeed 0.16.2 builds the BF16 optimizer over a BF16 accumulator only for a BF16 model at ds_config
    // stage 0 under the pipeline engine (deepspeed/runtime/engine.py:1264-1268); FP32 with a BF16
    // accumulator raises (:1278-1279), and stage 1 builds the stage-1 optimizer (:1245-1248).
    if (p.zero != 1 || !bf16)
      refuse_deepspeed("bf16.enabled", "BF16 at ZeRO 1: stack megatron-deepspeed-ms-bf16-accum describes DeepSpeed "
                                       "0.16.2's BF16 optimizer accumulating in BF16 only");
  } else if (job.stack_name == kMicrosoftDeepSpeedNoPipeBf16Stack) {
    if (p.zero != 1 || !bf16)
      refuse_deepspeed("bf16.enabled", "BF16 at ZeRO 1: stack megatron-deepspeed-ms-nopipe-bf16-optimizer describes DeepSpeed "
                                       "0.16.2's BF16 optimizer only");
  } else if (p.zero >= 2) {
    refuse_deepspeed("zero_optimization.stage", "ZeRO 1: DeepSpeed 0.16.2's ZeRO-2 and -3 need --no-pipeline-parallel "
                                                "(deepspeed/runtime/pipe/engine.py:77-78): ZeRO 3 under --stack "
                                                "megatron-deepspeed-ms-zero3, ZeRO 2 in FP16 under --stack "
                                                "megatron-deepspeed-ms-nopipe");
  }
  if (bf16 && p.zero == 0)
    refuse_deepspeed("zero_optimization.stage", "ZeRO 1: with BF16, DeepSpeed's BF16 optimizer always shards the FP32 states over DP");
  if (m.embedding_norm) refuse_deepspeed("--num-layers", m.name + " has a norm on the word embeddings, which only bigscience Megatron-DeepSpeed offers (--embed-layernorm)");
  if (m.parallel_residual) refuse_deepspeed("--num-layers", m.name + "'s parallel residual blocks are not offered");
  if (m.position == spec::PositionKind::alibi) refuse_deepspeed("--use-rotary-position-embeddings", "learned or rotary positions; ALiBi is not offered");
  if (m.qkv_bias && !m.bias) refuse_deepspeed("--add-qkv-bias", "all linear biases or none; the fork has no option for Q, K and V biases alone");
  if (m.qk_norm) refuse_deepspeed("--qk-layernorm", "no QK-norm: the fork has no such option");
  if (m.kv_heads % p.tp != 0)
    refuse_deepspeed("--num-key-value-heads", "a multiple of TP (" + std::to_string(p.tp) + "): the fork divides KV heads over TP, " +
                                        m.name + " has " + std::to_string(m.kv_heads));
}

}  // namespace

const FormatInfo& microsoft_deepspeed_info() {
  static const FormatInfo fork = {
      LaunchFormat::deepspeed, "deepspeed", kMicrosoftDeepSpeedStack,
      "DeepSpeed 0.16.2 ds_config with microsoft Megatron-DeepSpeed arguments",
      "microsoft/DeepSpeed@b344c04df0fdf058617004924a7aaa15055dccce deepspeed/runtime/constants.py, "
      "microsoft/Megatron-DeepSpeed@f4157bea69f3df8c6cb66f2ebcda66ba03d1288e megatron/arguments.py",
      "NVIDIA GPUs (the deepspeed launcher; CUDA kernels, NCCL)"};
  return fork;
}

ArgList microsoft_deepspeed_arguments(const LaunchJob& job, int ds_stage) {
  refuse_what_the_fork_cannot_express(job);
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  ArgList a;
  auto arg = [&](const std::string& o, const std::string& v = "") { v.empty() ? a.flag(o) : a.text(o, v); };
  auto num = [&](const std::string& o, long long v) { a.number(o, v); };
  num("--tensor-model-parallel-size", p.tp);
  num("--pipeline-model-parallel-size", p.pp);
  // Without it pretrain_gpt.py builds GPTModelPipe even at PP 1 (microsoft/Megatron-DeepSpeed@f4157bea
  // pretrain_gpt.py:51), whose DeepSpeed pipeline engine rejects ZeRO-3 (deepspeed/runtime/pipe/engine.py:77-78)
  // and keeps pipe buffers the no-pipeline stacks do not price.
  if (microsoft_deepspeed_without_pipeline(job.stack_name)) arg("--no-pipeline-parallel");
  if (job.stack_name == kMicrosoftDeepSpeedUlyssesStack) {
    if (p.cp > 1) num("--ds-sequence-parallel-size", p.cp);
    // Under DeepSpeed sequence parallelism only the flash paths run (megatron/model/transformer.py:835-846;
    // the unfused one, :847, passes the mask where DeepSpeed takes batch_dim_idx): FlashAttention-2
    // (flash_attn_varlen_func, :409; DistributedAttention gathers dim 1 for it, :619-622).
    arg("--use-flash-attn-v2");
  }
  if (p.sp) arg("--sequence-parallel");
  write_batch_and_sequence(a, job);
  write_layer_shape(a, m);
  if (m.kv_heads != m.heads) num("--num-key-value-heads", m.kv_heads);
  if (m.position == spec::PositionKind::rotary) {
    arg("--use-rotary-position-embeddings");  // turns the learned position embedding off (arguments.py:316-317)
    write_rotary_percent(a, m);
    arg("--rotary-position-embeddings-theta", rope_base_text(m));  // dest rope_theta, int, default 10000 (:635)
  }
  arg("--normalization", m.norm == spec::NormKind::rmsnorm ? "rmsnorm" : "layernorm");
  write_shared_architecture(a, m);
  if (job.workload.precision == spec::Precision::mixed_bf16) arg(job.fp16 ? "--fp16" : "--bf16");
  if (p.recompute == spec::Recompute::selective) arg("--recompute-granularity", "selective");
  if (p.recompute == spec::Recompute::full) {  // every layer: the pipeline model's checkpoint interval 1
    arg("--recompute-granularity", "full");
    arg("--recompute-method", "uniform");
    num("--recompute-num-layers", 1);
    arg("--deepspeed-activation-checkpointing");
  }
  num("--zero-stage", ds_stage);
  return a;
}

MegatronDeepSpeedFork megatron_deepspeed_fork(const ShellArgs& args, const std::string& file) {
  std::string bigscience, microsoft;
  for (const char* o : kBigscienceOnly)
    if (args.has(o) && bigscience.empty()) bigscience = o;
  for (const char* o : kMicrosoftOnly)
    if (args.has(o) && microsoft.empty()) microsoft = o;
  if (!bigscience.empty() && !microsoft.empty())
    throw spec::SpecError(file, microsoft,
                          "the options of one Megatron-DeepSpeed fork; " + microsoft + " is microsoft's, " + bigscience +
                              " bigscience's");
  return !microsoft.empty() ? MegatronDeepSpeedFork::microsoft
         : !bigscience.empty() ? MegatronDeepSpeedFork::bigscience
                               : MegatronDeepSpeedFork::unknown;
}

void read_microsoft_deepspeed_arguments(const ShellArgs& args, const std::string& file, LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  auto whole = [&](const std::string& o, long min, long max, long fallback) { return args.whole(o, min, max, fallback, file); };
  spec::Plan& p = job.plan;
  if (args.has("--num-layers-per-virtual-pipeline-stage"))
    throw spec::SpecError(file, "--num-layers-per-virtual-pipeline-stage",
                          "no virtual stages: DeepSpeed's pipeline engine does not interleave");
  // DeepSpeed-Ulysses (arguments.py:974): an all-to-all of heads, trainplan's CP, not Megatron's SP;
  // what the fork asserts against beside it is refused naming the option.
  p.cp = int(whole("--ds-sequence-parallel-size", 1, kBig, 1));
  if (p.cp > 1) {
    const std::string with = " with --ds-sequence-parallel-size " + std::to_string(p.cp);
    if (args.has("--sequence-parallel"))
      throw spec::SpecError(file, "--sequence-parallel",
                            "absent" + with + ": Megatron-DeepSpeed raises on both (megatron/initialize.py:247-252)");
    if (p.tp > 1 || p.pp > 1)
      throw spec::SpecError(file, p.tp > 1 ? "--tensor-model-parallel-size" : "--pipeline-model-parallel-size",
                            "1" + with + " (megatron/core/parallel_state.py:145-147 asserts TP 1 and PP 1), found " +
                                std::to_string(p.tp > 1 ? p.tp : p.pp));
    if (!args.has("--no-pipeline-parallel"))
      throw spec::SpecError(file, "--no-pipeline-parallel",
                            "given" + with + ": without it pretrain_gpt.py builds GPTModelPipe, whose get_batch_pipe "
                            "(pretrain_gpt.py:176-209) hands every rank the whole sequence");
    bool flash = false;
    for (const char* o : {"--use-flash-attn", "--use-flash-attn-v1", "--use-flash-attn-v2", "--use-flash-attn-triton",
                          "--use-flash-attn-builder"})
      flash = flash || args.has(o);
    if (!flash)
      throw spec::SpecError(file, "--use-flash-attn-v2",
                            "given (or another --use-flash-attn option)" + with + ": only the flash paths run under "
                            "DeepSpeed sequence parallelism (megatron/model/transformer.py:528-531, 835-847)");
  }
  p.sp = args.has("--sequence-parallel") && p.tp > 1;  // the fork switches it off at TP 1
  // As the pipeline model reads them (gpt_model.py:446-452): --checkpoint-activations first, then the granularity.
  const std::string granularity =
      args.has("--recompute-activations") ? "selective" : args.value("--recompute-granularity").value_or("");
  if (!granularity.empty() && (!spec::parse_recompute(granularity, p.recompute) || p.recompute == spec::Recompute::none))
    throw spec::SpecError(file, "--recompute-granularity", "full or selective, found '" + granularity + "'");
  if (granularity.empty()) p.recompute = spec::Recompute::none;
  if (args.has("--checkpoint-activations")) {
    p.recompute = spec::Recompute::full;
    if (whole("--checkpoint-num-layers", 1, kBig, 1) != 1)
      throw spec::SpecError(file, "--checkpoint-num-layers", "1 (trainplan models no partial recompute)");
  } else if (p.recompute == spec::Recompute::full && (args.value("--recompute-method").value_or("") != "uniform" ||
                                                      whole("--recompute-num-layers", 1, kBig, 1) != 1)) {
    throw spec::SpecError(file, "--recompute-method",
                          "uniform with --recompute-num-layers 1 (the pipeline model checkpoints every layer; "
                          "trainplan models no partial recompute)");
  }

  if (p.cp > 1 && p.recompute == spec::Recompute::selective)
    throw spec::SpecError(file, args.has("--recompute-activations") ? "--recompute-activations" : "--recompute-granularity",
                          "full or none with --ds-sequence-parallel-size " + std::to_string(p.cp) +
                              ": the fork sets no selective recompute there (megatron/model/transformer.py:625-629)");

  if (!read_architecture_head(args, file, "--vocab-size", job)) return;
  spec::ModelSpec& m = job.model;
  m.kv_heads = int(whole("--num-key-value-heads", 1, m.heads, m.heads));
  if (m.heads % m.kv_heads != 0)
    throw spec::SpecError(file, "--num-key-value-heads",
                          "a divisor of --num-attention-heads " + std::to_string(m.heads) + ", found " +
                              std::to_string(m.kv_heads));
  if (p.cp > 1 && m.kv_heads != m.heads)
    throw spec::SpecError(file, "--num-key-value-heads",
                          "--num-attention-heads " + std::to_string(m.heads) + " or absent with --ds-sequence-parallel-size " +
                              std::to_string(p.cp) + " (megatron/model/transformer.py:729 asserts K and V as wide as Q), found " +
                              std::to_string(m.kv_heads));
  m.mlp = args.has("--swiglu") ? spec::MlpKind::swiglu : spec::MlpKind::gelu;
  // The fork's defaults (arguments.py:287-296): 4h, or for SwiGLU 8h/3 rounded down to a multiple of 64.
  m.ffn_hidden =
      read_ffn_hidden(args, file, m.mlp == spec::MlpKind::swiglu ? long(m.hidden) * 8 / 3 / 64 * 64 : 4L * m.hidden);
  const std::string norm = args.value("--normalization").value_or("layernorm");
  if (norm != "layernorm" && norm != "rmsnorm")
    throw spec::SpecError(file, "--normalization", "layernorm or rmsnorm, found '" + norm + "'");
  m.norm = norm == "rmsnorm" ? spec::NormKind::rmsnorm : spec::NormKind::layernorm;
  if (args.has("--use-rotary-position-embeddings")) {
    m.position = spec::PositionKind::rotary;
    m.rotary_fraction = read_rotary_percent(args, file);
    m.rope_theta = double(args.whole("--rotary-position-embeddings-theta", 1, 1L << 30, 10000, file));
  } else if (args.has("--no-position-embedding")) {
    throw spec::SpecError(file, "--no-position-embedding",
                          "learned or rotary positions (--use-rotary-position-embeddings); trainplan models no "
                          "position-free model");
  } else {
    m.position = spec::PositionKind::learned;
  }
  read_shared_architecture(args, file, job);
}

}  // namespace trainplan::exporting
