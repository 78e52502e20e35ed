#include "app/launch.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "cost/expert_parallel.h"
#include "export/nxd_config.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::app {
namespace {

// DeepSpeed ZeRO's gradient bucket and ZeRO-3's optimizer sub-group in elements, as
// the stack prices them (0: the stack names no bucket or sub-group).
long long zero_bucket_elements(const spec::Stack& stack) {
  const double element = stack.memory.main_grad_bytes;
  return element > 0 ? std::llround(stack.communication.dp_bucket_bytes / element) : 0;
}
long long zero3_sub_group_elements(const spec::Stack& stack) {
  return std::llround(stack.memory.optimizer_sub_group_parameters);
}

// Whether the stack prices ZeRO-3 as PyTorch FSDP's mixed precision keeps it (NeMo's
// model.fsdp with O2 off): the FP32 shard is the master, gradients are FP32 shards, and no
// 16-bit shard persists.
bool fsdp_fp32_shards(const spec::Stack& stack) {
  return !stack.memory.zero3_keeps_16bit_shard && stack.memory.master_weight_bytes == 4 &&
         stack.memory.main_grad_bytes == 4 && !stack.capabilities.half_is_fp16;
}

bool given(const std::set<std::string>& c, const std::string& name) { return c.count(name) > 0; }

// A flag given beside the file must agree with it.
template <typename T>
void agree(const std::set<std::string>& c, const std::string& flag, const T& flag_value, const T& file_value, const std::string& file,
           const std::string& what) {
  if (given(c, flag) && !(flag_value == file_value)) {
    std::ostringstream s;
    s << std::boolalpha << what << " as the file states (" << file_value << "), or no " << flag << "; " << flag << " "
      << flag_value << " contradicts it";
    throw spec::SpecError(file, flag, s.str());
  }
}

}  // namespace

exporting::LaunchJob launch_job(const Scenario& s, const spec::Plan& plan) {
  // What the job runs at its ZeRO stage (a stack's by_zero_stage entry): the bucket written back is the one priced.
  const spec::Stack stack = spec::at_zero_stage(s.stack, plan.zero);
  exporting::LaunchJob job;
  job.model_name = s.model.name;
  job.hardware_name = s.hardware.name;
  job.hardware_family = s.hardware.family;
  job.stack_name = stack.name;
  job.model = s.model;
  job.instances = plan.instances;
  job.devices_per_instance = s.hardware.devices_per_instance();
  job.plan = plan;
  job.workload = s.workload;
  job.fp8_param_gather = stack.memory.fp8_param_gather && s.workload.precision == spec::Precision::fp8;
  job.fp16 = stack.capabilities.half_is_fp16 && s.workload.precision == spec::Precision::mixed_bf16;
  job.flash_attention = stack.compute.attention == spec::AttentionKernel::flash;
  job.fused_grad_accumulation = stack.compute.grad_accumulation == spec::GradAccumulation::fused_wgrad;
  job.dispatch_once_per_instance = stack.communication.dispatch_once_per_instance;
  job.ep_a2a_overlap = stack.communication.ep_a2a_hidden_share > 0 && cost::ep_overlap_paired_share(plan) > 0;
  job.experts_compute_capacity = stack.compute.experts_compute_capacity;
  job.recompute_mlp = !s.model.moe() && spec::selective_wraps_mlp(stack, s.model);
  // Mixed precision alone keeps masters beside 16-bit weights; FP32 and BF16-SR keep no such state.
  const bool sixteen_bit_weights =
      s.workload.precision == spec::Precision::mixed_bf16 || s.workload.precision == spec::Precision::fp8;
  job.optimizer = sixteen_bit_weights ? spec::optimizer_states(stack.memory) : spec::kFp32Optimizer;
  job.bf16_grad_reduce = !stack.capabilities.half_is_fp16 && stack.memory.main_grad_bytes == 2 &&
                         (s.workload.precision == spec::Precision::mixed_bf16 ||
                          s.workload.precision == spec::Precision::fp8);
  job.fsdp_fp32_shards = fsdp_fp32_shards(stack);
  if (plan.zero == 3) {  // what format deepspeed writes as reduce_bucket_size and sub_group_size
    job.zero_reduce_bucket_elements = zero_bucket_elements(stack);
    job.zero3_sub_group_elements = zero3_sub_group_elements(stack);
  }
  return job;
}

exporting::ReadLaunch apply_launch_config(const std::string& file, const std::set<std::string>& c, ScenarioOptions& s,
                                          PlanOptions& p, LaunchUse use, const std::vector<std::string>& overrides) {
  // --stack, where given, decides which Megatron-DeepSpeed fork a script that names none is read as.
  exporting::ReadLaunch read =
      exporting::read_launch_config(file, given(c, "--stack") ? spec::load_stack(s.stack).name : "", overrides);
  exporting::LaunchJob& job = read.job;

  // A name the file's trainplan header gives is refused naming the file and the header's field.
  auto from_header = [&file](const std::string& field, const std::string& value, auto load) {
    try {
      load(value);
    } catch (const spec::SpecError& e) {
      throw spec::SpecError(file, "trainplan header " + field + "=" + value, e.what());
    }
  };
  // Hardware: --hardware, else the file's trainplan header.
  if (!given(c, "--hardware")) {
    if (job.hardware_name.empty())
      throw spec::SpecError(file, "--hardware", "the instance type (the file does not name one): give --hardware");
    from_header("hardware", job.hardware_name, [](const std::string& v) { spec::load_hardware(v); });
    s.hardware = job.hardware_name;
  }
  const spec::HardwareSpec hardware = spec::load_hardware(s.hardware);
  exporting::check_runs_on(read.format, hardware.family, hardware.name, file);
  if (read.format == exporting::LaunchFormat::nxd)
    exporting::check_nxd_logical_cores(job, hardware.family, hardware.name, file);
  if (job.devices_per_instance > 0 && job.devices_per_instance != hardware.devices_per_instance()) {
    const std::string option =
        job.devices_per_instance_option.empty() ? "devices per instance" : job.devices_per_instance_option;
    throw spec::SpecError(file, option,
                          std::to_string(hardware.devices_per_instance()) + " devices per instance, as " + hardware.name +
                              " has, found " + std::to_string(job.devices_per_instance) + ": set " + option + " to " +
                              std::to_string(hardware.devices_per_instance()) + ", or give --hardware an instance type with " +
                              std::to_string(job.devices_per_instance) + (job.devices_per_instance == 1 ? " device" : " devices"));
  }
  // Stack: --stack, else the header, else the format's own.
  if (!given(c, "--stack")) {
    if (!job.stack_name.empty()) from_header("stack", job.stack_name, [](const std::string& v) { spec::load_stack(v); });
    s.stack = job.stack_name.empty() ? exporting::info(read.format).stack : job.stack_name;
  }
  else exporting::check_serves_stack(read.format, spec::load_stack(s.stack).name, file);
  // What a Megatron-LM script or NeMo file runs against what the stack prices.
  if (read.format == exporting::LaunchFormat::megatron || read.format == exporting::LaunchFormat::nemo) {
    const bool megatron = read.format == exporting::LaunchFormat::megatron;
    const spec::Stack stack = spec::load_stack(s.stack);
    const bool flash = stack.compute.attention == spec::AttentionKernel::flash;
    const bool fused = stack.compute.grad_accumulation == spec::GradAccumulation::fused_wgrad;
    if (job.flash_attention != flash)
      job.notes.push_back(std::string(megatron ? "--attention-backend" : "model.transformer_engine") + ": the file runs " +
                          (job.flash_attention ? "fused (flash) attention" : "unfused attention") + "; stack " + stack.name +
                          " prices " + (flash ? "flash" : "unfused") + " attention");
    // FP8 parameters as the file states them (Megatron-LM: --fp8-param-gather, arguments.py@73a28a10:1137
    // kw_args['fp8_param'], and fp8_utils.py@73a28a10:414 builds the layers in fp8_model_init; NeMo:
    // model.fp8_params, NVIDIA/NeMo@e938df32 nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py:362),
    // priced over the stack's own where they differ (load_scenario applies it).
    if (job.workload.precision == spec::Precision::fp8 && job.fp8_param_gather != stack.memory.fp8_param_gather) {
      s.fp8_param_gather = job.fp8_param_gather;
      const std::string option = megatron ? "--fp8-param-gather" : "model.fp8_params";
      job.notes.push_back(
          job.fp8_param_gather
              ? option + ": priced as the file runs it, the layers' GEMM weights as FP8 parameters (FP8 data and its "
                         "transpose, no BF16 copy" + (stack.memory.master_weight_bytes == 2 ? ", whole FP32 masters" : "") +
                         "); stack " + stack.name + " prices BF16 weights beside cached FP8 copies"
              : (megatron ? "no --fp8-param-gather" : "model.fp8 without model.fp8_params") +
                    std::string(": priced as the file runs it, BF16 weights beside Transformer Engine's cached FP8 "
                                "copies; stack ") + stack.name + " prices FP8 parameters");
    }
    // A NeMo file's ZeRO-1 optimizer keeps the states it runs (read_nemo: distributed_fused_adam by
    // its optim.dtype, mcore_distributed_optim FP32 masters and moments), priced over the stack's
    // where they differ (load_scenario applies it); mixed precision only, where O2 keeps masters.
    if (!megatron && job.plan.zero == 1 && job.workload.precision != spec::Precision::fp32) {
      const spec::OptimizerStates stack_states = spec::optimizer_states(stack.memory);
      if (job.optimizer != stack_states) {
        s.optimizer_states = job.optimizer;
        job.notes.push_back("model.optim: priced as the file runs it, " + spec::describe(job.optimizer) + "; stack " +
                            stack.name + " prices " + spec::describe(stack_states));
      }
    }
    // NeMo 2.0.0 turns megatron_amp_O2 off under model.fsdp (stacks/nemo-fsdp.json).
    if (!megatron && job.fsdp_fp32_shards && job.workload.precision == spec::Precision::mixed_bf16 &&
        !fsdp_fp32_shards(stack))
      job.notes.push_back("model.fsdp: NeMo runs FSDP with megatron_amp_O2 off (FP32 parameter and gradient shards, an "
                          "FP32 reduce-scatter, no BF16 shard); stack " + stack.name + " prices its own ZeRO-3 (use "
                          "--stack nemo-fsdp to price it as NeMo runs it)");
    if (job.plan.zero < 2 && job.fused_grad_accumulation != fused)
      job.notes.push_back(std::string(megatron ? "--no-gradient-accumulation-fusion" : "model.gradient_accumulation_fusion") +
                          ": the file runs " + (job.fused_grad_accumulation ? "with" : "without") +
                          " gradient-accumulation fusion; stack " + stack.name + " prices " +
                          (fused ? "the fused accumulation" : "a separate accumulation pass"));
  }
  // A DeepSpeed ZeRO bucket (stages 1-3 where the file's optimizer keeps one) or ZeRO-3 sub-group
  // other than the stack prices: said, priced as the stack's.
  if (read.format == exporting::LaunchFormat::deepspeed && job.zero_reduce_bucket_elements > 0) {
    const spec::Stack stack = spec::at_zero_stage(spec::load_stack(s.stack), job.plan.zero);
    auto differs = [&](const char* key, long long file_value, long long priced, const char* what) {
      if (priced > 0 && file_value > 0 && file_value != priced)
        job.notes.push_back(std::string("zero_optimization.") + key + ": the file's " + std::to_string(file_value) +
                            " elements; stack " + stack.name + " prices " + what + " of " + std::to_string(priced));
    };
    differs("reduce_bucket_size", job.zero_reduce_bucket_elements, zero_bucket_elements(stack), "gradient buckets");
    differs("sub_group_size", job.zero3_sub_group_elements, zero3_sub_group_elements(stack), "optimizer sub-groups");
  }
  // Model: --model, else the header's name, else the file's architecture. A
  // header name trainplan has no descriptor for (a job exported from a Hugging
  // Face config.json names the model as the config does) gives way to the
  // architecture the file states.
  if (!given(c, "--model")) {
    std::string header_model_error;  // why the header's name does not load; empty: it loads, or there is none
    if (!job.model_name.empty()) {
      try {
        spec::load_model(job.model_name);
      } catch (const spec::SpecError& e) {
        header_model_error = e.what();
      }
    }
    if (!job.model_name.empty() && header_model_error.empty()) {
      s.model = job.model_name;
    } else if (job.has_architecture) {
      if (!job.model_name.empty()) job.model.name = job.model_name;
      s.model_spec = job.model;
    } else if (!header_model_error.empty()) {
      throw spec::SpecError(file, "trainplan header model=" + job.model_name,
                            header_model_error + "; the file states no architecture: give --model (a name, a "
                                                 "models/*.json or the config.json the job was exported from)");
    } else {
      throw spec::SpecError(file, "--model", "the model (the file states no vocabulary size): give --model");
    }
  }
  if (!job.has_architecture && !s.model_spec) exporting::check_stated_architecture(read, spec::load_model(s.model), file);
  if (job.has_architecture && !s.model_spec) {
    const spec::ModelSpec named = spec::load_model(s.model);
    if (named.layers != job.model.layers || named.hidden != job.model.hidden || named.heads != job.model.heads ||
        named.kv_heads != job.model.kv_heads || named.ffn_hidden != job.model.ffn_hidden ||
        named.experts != job.model.experts || named.top_k != job.model.top_k)
      throw spec::SpecError(file, "--num-layers/--hidden-size/--num-attention-heads/--ffn-hidden-size/--num-experts",
                            "the architecture of " + named.name + " (" + std::to_string(named.layers) + " layers, hidden " +
                                std::to_string(named.hidden) + ", " + std::to_string(named.heads) +
                                " heads), which the file contradicts");
  }
  // Instances: the file's, else --instances.
  if (job.instances > 0 && job.instances_from_environment && given(c, "--instances")) {
    if (p.instances != job.instances)
      job.notes.push_back("--instances " + std::to_string(p.instances) + " stands for the node count the script "
                          "takes from its environment (its default: " + std::to_string(job.instances) + ")");
  } else if (job.instances > 0) {
    // A node count the file's own layout cannot run on (NVIDIA's GPT-3 175B script:
    // NUM_NODES=1 beside TP 8 x PP 16) is a placeholder the user replaces, as
    // Megatron itself would refuse the world size; --instances takes its place.
    // In doubles: each degree a file states may reach 2^30, and their product overflows a long.
    const double layout_devices = double(job.plan.tp) * job.plan.pp * job.plan.cp;
    const double file_devices = double(job.instances) * hardware.devices_per_instance();
    const bool placeholder = layout_devices > file_devices || std::fmod(file_devices, layout_devices) != 0;
    std::ostringstream layout_text;
    layout_text << std::fixed << std::setprecision(0) << layout_devices;
    const std::string file_world = std::to_string(job.instances) + " x " + std::to_string(hardware.devices_per_instance()) +
                                   " devices cannot hold the file's TP x PP x CP of " + layout_text.str();
    if (placeholder && use == LaunchUse::job && !given(c, "--instances"))
      throw spec::SpecError(file, "--instances", "the node count to price (the file's " + file_world + "): give --instances");
    if (placeholder && given(c, "--instances")) {
      job.notes.push_back("--instances " + std::to_string(p.instances) + " replaces the file's node count: its " + file_world);
    } else {
      if (use == LaunchUse::job) agree(c, "--instances", p.instances, job.instances, file, "instances");
      p.instances = job.instances;
    }
  }
  agree(c, "--seq-len", s.seq_len, job.workload.seq_len, file, "sequence length");
  s.seq_len = job.workload.seq_len;
  const spec::Plan& plan = job.plan;
  if (job.workload.global_batch_seqs == 0) {  // Megatron-LM's default: one micro-batch per replica
    // Replicas: the world over TP x PP x CP (NVIDIA/Megatron-LM@73a28a10
    // megatron/training/arguments.py:377-392 data_parallel_size, :489 the default).
    // In doubles: each degree, the micro-batch and the node count may reach 2^30 in
    // a file; past what --global-batch takes the default is refused, not wrapped.
    const double replicas = std::max(1.0, std::floor(double(p.instances) * hardware.devices_per_instance() /
                                                     (double(plan.tp) * double(plan.pp) * double(plan.cp))));
    constexpr long kMaxGlobalBatch = 2147483647;
    if (double(plan.micro_batch) * replicas > double(kMaxGlobalBatch))
      throw spec::SpecError(file, "--global-batch-size",
                            "a global batch of at most " + std::to_string(kMaxGlobalBatch) +
                                " sequences (the file states none, and Megatron-LM's default, micro-batch " +
                                std::to_string(plan.micro_batch) + " x " + std::to_string(long(replicas)) +
                                " data-parallel replicas, is more): state --global-batch-size");
    job.workload.global_batch_seqs = long(plan.micro_batch) * long(replicas);
  }
  agree(c, "--global-batch", s.global_batch, long(job.workload.global_batch_seqs), file, "global batch");
  s.global_batch = job.workload.global_batch_seqs;
  const std::string precision = spec::to_string(job.workload.precision);
  agree(c, "--precision", s.precision, precision, file, "precision");
  s.precision = precision;
  const std::string recompute = spec::to_string(plan.recompute);
  if (use == LaunchUse::job) {
    agree(c, "--tp", p.tp, plan.tp, file, "TP");
    agree(c, "--pp", p.pp, plan.pp, file, "PP");
    agree(c, "--virtual-stages", p.virtual_stages, plan.virtual_stages, file, "virtual stages");
    agree(c, "--cp", p.cp, plan.cp, file, "CP");
    agree(c, "--ep", p.ep, plan.ep, file, "EP");
    agree(c, "--micro-batch", p.micro_batch, plan.micro_batch, file, "micro-batch");
    agree(c, "--zero", p.zero, plan.zero, file, "ZeRO stage");
    agree(c, "--recompute", p.recompute, recompute, file, "recompute");
    agree(c, "--recompute-layers", p.recompute_layers, plan.recompute_layers, file, "recomputed layers per chunk");
    agree(c, "--sp", p.sp, plan.sp, file, "sequence parallelism");
    agree(c, "--no-sp", p.no_sp, !plan.sp, file, "sequence parallelism off");
    agree(c, "--edge-layer-slots", p.edge_layer_slots, plan.edge_layer_slots, file, "edge layer slots");
    if (plan.uneven_stages) agree(c, "--uneven-stages", p.uneven_stages, plan.uneven_stages, file, "uneven stages");
  }
  p.tp = plan.tp;
  p.pp = plan.pp;
  p.virtual_stages = plan.virtual_stages;
  p.cp = plan.cp;
  p.ep = plan.ep;
  p.etp = plan.etp;
  p.sp = plan.sp;
  p.no_sp = !plan.sp;
  p.edge_layer_slots = p.edge_layer_slots || plan.edge_layer_slots;
  p.uneven_stages = p.uneven_stages || plan.uneven_stages;
  p.micro_batch = plan.micro_batch;
  p.zero = plan.zero;
  p.recompute = recompute;
  p.recompute_layers = plan.recompute_layers;
  p.no_overlap_dp = !plan.overlap_dp_comm;
  p.overlap_tp = plan.overlap_tp_comm;
  s.config_notes = job.notes;
  return read;
}

}  // namespace trainplan::app
