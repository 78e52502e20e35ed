#include "export/deepspeed_config.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "export/deepspeed_ms_args.h"
#include "export/deepspeed_optimizer.h"
#include "export/header.h"
#include "export/megatron_args.h"
#include "export/optimizer_states_check.h"
#include "export/read_values.h"
#include "export/shell_args.h"
#include "export/refusal.h"
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/one_line.h"

namespace trainplan::exporting {
namespace {

bool microsoft_fork(const LaunchJob& job) { return is_microsoft_deepspeed_stack(job.stack_name); }

// The ZeRO stage ds_config states for the plan's stage: BF16 shards through the
// BF16 optimizer at stage 0. Both forks run DeepSpeed's pipeline engine even at
// PP 1 (bigscience pretrain_gpt.py@8387ae17:56-64 builds GPTModelPipe), whose
// gradient reduction raises NotImplementedError for BF16 at stage 1 (DeepSpeed
// 0.6.5 runtime/pipe/engine.py@8164ea9e:260-265), and DeepSpeed 0.16.2 takes
// stage 1 with BF16 to the ZeRO optimizer with BF16 gradients
// (deepspeed/runtime/engine.py@b344c04d:946-950), not the plan priced.
int ds_stage(const LaunchJob& job) {
  if (job.mixed_bf16() && job.plan.zero == 1) return 0;
  return job.plan.zero;
}

// bigscience Megatron-DeepSpeed@8387ae17's arguments for the job, through --zero-stage.
ArgList bigscience_arguments(const LaunchJob& job) {
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  const bool bf16 = job.mixed_bf16(), half = bf16 || job.mixed_fp16();
  if (m.kind != spec::ModelKind::decoder) refuse_deepspeed("pretrain_gpt.py", "a decoder model; " + m.name + " is an encoder");
  if (job.workload.precision == spec::Precision::bf16_sr) refuse_deepspeed("bf16.enabled", "mixed-bf16 or fp32; DeepSpeed has no BF16 with stochastic rounding");
  if (job.workload.precision == spec::Precision::fp8) refuse_deepspeed("bf16.enabled", "mixed-bf16 or fp32; FP8 is not offered");
  if (job.workload.precision == spec::Precision::fp32_bf16_matmul)
    refuse_deepspeed("bf16.enabled", "mixed-bf16 or fp32; matmuls auto-cast to BF16 are a Neuron compiler mode");
  if (p.sp) refuse_deepspeed("--sequence-parallel", "no sequence parallelism: Megatron-DeepSpeed (bigscience) has none");
  if (p.virtual_stages > 1) refuse_deepspeed("--num-layers-per-virtual-pipeline-stage", "1 virtual stage: DeepSpeed's pipeline engine does not interleave");
  if (p.overlap_tp_comm) refuse_deepspeed("--tp-comm-overlap", "no async TP: not offered");
  if (p.uneven_stages) refuse_deepspeed("--pp-partition-method", "uneven pipeline stages are not exported yet");
  if (p.recompute == spec::Recompute::selective) refuse_deepspeed("--checkpoint-activations", "full or no recompute; selective recompute is not offered");
  // pretrain_gpt.py@8387ae17:56-64 builds GPTModelPipe whenever --deepspeed is
  // given, so DeepSpeed's PipelineEngine runs even at PP 1, and it asserts a ZeRO stage below 2.
  if (p.zero >= 2)
    refuse_deepspeed("zero_optimization.stage", "0 or 1: bigscience Megatron-DeepSpeed always runs DeepSpeed's pipeline engine, "
                                      "which rejects ZeRO-2 and -3");
  if (m.qk_norm) refuse_deepspeed("--qk-layernorm", "no QK-norm: not offered");
  if (m.squared_relu) refuse_deepspeed("--glu-activation", "GELU or a GLU: bigscience Megatron-DeepSpeed offers no squared ReLU; " + m.name + " has it");
  if (m.position == spec::PositionKind::rotary && m.rope_theta > 0 && m.rope_theta != 10000)
    refuse_deepspeed("--position-embedding-type", "a RoPE base of 10000: the fork's rotary embedding has no option for " +
                                            m.name + "'s " + rope_base_text(m));
  if (bf16 && p.zero == 0) refuse_deepspeed("zero_optimization.stage", "ZeRO 1: with BF16, DeepSpeed's BF16 optimizer always shards the FP32 states over DP");
  // DeepSpeed 0.6.5's ZeRO-1 all-reduces every bucket in FP16 whatever the
  // gradients' dtype (runtime/zero/stage_1_and_2.py@8164ea9e:1331, allreduce_bucket's
  // default, reached from :1377): FP32 training would reduce half the bytes priced.
  if (!half && p.zero == 1)
    refuse_deepspeed("zero_optimization.stage", "mixed-bf16, or ZeRO 0 with fp32: DeepSpeed 0.6.5's ZeRO-1 all-reduces FP32 gradients in FP16 "
                                                "(runtime/zero/stage_1_and_2.py:1331)");
  if (m.norm != spec::NormKind::layernorm) refuse_deepspeed("--normalization", "LayerNorm; RMSNorm is not offered");
  if (m.kv_heads != m.heads) refuse_deepspeed("--num-query-groups", "multi-head attention; grouped-query attention is not offered");
  if (!m.tied_embeddings) refuse_deepspeed("--untie-embeddings-and-output-weights", "tied embeddings; untying is not offered");
  if (!m.bias) refuse_deepspeed("--disable-bias-linear", "linear biases; removing them is not offered");
  if (m.parallel_residual) refuse_deepspeed("--num-layers", m.name + "'s parallel residual blocks are not offered");
  if (p.cp > 1) refuse_deepspeed("--context-parallel-size", "context parallel 1: Megatron-DeepSpeed (bigscience) has none");
  if (m.moe() || m.mla()) refuse_deepspeed("--num-experts", "a dense model with standard attention: " + m.name + " is not offered");

  ArgList a;
  auto arg = [&](const std::string& o, const std::string& v = "") { v.empty() ? a.flag(o) : a.text(o, v); };
  auto num = [&](const std::string& o, long long v) { a.number(o, v); };
  num("--tensor-model-parallel-size", p.tp);
  num("--pipeline-model-parallel-size", p.pp);
  if (spec::edge_slots_active(p)) arg("--pp-partition-method", "type:transformer|embedding");
  // arguments.py@8387ae17:257-264 asserts --max-position-embeddings is absent with rotary embeddings.
  write_batch_and_sequence(a, job, m.position != spec::PositionKind::rotary);
  write_layer_shape(a, m);
  arg("--position-embedding-type", m.position == spec::PositionKind::rotary ? "rotary"
                                   : m.position == spec::PositionKind::alibi ? "alibi"
                                                                             : "absolute");
  if (m.mlp == spec::MlpKind::swiglu) {
    arg("--glu-activation", "swiglu");
    arg("--no-bias-gelu-fusion");  // arguments.py@8387ae17:285-286 raises with the fusion's default on
  }
  // bigscience-workshop/Megatron-DeepSpeed@8387ae17 arguments.py:386, mpu/layers.py:194: a LayerNorm
  // on the word embeddings (BLOOM's word_embeddings_layernorm).
  if (m.embedding_norm) arg("--embed-layernorm");
  if (!m.dropout) {
    arg("--attention-dropout", "0.0");
    arg("--hidden-dropout", "0.0");
  }
  num("--pad-vocab-size-to", m.padded_vocab(p.tp));
  // bigscience-workshop/Megatron-DeepSpeed@8387ae17 megatron/tokenizer/tokenizer.py:79 raises unless the
  // padded size divides by --make-vocab-size-divisible-by (arguments.py:369, default 128); trainplan's
  // padding is the model's own, read back as the vocabulary (multiple 1).
  num("--make-vocab-size-divisible-by", 1);
  if (bf16) arg("--bf16");
  if (job.mixed_fp16()) arg("--fp16");
  if (p.recompute == spec::Recompute::full) arg("--checkpoint-activations");
  num("--zero-stage", ds_stage(job));
  return a;
}

// bigscience's options: full recompute only, no SP, and (with --pad-vocab-size-to) the architecture.
void read_bigscience_arguments(const ShellArgs& args, const std::string& file, LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  auto whole = [&](const std::string& o, long min, long max, long fallback) { return args.whole(o, min, max, fallback, file); };
  job.plan.recompute = args.has("--checkpoint-activations") ? spec::Recompute::full : spec::Recompute::none;
  job.plan.sp = false;
  if (!read_architecture_head(args, file, "--pad-vocab-size-to", job)) return;
  spec::ModelSpec& m = job.model;
  m.kv_heads = m.heads;
  m.mlp = args.value("--glu-activation").value_or("") == "swiglu" ? spec::MlpKind::swiglu : spec::MlpKind::gelu;
  m.ffn_hidden = read_ffn_hidden(args, file, 4L * m.hidden);
  m.norm = spec::NormKind::layernorm;
  const std::string position = args.value("--position-embedding-type").value_or("absolute");
  if (position == "rotary") m.position = spec::PositionKind::rotary, m.rotary_fraction = 1.0;
  else if (position == "alibi") m.position = spec::PositionKind::alibi;
  else if (position == "absolute") m.position = spec::PositionKind::learned;
  else throw spec::SpecError(file, "--position-embedding-type", "absolute, rotary or alibi, found '" + position + "'");
  m.tied_embeddings = true;
  m.bias = true;
  m.embedding_norm = args.has("--embed-layernorm");
  m.dropout = args.real("--attention-dropout", 0.1, file) > 0 || args.real("--hidden-dropout", 0.1, file) > 0;
  m.vocab = int(whole("--pad-vocab-size-to", 1, kBig, 0));
  m.vocab_pad_multiple = 1;
  m.max_positions = int(whole("--max-position-embeddings", 1, kBig, job.workload.seq_len));
}

// Stage 1 under DeepSpeed's pipeline engine: DeepSpeed turns overlap_comm off for a PipelineModule
// (microsoft/DeepSpeed@b344c04d engine.py:1569-1572, 0.6.5 the same), so the file's overlap is read as off.
void turn_off_pipeline_overlap(LaunchJob& job) {
  if (!job.plan.overlap_dp_comm) return;
  job.plan.overlap_dp_comm = false;
  job.notes.push_back("zero_optimization.overlap_comm read as off: DeepSpeed turns it off for a pipeline model "
                      "(deepspeed/runtime/engine.py:1569-1572)");
}

}  // namespace

DeepSpeedFiles write_deepspeed(const LaunchJob& job, const std::string& config_name) {
  const spec::Plan& p = job.plan;
  const bool microsoft = microsoft_fork(job);
  // DeepSpeed's BF16, FP16 and ZeRO optimizers all step FP32 master partitions with FP32 Adam
  // moments (stacks/megatron-deepspeed*.json master_weights_dtype and optimizer_state_dtype).
  check_optimizer_states(job, refuse_deepspeed, "zero_optimization.stage",
                         microsoft ? "DeepSpeed 0.16.2" : "DeepSpeed 0.6.5", {spec::kFp32Optimizer});
  ArgList a = microsoft ? microsoft_deepspeed_arguments(job, ds_stage(job)) : bigscience_arguments(job);
  a.flag("--deepspeed");
  a.text("--deepspeed_config", config_name);

  // The fork's DP excludes its sequence-parallel ranks (microsoft/Megatron-DeepSpeed@f4157bea megatron/arguments.py:101-108).
  const long dp = long(job.instances) * job.devices_per_instance / (long(p.tp) * p.pp * p.cp);
  nlohmann::ordered_json ds;
  ds["train_batch_size"] = job.workload.global_batch_seqs;
  ds["train_micro_batch_size_per_gpu"] = p.micro_batch;
  ds["gradient_accumulation_steps"] = dp > 0 ? job.workload.global_batch_seqs / (long(p.micro_batch) * dp) : 1;
  // overlap_comm is read by the ZeRO optimizers alone: stage 0 builds none, and for a pipeline
  // model DeepSpeed turns it off at stage 1 (deepspeed/runtime/engine.py@b344c04d:1568-1571; 0.6.5
  // :1364-1375); without the pipeline engine the stage-1 optimizer reduces from hooks with it
  // (stacks/megatron-deepspeed-ms-nopipe.json's by_zero_stage "1", which the Ulysses stack extends).
  const bool overlap_priced =
      ds_stage(job) >= 2 || (ds_stage(job) == 1 && microsoft_deepspeed_16bit_gradients(job.stack_name) &&
                             microsoft_deepspeed_without_pipeline(job.stack_name));
  ds["zero_optimization"] = {{"stage", ds_stage(job)}, {"overlap_comm", p.overlap_dp_comm && overlap_priced}};
  // ZeRO-3 as its stack priced it: one kept bucket of reduce_bucket_size elements, its last
  // reduce-scatter unhidden (contiguous_gradients: deepspeed/runtime/zero/stage3.py@b344c04d:531-534),
  // and the optimizer's FP32 gradient copies one sub_group_size sub-group at a time (:942-963).
  if (ds_stage(job) == 3) {
    ds["zero_optimization"]["contiguous_gradients"] = true;
    if (job.zero_reduce_bucket_elements > 0) ds["zero_optimization"]["reduce_bucket_size"] = job.zero_reduce_bucket_elements;
    if (job.zero3_sub_group_elements > 0) ds["zero_optimization"]["sub_group_size"] = job.zero3_sub_group_elements;
  }
  ds["bf16"] = {{"enabled", job.mixed_bf16()}};
  ds["fp16"] = {{"enabled", job.mixed_fp16()}};
  // The BF16 optimizer over a BF16 accumulator, as stack megatron-deepspeed-ms-bf16-accum priced it: at stage 0
  // DeepSpeed 0.16.2 accumulates in FP32 unless told (deepspeed/runtime/engine.py:946-952, 1264-1268).
  if (job.stack_name == kMicrosoftDeepSpeedBf16AccumStack) ds["data_types"] = {{"grad_accum_dtype", "bf16"}};

  std::ostringstream s;
  s << "#!/usr/bin/env bash\n" << header_comment(job, microsoft ? microsoft_deepspeed_info() : info(LaunchFormat::deepspeed));
  s << "# Run from this folder: --deepspeed_config names " << comment_word(config_name) << " beside this script.\n";
  s << "set -euo pipefail\n";
  if (microsoft && p.sp) s << "export CUDA_DEVICE_MAX_CONNECTIONS=1  # asserted by Megatron-DeepSpeed with --sequence-parallel\n";
  s << "python -m torch.distributed.run --nnodes " << job.instances << " --nproc_per_node " << job.devices_per_instance
    << " --rdzv_endpoint \"${MASTER_ADDR:-localhost}:${MASTER_PORT:-6000}\" --rdzv_backend c10d \\\n"
    << "  pretrain_gpt.py \\\n";
  s << a.render();
  s << "  \"$@\"\n";
  return {s.str(), ds.dump(2) + "\n"};
}

LaunchJob read_deepspeed(const std::string& script_text, const std::string& script_file, const std::string& config_text,
                         const std::string& config_file, const std::string& stack) {
  LaunchJob job;
  // As every loader parses JSON: nesting past spec::kMaxJsonDepth is refused, where a
  // value 300000 deep echoed in a message below (dump()) would overflow the stack.
  const nlohmann::json ds = spec::parse_json_text(config_text, config_file);
  if (!ds.is_object()) throw spec::SpecError(config_file, "", "a ds_config JSON object");
  auto ds_whole = [&](const nlohmann::json& j, const std::string& key, const std::string& path, long fallback,
                      long min = 0) -> long {
    if (!j.contains(key)) return fallback;
    if (!j[key].is_number_integer() || j[key].get<long long>() < min || j[key].get<long long>() > (1LL << 30))
      throw spec::SpecError(config_file, path, "a whole number of at least " + std::to_string(min) + ", found " + j[key].dump());
    return long(j[key].get<long long>());
  };
  auto ds_bool = [&](const nlohmann::json& j, const std::string& key, const std::string& path) {
    if (!j.is_object() || !j.contains(key)) return false;
    if (!j[key].is_boolean()) throw spec::SpecError(config_file, path, "true or false");
    return j[key].get<bool>();
  };
  const nlohmann::json zero = ds.contains("zero_optimization") ? ds["zero_optimization"] : nlohmann::json::object();
  // DeepSpeed's config takes zero_optimization as an object ({"stage": 3}); a bare number is not a stage.
  if (!zero.is_object()) throw spec::SpecError(config_file, "zero_optimization", "an object such as {\"stage\": 1}");
  const int stage = int(ds_whole(zero, "stage", "zero_optimization.stage", 0));
  if (stage > 3) throw spec::SpecError(config_file, "zero_optimization.stage", "0, 1, 2 or 3");
  auto ds_count = [&](const std::string& key, long long fallback) {
    return zero_element_count(zero, key, fallback, config_file);
  };
  // Offloading moves optimizer states or parameters to CPU or NVMe (microsoft/DeepSpeed@v0.16.2
  // zero/offload_config.py:24, 55: device "none" by default), which trainplan does not price:
  // refused rather than priced as if on the GPU.
  for (const char* offload : {"offload_param", "offload_optimizer"}) {
    if (!zero.contains(offload) || zero[offload].is_null()) continue;
    const nlohmann::json& o = zero[offload];
    const nlohmann::json device = o.is_object() ? o.value("device", nlohmann::json("none")) : o;
    if (device != "none")
      throw spec::SpecError(config_file, std::string("zero_optimization.") + offload + ".device",
                            "\"none\" (trainplan prices no CPU or NVMe offload), found " + device.dump());
  }
  if (stage == 3) {
    // microsoft/DeepSpeed@v0.16.2 deepspeed/runtime/zero/config.py:108 reduce_bucket_size 5e8, :167 sub_group_size 1e9.
    job.zero_reduce_bucket_elements = ds_count("reduce_bucket_size", 500000000);
    job.zero3_sub_group_elements = ds_count("sub_group_size", 1000000000);
  }
  // data_types.grad_accum_dtype as DeepSpeed's DtypeEnum names it (deepspeed/runtime/config.py@b344c04d:100-104,
  // :900-901; absent: None, the engine's default), in trainplan's three words.
  std::string grad_accum_dtype;
  if (ds.contains("data_types") && !ds["data_types"].is_object())
    throw spec::SpecError(config_file, "data_types", "an object such as {\"grad_accum_dtype\": \"fp32\"}");
  if (ds.contains("data_types") && ds["data_types"].contains("grad_accum_dtype") && !ds["data_types"]["grad_accum_dtype"].is_null()) {
    const nlohmann::json& v = ds["data_types"]["grad_accum_dtype"];
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    for (const auto& [dtype, names] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"fp16", {"torch.float16", "fp16", "float16", "half"}},
             {"fp32", {"torch.float32", "fp32", "float32", "float"}},
             {"bf16", {"torch.bfloat16", "bf16", "bfloat16"}}})
      if (std::find(names.begin(), names.end(), text) != names.end()) grad_accum_dtype = dtype;
    if (grad_accum_dtype.empty())
      throw spec::SpecError(config_file, "data_types.grad_accum_dtype", "fp16, fp32 or bf16, found " + v.dump());
  }
  const bool bf16 = ds_bool(ds.value("bf16", nlohmann::json::object()), "enabled", "bf16.enabled");
  // FP16 mixed precision keeps mixed BF16's memory and Tensor Core rate; its loss scaling is not priced.
  const bool fp16 = ds_bool(ds.value("fp16", nlohmann::json::object()), "enabled", "fp16.enabled");
  if (fp16 && bf16) throw spec::SpecError(config_file, "fp16.enabled", "false with bf16.enabled true");
  if (fp16) job.notes.push_back("fp16.enabled priced as mixed BF16 (same GEMM rate; loss scaling not priced)");
  job.fp16 = fp16;

  ShellArgs args;
  if (!script_text.empty()) {
    args = parse_shell_args(script_text, script_file);
    read_header(script_text, job);
  }
  constexpr long kBig = 1L << 30;
  auto whole = [&](const std::string& o, long min, long max, long fallback) {
    return args.whole(o, min, max, fallback, script_file);
  };
  spec::Plan& p = job.plan;
  // torchrun's names, else the deepspeed launcher's (DeepSpeed launcher/runner.py: --num_nodes, --num_gpus).
  job.instances = int(whole("--nnodes", 1, kBig, whole("--num_nodes", 1, kBig, 0)));
  job.instances_from_environment = args.from_environment.count(args.has("--nnodes") ? "--nnodes" : "--num_nodes") > 0;
  job.devices_per_instance = int(whole("--nproc_per_node", 1, 1024, whole("--num_gpus", 1, 1024, 0)));
  job.devices_per_instance_option = args.has("--nproc_per_node") ? "--nproc_per_node" : args.has("--num_gpus") ? "--num_gpus" : "";
  p.instances = job.instances;
  p.tp = int(whole("--tensor-model-parallel-size", 1, kBig, 1));
  p.pp = int(whole("--pipeline-model-parallel-size", 1, kBig, 1));
  if (const auto method = args.value("--pp-partition-method")) {
    if (*method != "type:transformer" && *method != "type:transformer|embedding")
      throw spec::SpecError(script_file, "--pp-partition-method",
                            "type:transformer or type:transformer|embedding, found '" + *method + "'");
    p.edge_layer_slots = *method == "type:transformer|embedding";
  }
  // DeepSpeed asserts both batch sizes positive (runtime/config.py _batch_assertion).
  p.micro_batch = int(ds_whole(ds, "train_micro_batch_size_per_gpu", "train_micro_batch_size_per_gpu",
                               whole("--micro-batch-size", 1, kBig, 1), 1));
  job.workload.global_batch_seqs =
      ds_whole(ds, "train_batch_size", "train_batch_size", whole("--global-batch-size", 1, kBig, 0), 1);
  job.workload.seq_len = int(whole("--seq-length", 1, kBig, 0));
  if (args.has("--bf16") && !bf16) throw spec::SpecError(script_file, "--bf16", "bf16.enabled true in " + config_file + " as well");
  if (args.has("--fp16") && !fp16) throw spec::SpecError(script_file, "--fp16", "fp16.enabled true in " + config_file + " as well");
  job.workload.precision = bf16 || fp16 ? spec::Precision::mixed_bf16 : spec::Precision::fp32;
  p.zero = bf16 && stage == 0 ? 1 : stage;  // DeepSpeed's BF16 optimizer shards at stage 0
  if (p.pp > 1 && stage >= 2) throw spec::SpecError(config_file, "zero_optimization.stage", "0 or 1 with pipeline parallelism");
  const bool overlap_requested = ds_bool(zero, "overlap_comm", "zero_optimization.overlap_comm");
  p.overlap_dp_comm = overlap_requested;
  if (p.overlap_dp_comm && stage == 0) {
    p.overlap_dp_comm = false;
    job.notes.push_back("zero_optimization.overlap_comm read as off: DeepSpeed applies it in its ZeRO optimizers only");
  }
  p.overlap_tp_comm = false;
  // The fork the script's options name; where they name none, both forks run it: the stack decides
  // (the header's, else the caller's --stack), said in a note. A bare ds_config keeps bigscience's reading.
  const MegatronDeepSpeedFork fork = megatron_deepspeed_fork(args, script_file);
  bool microsoft = fork == MegatronDeepSpeedFork::microsoft;
  if (fork == MegatronDeepSpeedFork::unknown && !script_text.empty()) {
    const std::string chosen = !job.stack_name.empty() ? job.stack_name : stack;
    microsoft = is_microsoft_deepspeed_stack(chosen);
    job.notes.push_back(
        "the script passes no option only one Megatron-DeepSpeed fork's megatron/arguments.py defines, so both run it: " +
        (microsoft ? "read as microsoft's fork (DeepSpeed 0.16.2), as stack " + chosen + " names; give --stack "
                     "megatron-deepspeed to read it as bigscience's (DeepSpeed 0.6.5, always the pipeline engine)"
                   : std::string("read as bigscience's fork (DeepSpeed 0.6.5, always the pipeline engine)") +
                         (chosen.empty() ? "" : ", as stack " + chosen + " names") +
                         "; give --stack megatron-deepspeed-ms (or another of the microsoft fork's stacks) to read it "
                         "as microsoft's (DeepSpeed 0.16.2)"));
  }
  if (microsoft) {
    const bool stack_stated = !job.stack_name.empty();  // by the file's header
    read_microsoft_deepspeed_arguments(args, script_file, job);
    // pretrain_gpt.py@f4157bea:51: GPTModelPipe under DeepSpeed's pipeline engine unless --no-pipeline-parallel,
    // which megatron/arguments.py:94-96 allows at PP 1 alone.
    const bool no_pipeline = args.has("--no-pipeline-parallel");
    // Without the pipeline engine Megatron's own loop runs the step (megatron/training.py@f4157bea:674-686 calls
    // train_batch only under the pipeline engine, else :709-713 forward_backward_func with get_num_microbatches()),
    // forcing DeepSpeed's accumulation boundary at its last micro-batch (core/pipeline_parallel/schedules.py:340-354):
    // a step is --global-batch-size sequences of --micro-batch-size (microbatches.py:69-70; absent, one micro-batch
    // per replica, arguments.py:166-167), whatever ds_config's batch sizes say.
    if (no_pipeline) {
      // The ds_config's path is the script's text, written one line in a note.
      const std::string config_name = spec::one_line(config_file, 200);
      const long micro = whole("--micro-batch-size", 1, kBig, 0), global = whole("--global-batch-size", 1, kBig, 0);
      if (micro > 0 && micro != p.micro_batch) {
        job.notes.push_back("train_micro_batch_size_per_gpu " + std::to_string(p.micro_batch) + " in " + config_name +
                            "; with --no-pipeline-parallel Megatron's loop runs --micro-batch-size " + std::to_string(micro) +
                            " (megatron/training.py:709-713): priced at " + std::to_string(micro));
        p.micro_batch = int(micro);
      }
      if (global != job.workload.global_batch_seqs && ds.contains("train_batch_size"))
        job.notes.push_back("train_batch_size " + std::to_string(job.workload.global_batch_seqs) + " in " + config_name +
                            "; with --no-pipeline-parallel Megatron's loop runs a step of " +
                            (global > 0 ? "--global-batch-size " + std::to_string(global)
                                        : std::string("one micro-batch per replica (no --global-batch-size)")) +
                            " sequences (megatron/training.py:709-713, microbatches.py:69-70) and forces DeepSpeed's "
                            "accumulation boundary at its last micro-batch (core/pipeline_parallel/schedules.py:340-354): "
                            "priced so");
      job.workload.global_batch_seqs = global;  // 0: one micro-batch per replica, filled in with the cluster
    }
    if (no_pipeline && p.pp > 1)
      throw spec::SpecError(script_file, "--pipeline-model-parallel-size",
                            "1 with --no-pipeline-parallel (microsoft Megatron-DeepSpeed's megatron/arguments.py:94-96 "
                            "asserts it), found " + std::to_string(p.pp));
    // pretrain_gpt.py@f4157bea:51 builds GPTModelPipe unless --no-pipeline-parallel, and
    // DeepSpeed's pipeline engine asserts a stage below 2 (deepspeed/runtime/pipe/engine.py:77-78).
    if (stage >= 2 && !no_pipeline)
      throw spec::SpecError(script_file, "--no-pipeline-parallel",
                            "given with ZeRO stage " + std::to_string(stage) + ": without it pretrain_gpt.py builds "
                            "GPTModelPipe, whose DeepSpeed 0.16.2 pipeline engine rejects ZeRO-2 and -3 "
                            "(deepspeed/runtime/pipe/engine.py:77-78)");
    // Stages 0-2 (microsoft/DeepSpeed@v0.16.2 engine.py:1560-1600: stages 1-2 run stage_1_and_2.py's optimizer,
    // partitioning gradients at 2, :1595): stack megatron-deepspeed-ms-nopipe prices ZeRO-2 in 16 bits.
    if (stage == 1 && !no_pipeline) turn_off_pipeline_overlap(job);
    if (stage <= 2) read_microsoft_optimizer(deepspeed_optimizer(fp16, bf16, stage, grad_accum_dtype, !no_pipeline),
                                             stage, no_pipeline, config_file, zero, job);
    if (stage == 3) {
      // deepspeed/runtime/zero/stage3.py@b344c04d:903-905 clones the partition to FP32 even in FP32 training.
      if (!fp16 && !bf16)
        throw spec::SpecError(config_file, "fp16.enabled",
                              "true with ZeRO stage 3: in FP32 DeepSpeed 0.16.2 keeps a second FP32 partition "
                              "(deepspeed/runtime/zero/stage3.py:903-905), which no trainplan stack prices");
      // pretrain_gpt.py@f4157bea:46-49 builds the model inside deepspeed.zero.Init only when --zero-stage is 3
      // (arguments.py:1487, default 1): otherwise every rank first holds the whole model.
      if (const long z = whole("--zero-stage", 0, 3, 1); z != 3)
        job.notes.push_back("--zero-stage " + std::to_string(z) + " beside ZeRO stage 3: pretrain_gpt.py builds the whole "
                            "model on every rank before DeepSpeed partitions it (deepspeed.zero.Init is on at 3 only); "
                            "that start-up peak is not priced");
      if (bf16)
        job.notes.push_back("bf16.enabled at ZeRO stage 3 priced as stack megatron-deepspeed-ms-zero3's FP16: the same "
                            "2-byte partitions, gradients and reduce-scatter (deepspeed/runtime/engine.py:946-950)");
      if (job.stack_name.empty()) job.stack_name = kMicrosoftDeepSpeedZero3Stack;
    }
    if (job.stack_name.empty()) job.stack_name = kMicrosoftDeepSpeedStack;  // the fork's stack where no header names one
    // DeepSpeed-Ulysses beside megatron-deepspeed-ms-nopipe's optimizers (FP16_Optimizer, the ZeRO-1/2 optimizer
    // with 16-bit gradients): stack megatron-deepspeed-ms-nopipe-ulysses; beside another optimizer no stack prices it.
    if (p.cp > 1 && !stack_stated) {
      if (job.stack_name != kMicrosoftDeepSpeedNoPipeStack)
        throw spec::SpecError(script_file, "--ds-sequence-parallel-size",
                              "1 beside the optimizer " + config_file + " builds (priced by stack " + job.stack_name +
                                  "): stack " + kMicrosoftDeepSpeedUlyssesStack + " prices DeepSpeed-Ulysses beside "
                                  "FP16 (or stage-1/2 16-bit) gradients only");
      job.stack_name = kMicrosoftDeepSpeedUlyssesStack;
    }
  } else {
    // bigscience pretrain_gpt.py@8387ae17:56-64 builds GPTModelPipe whenever --deepspeed is given, and
    // the pipeline engine asserts a stage below 2 (as bigscience_arguments refuses on writing).
    if (stage >= 2)
      throw spec::SpecError(config_file, "zero_optimization.stage",
                            "0 or 1 for a bigscience Megatron-DeepSpeed script: it always runs DeepSpeed's pipeline engine, "
                            "which rejects ZeRO-2 and -3 (microsoft's fork runs ZeRO-3 with --no-pipeline-parallel)");
    if (stage == 1) turn_off_pipeline_overlap(job);
    read_bigscience_arguments(args, script_file, job);
  }
  if (const std::string note = unread_options_note(args.unconsulted()); !note.empty()) job.notes.push_back(note);
  return job;
}

}  // namespace trainplan::exporting
