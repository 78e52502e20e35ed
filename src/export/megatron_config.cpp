#include "export/megatron_config.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "export/header.h"
#include "export/megatron_args.h"
#include "export/megatron_options.h"
#include "export/optimizer_states_check.h"
#include "export/shell_args.h"
#include "export/refusal.h"
#include "spec/error.h"
#include "spec/one_line.h"

namespace trainplan::exporting {
namespace {

// arguments.py@73a28a10:862-874 asserts CUDA_DEVICE_MAX_CONNECTIONS=1 when TP > 1
// or CP > 1 (before Blackwell) unless FSDP runs, which asserts it is not 1 (:659).
std::string cuda_connections_line(const spec::Plan& p) {
  if (p.zero >= 2) return "export CUDA_DEVICE_MAX_CONNECTIONS=8  # Megatron-FSDP asserts a value other than 1\n";
  if (p.tp > 1 || p.cp > 1) return "export CUDA_DEVICE_MAX_CONNECTIONS=1  # asserted by Megatron-LM when TP > 1 or CP > 1\n";
  return "";
}

// Megatron-LM's uneven pipeline (arguments.py@73a28a10 --decoder-first/last-pipeline-num-layers;
// transformer_config.py:924-975): the first and last stages hold what is given,
// the middle stages split the rest evenly. The stages trainplan prices hold
// ceil(layers / PP) at most: the middle ones hold that, the edges the rest,
// split between them (fewer on the first). None where an edge would hold no layer.
std::optional<std::pair<int, int>> uneven_edges(int layers, int pp) {
  const int busiest = (layers + pp - 1) / pp, edges = layers - (pp - 2) * busiest;
  if (pp < 2 || edges < 2) return std::nullopt;
  return std::pair{edges / 2, edges - edges / 2};
}

}  // namespace

std::string write_megatron(const LaunchJob& job) {
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  if (m.kind != spec::ModelKind::decoder) refuse_megatron("pretrain_gpt.py", "a decoder model; " + m.name + " is an encoder");
  if (m.embedding_norm) refuse_megatron("--num-layers", m.name + " has a norm on the word embeddings, which only bigscience Megatron-DeepSpeed offers (--embed-layernorm)");
  if (m.parallel_residual) refuse_megatron("--num-layers", m.name + " has parallel residual blocks, which Megatron-LM's GPT model has no option for");
  if (m.position == spec::PositionKind::alibi) refuse_megatron("--position-embedding-type", "learned_absolute or rope; ALiBi is not offered");
  if (job.workload.precision == spec::Precision::bf16_sr)
    refuse_megatron("--bf16", "BF16 with stochastic rounding is not a Megatron-LM precision; use --precision mixed-bf16");
  if (job.workload.precision == spec::Precision::fp32_bf16_matmul)
    refuse_megatron("--bf16", "mixed-bf16 or fp32; matmuls auto-cast to BF16 are a Neuron compiler mode");
  const std::optional<std::pair<int, int>> edges = p.uneven_stages ? uneven_edges(m.layers, p.pp) : std::nullopt;
  if (p.uneven_stages && spec::edge_slots_active(p))
    refuse_megatron("--decoder-first-pipeline-num-layers", "uneven stages without edge layer slots (not exported together)");
  if (p.uneven_stages && !edges)
    refuse_megatron("--decoder-first-pipeline-num-layers",
                    "a first and a last stage of at least one layer each beside middle stages of ceil(layers / PP)");
  if (p.sp && p.tp == 1) refuse_megatron("--sequence-parallel", "TP > 1 (Megatron-LM switches sequence parallelism off at TP 1)");
  if (p.overlap_tp_comm && !p.sp) refuse_megatron("--tp-comm-overlap", "--sequence-parallel as well");
  if (p.virtual_stages > 1 && p.pp < 2) refuse_megatron("--num-virtual-stages-per-pipeline-rank", "pipeline parallel size > 1");
  // Megatron-LM's optimizers keep master parameters: FP32, or 16-bit under --use-precision-aware-optimizer
  // --main-params-dtype (arguments.py@73a28a10); none keeps FP32 masters as 16-bit remainders or none at all.
  const bool nemo_keeps = job.optimizer == spec::kBf16Optimizer || job.optimizer == spec::kMasterRemainders;
  check_optimizer_states(job, refuse_megatron, "--use-distributed-optimizer", "Megatron-LM core_r0.13.0",
                         {spec::kFp32Optimizer}, nemo_keeps ? "NeMo's distributed_fused_adam keeps them: export it --to nemo" : "");

  ArgList a;
  auto arg = [&](const std::string& o, const std::string& v = "") { v.empty() ? a.flag(o) : a.text(o, v); };
  auto num = [&](const std::string& o, long long v) { a.number(o, v); };
  num("--tensor-model-parallel-size", p.tp);
  num("--pipeline-model-parallel-size", p.pp);
  if (p.virtual_stages > 1) num("--num-virtual-stages-per-pipeline-rank", p.virtual_stages);
  if (edges) {
    num("--decoder-first-pipeline-num-layers", edges->first);
    num("--decoder-last-pipeline-num-layers", edges->second);
  }
  if (spec::edge_slots_active(p)) {
    arg("--account-for-embedding-in-pipeline-split");
    arg("--account-for-loss-in-pipeline-split");
  }
  if (p.cp > 1) num("--context-parallel-size", p.cp);
  if (m.mla()) {  // arguments.py@73a28a10:1458 and :2819-2828; --qk-head-dim is the part without RoPE
    arg("--multi-latent-attention");
    if (m.q_lora_rank > 0) num("--q-lora-rank", m.q_lora_rank);
    num("--kv-lora-rank", m.kv_lora_rank);
    num("--qk-head-dim", m.qk_nope_head_dim);
    num("--qk-pos-emb-head-dim", m.qk_rope_head_dim);
    num("--v-head-dim", m.v_head_dim);
  }
  if (m.moe()) {
    num("--num-experts", m.experts);
    num("--moe-router-topk", m.top_k);
    num("--moe-ffn-hidden-size", m.expert_ffn_hidden);
    // Leading dense layers as the pattern arguments.py@73a28a10:302-330 (moe_freq_type) evaluates.
    if (m.first_dense_layers > 0)
      arg("--moe-layer-freq", "([0]*" + std::to_string(m.first_dense_layers) + "+[1]*" +
                                  std::to_string(m.layers - m.first_dense_layers) + ")");
    if (m.shared_expert_ffn_hidden > 0) num("--moe-shared-expert-intermediate-size", m.shared_expert_ffn_hidden);
    if (p.ep > 1) num("--expert-model-parallel-size", p.ep);
    if (p.etp > 0 && p.etp != p.tp) num("--expert-tensor-parallel-size", p.etp);
    // Priced as an all-to-all exchange with the experts' GEMMs grouped; the
    // client's defaults are the all-gather dispatcher and one GEMM per expert
    // (arguments.py@73a28a10:2790 default 'allgather', :2725 store_true), so
    // both are stated, as NVIDIA's Mixtral example does.
    // A stack priced with DeepEP's dispatch, tokens sent once per instance (the nemo stack), runs the
    // flex dispatcher with DeepEP (:2791-2795; transformer_config.py@73a28a10:719-721 needs flex with it).
    // core_r0.13.0 has no EP all-to-all overlap: overlap_moe_expert_parallel_comm
    // and its combined 1F1B schedule arrive later (@d98e8a64 model_parallel_config.py:343).
    if (job.ep_a2a_overlap)
      refuse_megatron("--overlap-moe-expert-parallel-comm", "not in Megatron-LM core_r0.13.0 (NVIDIA/Megatron-LM@73a28a10); stack " +
                                                                job.stack_name + " prices the EP all-to-all overlapped with another micro-batch's compute: export with --stack nemo-alltoall");
    if (job.dispatch_once_per_instance) {
      arg("--moe-token-dispatcher-type", "flex");
      arg("--moe-enable-deepep");
    } else {
      arg("--moe-token-dispatcher-type", "alltoall");
    }
    if (job.workload.precision != spec::Precision::fp32) arg("--moe-grouped-gemm");  // BF16 only (:804)
  }
  if (p.sp) arg("--sequence-parallel");
  write_batch_and_sequence(a, job);
  if (job.workload.precision == spec::Precision::fp8) arg("--bf16");
  if (job.workload.precision == spec::Precision::mixed_bf16) arg(job.fp16 ? "--fp16" : "--bf16");
  if (job.workload.precision == spec::Precision::fp8) arg("--fp8-format", "hybrid");  // E4M3 forward, E5M2 gradients
  // BF16 gradient buffers where the stack prices them (arguments.py@73a28a10:683-684); without
  // it Megatron accumulates and reduces in FP32.
  if (job.bf16_grad_reduce && job.workload.precision != spec::Precision::fp32) arg("--grad-reduce-in-bf16");
  if (p.zero == 1) arg("--use-distributed-optimizer");
  // FP8 parameters need the distributed optimizer (arguments.py@73a28a10:642-644).
  if (job.workload.precision == spec::Precision::fp8 && job.fp8_param_gather && p.zero >= 1) arg("--fp8-param-gather");
  if (p.zero >= 2) {  // Megatron-FSDP: arguments.py@73a28a10:646-660 asserts each of these
    arg("--use-custom-fsdp");
    arg("--use-distributed-optimizer");
    arg("--data-parallel-sharding-strategy", p.zero == 2 ? "optim_grads" : "optim_grads_params");
    arg("--no-gradient-accumulation-fusion");
  } else if (!job.fused_grad_accumulation) {
    // A stack priced with gradients accumulated in a pass of their own (the CI's
    // megatron-lm-unfused-attn): the client fuses by default, arguments.py@73a28a10:1941-1945
    // (--no-gradient-accumulation-fusion, store_false into gradient_accumulation_fusion).
    arg("--no-gradient-accumulation-fusion");
  }
  if (p.recompute == spec::Recompute::selective) arg("--recompute-granularity", "selective");
  if (p.recompute == spec::Recompute::full) {
    // block: the first N layers of each model chunk (megatron/core/recompute.py@d98e8a64:167-181)
    arg("--recompute-granularity", "full");
    arg("--recompute-method", p.recompute_layers > 0 ? "block" : "uniform");
    num("--recompute-num-layers", p.recompute_layers > 0 ? p.recompute_layers : 1);
  }
  if (p.overlap_dp_comm) {
    arg("--overlap-grad-reduce");
    if (p.zero == 1) arg("--overlap-param-gather");
  }
  if (p.overlap_tp_comm) arg("--tp-comm-overlap");
  // The attention kernel priced. The client's default 'auto' lets Transformer Engine pick its
  // flash or cuDNN fused kernel (arguments.py@73a28a10:1377); 'unfused' sets NVTE_FLASH_ATTN=0,
  // NVTE_FUSED_ATTN=0, NVTE_UNFUSED_ATTN=1 (core/models/common/language_module/language_module.py
  // @73a28a10:63-66), the score matrix materialised as the unfused stacks price it.
  if (!job.flash_attention) arg("--attention-backend", "unfused");
  write_layer_shape(a, m);
  if (m.kv_heads != m.heads) {
    arg("--group-query-attention");
    num("--num-query-groups", m.kv_heads);
  }
  if (m.position == spec::PositionKind::rotary) {
    arg("--position-embedding-type", "rope");
    write_rotary_percent(a, m);
    arg("--rotary-base", rope_base_text(m));  // default 10000 (arguments.py@73a28a10:1400)
  }
  if (m.qkv_bias && !m.bias) arg("--add-qkv-bias");  // :1909; --disable-bias-linear keeps it off otherwise
  if (m.qk_norm) arg("--qk-layernorm");              // :2690, in the model's --normalization
  arg("--normalization", m.norm == spec::NormKind::rmsnorm ? "RMSNorm" : "LayerNorm");
  write_shared_architecture(a, m);

  std::ostringstream s;
  s << "#!/usr/bin/env bash\n" << header_comment(job, info(LaunchFormat::megatron));
  s << "set -euo pipefail\n";
  s << cuda_connections_line(p);
  if (p.zero >= 2 && job.fused_grad_accumulation)
    s << "# Megatron-FSDP runs without gradient-accumulation fusion; trainplan priced the stack's fused accumulation\n"
         "# (one memory-bound pass over the gradients per micro-batch apart).\n";
  s << "torchrun --nnodes " << job.instances << " --nproc_per_node " << job.devices_per_instance
    << " --node_rank \"${NODE_RANK:-0}\" --master_addr \"${MASTER_ADDR:-localhost}\" --master_port \"${MASTER_PORT:-6000}\" \\\n"
    << "  pretrain_gpt.py \\\n";
  s << a.render();
  s << "  \"$@\"\n";
  return s.str();
}

namespace {

// --moe-layer-freq: 1 (every layer MoE) or "([0]*K+[1]*N)", K leading dense
// layers and N MoE layers adding up to --num-layers, as trainplan writes it;
// other patterns (interleaved dense layers) are not priced.
int read_leading_dense_layers(const ShellArgs& args, const std::string& file, int layers) {
  const std::string freq = args.value("--moe-layer-freq").value_or("1");
  if (freq == "1") return 0;
  int dense = 0, moe = 0;
  char end = 0;
  if (std::sscanf(freq.c_str(), "([0]*%d+[1]*%d%c", &dense, &moe, &end) == 3 && end == ')' && dense >= 1 && moe >= 1 &&
      long(dense) + moe == layers && freq == "([0]*" + std::to_string(dense) + "+[1]*" + std::to_string(moe) + ")")
    return dense;
  throw spec::SpecError(file, "--moe-layer-freq",
                        "1 or ([0]*K+[1]*N): K leading dense layers, then N MoE layers, K + N = --num-layers " +
                            std::to_string(layers) + " (other patterns are not priced), found '" + freq + "'");
}

// --decoder-first/last-pipeline-num-layers as Megatron-LM splits them (see
// uneven_edges): priced as trainplan's uneven stages where the busiest stage
// holds ceil(layers / PP); a split that loads one stage more is refused.
void read_uneven_stages(const ShellArgs& args, const std::string& file, spec::Plan& p) {
  const bool first_given = args.has("--decoder-first-pipeline-num-layers");
  const bool last_given = args.has("--decoder-last-pipeline-num-layers");
  if (!first_given && !last_given) return;
  const std::string option = first_given ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers";
  if (!args.has("--num-layers")) throw spec::SpecError(file, "--num-layers", "the option beside " + option);
  if (p.virtual_stages > 1 || p.edge_layer_slots)
    throw spec::SpecError(file, option, "no interleaving or edge slots beside it (trainplan's uneven stages have neither)");
  constexpr long kBig = 1L << 30;
  const long layers = args.whole("--num-layers", 1, kBig, 1, file);
  const long first = args.whole("--decoder-first-pipeline-num-layers", 1, layers, 0, file);
  const long last = args.whole("--decoder-last-pipeline-num-layers", 1, layers, 0, file);
  const long middle_stages = p.pp - (first_given ? 1 : 0) - (last_given ? 1 : 0);
  const long middle_layers = layers - first - last;
  if (middle_stages < 0 || middle_layers < 0 || (middle_stages == 0 && middle_layers != 0) ||
      (middle_stages > 0 && middle_layers % middle_stages != 0))
    throw spec::SpecError(file, option,
                          "first and last stages whose layers leave the middle stages an even share of --num-layers " +
                              std::to_string(layers) + " over --pipeline-model-parallel-size " + std::to_string(p.pp) +
                              " (transformer_config.py@73a28a10:970 asserts it)");
  const long per_middle = middle_stages > 0 ? middle_layers / middle_stages : 0;
  const long busiest = std::max({first, last, per_middle}), ceiling = (layers + p.pp - 1) / p.pp;
  if (busiest > ceiling)
    throw spec::SpecError(file, option,
                          "a split whose busiest stage holds ceil(layers / PP) = " + std::to_string(ceiling) +
                              " layers, as trainplan prices uneven stages; this one holds " + std::to_string(busiest));
  p.uneven_stages = layers % p.pp != 0 || first != per_middle || last != per_middle;
}

}  // namespace

LaunchJob read_megatron(const std::string& text, const std::string& file) {
  const ShellArgs args = parse_shell_args(text, file);
  LaunchJob job;
  read_header(text, job);
  auto whole = [&](const std::string& o, long min, long max, long fallback) { return args.whole(o, min, max, fallback, file); };
  auto required = [&](const std::string& o, long min, long max) {
    if (!args.has(o)) throw spec::SpecError(file, o, "the option (Megatron-LM requires it)");
    return whole(o, min, max, 0);
  };
  constexpr long kBig = 1L << 30;
  spec::Plan& p = job.plan;
  job.instances = int(whole("--nnodes", 1, kBig, 0));
  job.instances_from_environment = args.from_environment.count(args.has("--nnodes") ? "--nnodes" : "--num_nodes") > 0;
  job.devices_per_instance = int(whole("--nproc_per_node", 1, 1024, whole("--nproc-per-node", 1, 1024, 0)));
  job.devices_per_instance_option =
      args.has("--nproc_per_node") ? "--nproc_per_node" : args.has("--nproc-per-node") ? "--nproc-per-node" : "";
  p.instances = job.instances;
  p.tp = int(whole("--tensor-model-parallel-size", 1, kBig, 1));
  p.pp = int(whole("--pipeline-model-parallel-size", 1, kBig, 1));
  p.virtual_stages = int(whole("--num-virtual-stages-per-pipeline-rank", 1, kBig, 1));
  if (args.has("--num-layers-per-virtual-pipeline-stage")) {
    const long per = whole("--num-layers-per-virtual-pipeline-stage", 1, kBig, 1);
    if (!args.has("--num-layers"))  // read as 0 layers, it gave 0 virtual stages
      throw spec::SpecError(file, "--num-layers", "the option beside --num-layers-per-virtual-pipeline-stage");
    const long layers = whole("--num-layers", 1, kBig, 0);
    if (layers % (per * p.pp) != 0)
      throw spec::SpecError(file, "--num-layers-per-virtual-pipeline-stage",
                            "a divisor of num-layers / pipeline-model-parallel-size (" + std::to_string(layers) + " / " +
                                std::to_string(p.pp) + ")");
    p.virtual_stages = int(layers / (per * p.pp));
  }
  p.cp = int(whole("--context-parallel-size", 1, kBig, 1));
  p.ep = int(whole("--expert-model-parallel-size", 1, kBig, 1));
  p.etp = int(whole("--expert-tensor-parallel-size", 1, kBig, 0));  // absent: TP's degree
  // Megatron-LM switches sequence parallelism off at TP 1 (arguments.py@73a28a10:884-888, a warning).
  p.sp = args.has("--sequence-parallel") && p.tp > 1;
  if (args.has("--sequence-parallel") && p.tp == 1)
    job.notes.push_back("--sequence-parallel at TP 1 read as off, as Megatron-LM switches it off");
  const bool embedding_slot = args.has("--account-for-embedding-in-pipeline-split");
  if (embedding_slot != args.has("--account-for-loss-in-pipeline-split"))
    throw spec::SpecError(file, "--account-for-loss-in-pipeline-split",
                          "both --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split, "
                          "or neither (trainplan models the two edge slots together)");
  p.edge_layer_slots = embedding_slot;
  read_uneven_stages(args, file, p);
  p.micro_batch = int(required("--micro-batch-size", 1, kBig));
  job.workload.global_batch_seqs = whole("--global-batch-size", 1, kBig, 0);
  job.workload.seq_len = int(required("--seq-length", 1, kBig));
  if (args.has("--bf16") && args.has("--fp16")) throw spec::SpecError(file, "--fp16", "not with --bf16");
  // FP16 runs the same tensor-core GEMMs as BF16; loss scaling is not priced.
  if (args.has("--fp16")) job.notes.push_back("--fp16 priced as mixed BF16 (same GEMM rate; loss scaling not priced)");
  job.workload.precision = args.has("--bf16") || args.has("--fp16") ? spec::Precision::mixed_bf16 : spec::Precision::fp32;
  job.fp16 = args.has("--fp16");
  if (args.has("--fp8-format")) {
    const std::string format = args.value("--fp8-format").value_or("");
    if (format != "hybrid" && format != "e4m3") throw spec::SpecError(file, "--fp8-format", "e4m3 or hybrid, found '" + format + "'");
    if (!args.has("--bf16") || args.has("--fp16")) throw spec::SpecError(file, "--fp8-format", "--bf16 as well (trainplan models FP8 over mixed BF16)");
    job.workload.precision = spec::Precision::fp8;
  }
  // FP8 parameters (the app prices them as the file states, app/launch.cpp): Megatron-LM
  // refuses them without FP8 (transformer_config.py@73a28a10:698-699) and without the
  // distributed optimizer or torch FSDP2 (arguments.py@73a28a10:642-644).
  job.fp8_param_gather = args.has("--fp8-param-gather");
  if (job.fp8_param_gather && job.workload.precision != spec::Precision::fp8)
    throw spec::SpecError(file, "--fp8-param-gather", "--fp8-format as well (Megatron-LM: fp8_param must be used together with fp8 mode)");
  if (job.fp8_param_gather && !args.has("--use-distributed-optimizer") && !args.has("--use-torch-fsdp2"))
    throw spec::SpecError(file, "--fp8-param-gather",
                          "--use-distributed-optimizer or --use-torch-fsdp2 beside it (Megatron-LM core_r0.13.0 asserts it)");
  // The megatron-lm stack prices FP32 gradient buffers; a job that reduces in BF16
  // runs as stacks/megatron-lm-bf16-grads.json prices it.
  job.bf16_grad_reduce = args.has("--grad-reduce-in-bf16") && job.workload.precision != spec::Precision::fp32;
  if (job.bf16_grad_reduce && job.stack_name.empty()) job.stack_name = "megatron-lm-bf16-grads";
  else if (job.bf16_grad_reduce && job.stack_name == "megatron-lm")
    job.notes.push_back("--grad-reduce-in-bf16: Megatron keeps BF16 gradient buffers; the header's megatron-lm stack "
                        "prices FP32 ones, 2 bytes per parameter more (stack megatron-lm-bf16-grads prices BF16)");
  p.zero = 0;
  if (args.has("--use-distributed-optimizer")) p.zero = 1;
  if (args.has("--use-custom-fsdp") && !args.has("--use-distributed-optimizer"))
    throw spec::SpecError(file, "--use-distributed-optimizer",
                          "the option beside --use-custom-fsdp (Megatron-LM core_r0.13.0 asserts it)");
  if (args.has("--use-custom-fsdp") || args.has("--use-megatron-fsdp")) {
    const std::string s = args.value("--data-parallel-sharding-strategy").value_or("no_shard");
    if (s == "optim") p.zero = 1;
    else if (s == "optim_grads") p.zero = 2;
    else if (s == "optim_grads_params") p.zero = 3;
    else if (s != "no_shard")
      throw spec::SpecError(file, "--data-parallel-sharding-strategy", "no_shard, optim, optim_grads or optim_grads_params");
  }
  if (args.has("--use-torch-fsdp2")) p.zero = 3;
  const std::string granularity =
      args.has("--recompute-activations") ? "selective" : args.value("--recompute-granularity").value_or("");
  if (granularity.empty()) p.recompute = spec::Recompute::none;
  else if (!spec::parse_recompute(granularity, p.recompute) || p.recompute == spec::Recompute::none)
    throw spec::SpecError(file, "--recompute-granularity", "full or selective, found '" + granularity + "'");
  if (p.recompute == spec::Recompute::full) {
    const std::string method = args.value("--recompute-method").value_or("uniform");
    const int layers = int(whole("--recompute-num-layers", 1, kBig, 1));
    if (method == "block") p.recompute_layers = layers;  // the first N of each chunk
    else if (method != "uniform" || layers != 1)
      throw spec::SpecError(file, "--recompute-method",
                            "uniform with --recompute-num-layers 1 (every layer its own checkpoint) or block (the first N "
                            "layers of each chunk); uniform groups of N > 1 layers are not modelled");
  }
  // The attention kernel and the accumulation as the file runs them (see write_megatron); a
  // script without trainplan's header that asks for the unfused kernel is priced as
  // stacks/megatron-lm-unfused-attn.json prices it (the app notes what differs from the stack).
  const std::string backend = args.value("--attention-backend").value_or("auto");
  if (backend != "auto" && backend != "flash" && backend != "fused" && backend != "unfused" && backend != "local")
    throw spec::SpecError(file, "--attention-backend", "flash, fused, unfused, local or auto, found '" + backend + "'");
  job.flash_attention = backend != "unfused" && backend != "local";
  job.fused_grad_accumulation = !args.has("--no-gradient-accumulation-fusion");
  if (!job.flash_attention && job.stack_name.empty()) job.stack_name = "megatron-lm-unfused-attn";
  p.overlap_dp_comm = args.has("--overlap-grad-reduce");
  args.has("--overlap-param-gather");  // the distributed optimizer's gather, priced with the DP overlap
  p.overlap_tp_comm = args.has("--tp-comm-overlap");
  if (p.overlap_tp_comm && !p.sp) throw spec::SpecError(file, "--tp-comm-overlap", "--sequence-parallel as well");

  spec::ModelSpec& m = job.model;
  if (read_architecture_head(args, file, "--vocab-size", job)) {
    m.kv_heads = args.has("--group-query-attention") ? int(whole("--num-query-groups", 1, m.heads, 1)) : m.heads;
    if (m.heads % m.kv_heads != 0)  // each group serves heads / groups query heads; the HF reader refuses the same
      throw spec::SpecError(file, "--num-query-groups",
                            "a divisor of --num-attention-heads " + std::to_string(m.heads) + ", found " +
                                std::to_string(m.kv_heads));
    m.mlp = args.has("--swiglu") ? spec::MlpKind::swiglu : spec::MlpKind::gelu;
    m.ffn_hidden =
        read_ffn_hidden(args, file, m.mlp == spec::MlpKind::swiglu ? long(m.hidden) * 8 / 3 / 64 * 64 : 4L * m.hidden);
    const std::string norm = args.value("--normalization").value_or("LayerNorm");
    if (norm != "LayerNorm" && norm != "RMSNorm") throw spec::SpecError(file, "--normalization", "LayerNorm or RMSNorm");
    m.norm = norm == "RMSNorm" ? spec::NormKind::rmsnorm : spec::NormKind::layernorm;
    const std::string position = args.value("--position-embedding-type").value_or("learned_absolute");
    if (position == "rope") {
      m.position = spec::PositionKind::rotary;
      m.rotary_fraction = read_rotary_percent(args, file);
      m.rope_theta = double(whole("--rotary-base", 1, kBig, 10000));
    } else if (position == "learned_absolute") {
      m.position = spec::PositionKind::learned;
    } else {
      throw spec::SpecError(file, "--position-embedding-type", "learned_absolute or rope, found '" + position + "'");
    }
    read_shared_architecture(args, file, job);
    m.qkv_bias = !m.bias && args.has("--add-qkv-bias");
    m.qk_norm = args.has("--qk-layernorm");
    if (args.has("--multi-latent-attention")) {  // the client's defaults where an option is absent
      m.q_lora_rank = int(whole("--q-lora-rank", 1, kBig, 0));
      m.kv_lora_rank = int(whole("--kv-lora-rank", 1, kBig, 32));
      m.qk_nope_head_dim = int(whole("--qk-head-dim", 1, kBig, 128));
      m.qk_rope_head_dim = int(whole("--qk-pos-emb-head-dim", 1, kBig, 64));
      m.v_head_dim = int(whole("--v-head-dim", 1, kBig, 128));
    }
    m.first_dense_layers = read_leading_dense_layers(args, file, m.layers);
    if (args.has("--num-experts")) {  // defaults as arguments.py gives them (topk 2, expert FFN = --ffn-hidden-size)
      m.experts = int(whole("--num-experts", 1, kBig, 0));
      m.top_k = int(whole("--moe-router-topk", 1, m.experts, 2));
      m.expert_ffn_hidden = int(whole("--moe-ffn-hidden-size", 1, kBig, m.ffn_hidden));
      m.shared_expert_ffn_hidden = int(whole("--moe-shared-expert-intermediate-size", 1, kBig, 0));
      // trainplan prices the all-to-all exchange and grouped expert GEMMs (see write_megatron); the
      // client's defaults are the all-gather dispatcher and one GEMM per expert (arguments.py@73a28a10:2790, :2725).
      const std::string dispatcher = args.value("--moe-token-dispatcher-type").value_or("allgather");
      job.dispatch_once_per_instance = dispatcher == "flex" && args.has("--moe-enable-deepep");
      // The script's value is echoed in the note one line ("all\ngather" in quotes holds a newline).
      if (dispatcher != "alltoall" && !job.dispatch_once_per_instance)
        job.notes.push_back("--moe-token-dispatcher-type " + spec::one_line(dispatcher, 200) +
                            ": the script dispatches tokens by " + spec::one_line(dispatcher, 200) +
                            (dispatcher == "flex" ? " without --moe-enable-deepep" : "") +
                            "; trainplan prices the all-to-all exchange");
      if (!args.has("--moe-grouped-gemm"))
        job.notes.push_back("no --moe-grouped-gemm: the script runs one GEMM per local expert; trainplan prices them grouped");
    }
  } else {  // a partial architecture: what it states, for a named model to be held against
    m.ffn_hidden = int(whole("--ffn-hidden-size", 1, kBig, 0));
    m.experts = int(whole("--num-experts", 1, kBig, 0));
    // The layer as the client builds it from the script: an option left out is the client's
    // default (arguments.py@73a28a10: LayerNorm, learned positions, GELU, biases, RoPE base 10000).
    auto state = [&](const std::string& option, const std::string& value, std::string (*of_model)(const spec::ModelSpec&)) {
      job.stated.push_back({option, value, of_model});
    };
    if (m.heads > 0)
      state("--num-query-groups",
            args.has("--group-query-attention") ? std::to_string(whole("--num-query-groups", 1, kBig, 1)) : std::to_string(m.heads),
            stated_kv_heads);
    const std::string norm = args.value("--normalization").value_or("LayerNorm");
    state("--normalization", norm == "RMSNorm" ? "rmsnorm" : norm == "LayerNorm" ? "layernorm" : norm, stated_norm);
    state("--swiglu", args.has("--swiglu") ? "swiglu" : args.has("--squared-relu") ? "squared-relu" : "gelu", stated_mlp);
    const std::string position = args.value("--position-embedding-type").value_or("learned_absolute");
    state("--position-embedding-type", position, stated_position);
    if (position == "rope") state("--rotary-base", std::to_string(whole("--rotary-base", 1, kBig, 10000)), stated_rope_base);
    state("--disable-bias-linear", args.has("--disable-bias-linear") ? "false" : "true", stated_bias);
    state("--add-qkv-bias", args.has("--add-qkv-bias") && args.has("--disable-bias-linear") ? "true" : "false", stated_qkv_bias);
    state("--qk-layernorm", args.has("--qk-layernorm") ? "true" : "false", stated_qk_norm);
    if (m.experts > 0) state("--moe-router-topk", std::to_string(whole("--moe-router-topk", 1, kBig, 2)), stated_top_k);
  }
  std::vector<std::string> unread, unknown;
  for (const std::string& option : args.unconsulted())
    (megatron_lm_or_torchrun_parses(option) ? unread : unknown).push_back(option);
  if (const std::string note = unread_options_note(unread); !note.empty()) job.notes.push_back(note);
  if (!unknown.empty()) {
    std::string note = "options Megatron-LM core_r0.13.0 and torchrun do not define (that release stops on them: "
                       "'unrecognized arguments'; a later one may read them), not read:";
    for (const std::string& option : unknown) note += " " + spec::one_line(option, 200);
    job.notes.push_back(note);
  }
  return job;
}

}  // namespace trainplan::exporting
