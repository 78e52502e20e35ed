#include "export/habana_config.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "export/header.h"
#include "export/launch_format.h"
#include "export/optimizer_states_check.h"
#include "export/read_values.h"
#include "export/refusal.h"
#include "spec/error.h"

namespace trainplan::exporting {
namespace {

// The Llamas run_llama.sh builds (HabanaAI/Megatron-DeepSpeed@891d6db95279ec28412e0b31ae78a58aaad3c080
// scripts/run_llama.sh:104-229): HL_LLAMA_VER picks the family and its RoPE base, sequence and
// global batch defaults, HL_LLAMA_MODEL_SIZE the shape; HL_NUM_LAYERS may replace the layer
// count. The vocabulary is the tokenizer's the family's default tokenizer type loads
// (GPTSentencePieceTokenizer on Llama's tokenizer.model, 32,000; Llama3Tokenizer, 128,256),
// as models/llama2-*.json and models/llama3.1-*.json state them.
struct RunLlamaModel {
  const char* version;
  int size_b, layers, hidden, heads, kv_heads, ffn;
  double rope_theta;
  int vocab, default_seq, default_global_batch;
};
// Newest family first: a shape two families share (Llama and Llama 2 at 7B and 13B) is written as the newer.
constexpr RunLlamaModel kModels[] = {
    {"3.1", 8, 32, 4096, 32, 8, 14336, 500000, 128256, 8192, 2048},
    {"3.1", 70, 80, 8192, 64, 8, 28672, 500000, 128256, 8192, 2048},
    {"3.1", 405, 126, 16384, 128, 8, 53248, 500000, 128256, 8192, 2048},
    {"2", 7, 32, 4096, 32, 32, 11008, 10000, 32000, 4096, 1024},
    {"2", 13, 40, 5120, 40, 40, 13824, 10000, 32000, 4096, 1024},
    {"2", 34, 48, 8192, 64, 8, 22016, 10000, 32000, 4096, 1024},
    {"2", 70, 80, 8192, 64, 8, 28672, 10000, 32000, 4096, 1024},
    {"1", 7, 32, 4096, 32, 32, 11008, 10000, 32000, 2048, 2048},
    {"1", 13, 40, 5120, 40, 40, 13824, 10000, 32000, 2048, 2048},
    {"1", 65, 80, 8192, 64, 64, 22016, 10000, 32000, 2048, 2048},
};

std::string sizes_of_run_llama() {
  std::string out;
  for (const RunLlamaModel& r : kModels)
    out += std::string(out.empty() ? "" : ", ") + "Llama " + r.version + " " + std::to_string(r.size_b) + "B";
  return out;
}

// The layer run_llama.sh builds: RMSNorm before each sublayer, SwiGLU, rotary positions over
// the whole head, no biases, untied embeddings, no dropout by default (its pretrain_gpt.py
// arguments: --normalization rmsnorm --swiglu --use-rotary-position-embeddings
// --disable-bias-linear --untie-embeddings-and-output-weights, HL_DROPOUT 0.0).
bool llama_layer(const spec::ModelSpec& m) {
  return m.kind == spec::ModelKind::decoder && m.norm == spec::NormKind::rmsnorm && m.mlp == spec::MlpKind::swiglu &&
         m.position == spec::PositionKind::rotary && m.rotary_fraction == 1.0 && !m.bias && !m.qkv_bias && !m.qk_norm &&
         !m.tied_embeddings && !m.parallel_residual && !m.embedding_norm && !m.moe() && !m.mla() &&
         (m.explicit_head_dim == 0 || long(m.explicit_head_dim) * m.heads == m.hidden);
}

const RunLlamaModel* table_row(const spec::ModelSpec& m) {
  if (!llama_layer(m)) return nullptr;
  const double theta = m.rope_theta > 0 ? m.rope_theta : 10000;
  for (const RunLlamaModel& r : kModels)
    if (m.hidden == r.hidden && m.heads == r.heads && m.kv_heads == r.kv_heads && m.ffn_hidden == r.ffn &&
        theta == r.rope_theta && m.vocab == r.vocab)
      return &r;
  return nullptr;
}

}  // namespace

std::string write_habana(const LaunchJob& job) {
  const Refusal& refuse = refuse_habana;
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  const RunLlamaModel* row = table_row(m);
  if (!row)
    refuse("--model", m.name + ": a Llama run_llama.sh builds (" + sizes_of_run_llama() +
                          ": RMSNorm, SwiGLU, full rotary positions, no biases, untied embeddings; its layer count "
                          "may differ through HL_NUM_LAYERS)");
  if (m.dropout) refuse("--model", m.name + " trains with dropout; run_llama.sh's HL_DROPOUT is one rate for both dropouts, which the model does not state");
  // DeepSpeed's pipeline engine runs one schedule (1F1B) with no interleaving, and refuses ZeRO-2
  // and -3 (HabanaAI/DeepSpeed@907611fe, the 1.18.0 branch, deepspeed/runtime/pipe/engine.py: 'ZeRO-2 and ZeRO-3 are
  // incompatible with pipeline parallelism'); run_llama.sh builds the pipeline model even at PP 1.
  if (p.virtual_stages > 1) refuse("--virtual-stages", "1: DeepSpeed's pipeline engine, which run_llama.sh runs, has no interleaved schedule");
  if (p.cp > 1) refuse("--cp", "1: run_llama.sh sets no context parallelism");
  if (p.edge_layer_slots)
    refuse("--edge-layer-slots", "off: the fork's GPTModelPipe splits the transformer layers alone (partition_method 'type:transformer', megatron/model/gpt_model.py)");
  // With BF16 DeepSpeed shards the FP32 states over DP at stage 0 too (its BF16 optimizer), so
  // trainplan's ZeRO 1 is either of run_llama.sh's HL_ZERO_STAGE 0 and 1 (as the deepspeed format).
  if (p.zero > 1) refuse("--zero", "1: DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3");
  if (p.zero == 0) refuse("--zero", "1: with BF16, DeepSpeed's BF16 optimizer always shards the FP32 states over DP");
  // Its BF16 optimizer steps FP32 master partitions with FP32 Adam moments (stacks/megatron-deepspeed-habana.json).
  check_optimizer_states(job, refuse, "HL_ZERO_STAGE", "Intel Gaudi DeepSpeed 1.19.0's BF16 optimizer", {spec::kFp32Optimizer});
  if (p.overlap_tp_comm) refuse("--overlap-tp", "off: the fork has no TP communication overlap");
  // megatron/model/transformer.py:616-617 core.utils.divide(num_key_value_heads, world_size), and the heads likewise.
  if (m.kv_heads % p.tp != 0 || m.heads % p.tp != 0)
    refuse("--tp", "a divisor of " + m.name + "'s " + std::to_string(m.kv_heads) +
                       " KV heads: the fork splits them over TP, as run_llama.sh's table says ('must be divisible by TP')");
  const bool fp8 = job.workload.precision == spec::Precision::fp8;
  if ((job.workload.precision != spec::Precision::mixed_bf16 && !fp8) || job.fp16)
    refuse("--precision", "mixed-bf16 or fp8: run_llama.sh passes --bf16 and enables DeepSpeed's bf16 (its FP8 runs over it)");
  // Which DeepSpeed optimizer, told by the gradients the stack accumulates (HabanaAI/DeepSpeed@907611fe
  // deepspeed/runtime/engine.py get_data_types: FP32 for BF16 without ZeRO, the model's BF16 under
  // ZeRO): stage 0's BF16 optimizer with FP32 accumulation (stack megatron-deepspeed-habana-bf16-optimizer,
  // the Llama 2 70B FP8 recipe), stage 1's ZeRO optimizer with BF16 (stack megatron-deepspeed-habana,
  // whose recipes also write HL_GRAD_ACCUM_DTYPE=bf16).
  const int zero_stage = job.bf16_grad_reduce ? 1 : 0;
  const long world = long(job.instances) * job.devices_per_instance;
  const long model_parallel = long(p.tp) * p.pp;
  if (world <= 0 || world % model_parallel != 0)
    refuse("--instances", "a device count TP x PP divides (run_llama.sh: NUM_NODES*DEVICES_PER_NODE == DP*TP*PP)");
  const bool layers_written = m.layers != row->layers;
  if (layers_written && m.layers % p.pp != 0)
    refuse("--pp", "a divisor of the " + std::to_string(m.layers) + " layers (run_llama.sh: 'HL_NUM_LAYERS must be divisible by PP')");

  std::ostringstream s;
  s << "#!/usr/bin/env bash\n" << header_comment(job, info(LaunchFormat::habana));
  s << "# Runs scripts/run_llama.sh of a HabanaAI/Megatron-DeepSpeed checkout at the 1.19.0 branch (set\n"
       "# MEGATRON_DEEPSPEED_ROOT) in the Intel Gaudi 1.19.0 container. Set HL_DATA_DIR_ROOT, HL_DATA_FILE_PREFIX\n"
       "# and HL_TOKENIZER_MODEL for your data"
    << (job.instances > 1 ? ", and HL_HOSTSFILE (one line per node) for the nodes" : "") << ".\n";
  auto set = [&s](const std::string& name, const std::string& value) { s << "export " << name << "=" << value << "\n"; };
  set("HL_LLAMA_VER", row->version);
  set("HL_LLAMA_MODEL_SIZE", std::to_string(row->size_b));
  if (layers_written) set("HL_NUM_LAYERS", std::to_string(m.layers));
  set("HL_NUM_NODES", std::to_string(job.instances));
  set("HL_DEVICES_PER_NODE", std::to_string(job.devices_per_instance));
  set("HL_DP", std::to_string(world / model_parallel));
  set("HL_TP", std::to_string(p.tp));
  set("HL_PP", std::to_string(p.pp));
  set("HL_MICRO_BATCH", std::to_string(p.micro_batch));
  set("HL_GBS", std::to_string(job.workload.global_batch_seqs));
  set("HL_SEQ_LEN", std::to_string(job.workload.seq_len));
  set("HL_ZERO_STAGE", std::to_string(zero_stage));
  if (job.bf16_grad_reduce) set("HL_GRAD_ACCUM_DTYPE", "bf16");
  // The fork switches sequence parallelism off at TP 1 (megatron/arguments.py validate_args).
  set("HL_SEQ_PARALLEL", p.sp && p.tp > 1 ? "1" : "0");
  // 0 none; 1 --recompute-granularity=full --recompute-method uniform; 2 selective (the fused
  // attention core checkpointed): run_llama.sh CKP_ACT.
  set("HL_CKP_ACT", p.recompute == spec::Recompute::full ? "1" : p.recompute == spec::Recompute::selective ? "2" : "0");
  set("HL_USE_FUSED_SDPA", job.flash_attention ? "1" : "0");
  if (fp8) {
    // Transformer Engine's FP8 GEMMs with the FP8 weight copies cached across micro-batches, as
    // the stack prices them and the README's FP8 recipes run (HL_USE_CACHE_FP8_WEIGHT(_FWD)=1).
    set("HL_USE_TRANSFORMER_ENGINE", "1");
    set("HL_USE_CACHE_FP8_WEIGHT", "1");
    set("HL_USE_CACHE_FP8_WEIGHT_FWD", "1");
  }
  s << "\"$MEGATRON_DEEPSPEED_ROOT\"/scripts/run_llama.sh\n";
  return s.str();
}

namespace {

// The last command that runs run_llama.sh, or none.
const ShellArgs::Command* run_llama_command(const ShellArgs& script) {
  const ShellArgs::Command* found = nullptr;
  for (const ShellArgs::Command& c : script.commands) {
    const std::size_t slash = c.name.find_last_of('/');
    if ((slash == std::string::npos ? c.name : c.name.substr(slash + 1)) == "run_llama.sh") found = &c;
  }
  return found;
}

}  // namespace

bool runs_habana_llama(const ShellArgs& script) { return run_llama_command(script) != nullptr; }

LaunchJob read_habana(const ShellArgs& script, const std::string& text, const std::string& file) {
  LaunchJob job;
  read_header(text, job);
  const ShellArgs::Command* command = run_llama_command(script);
  if (!command) throw spec::SpecError(file, "", "a command running scripts/run_llama.sh");
  // What run_llama.sh sees: the script's exported variables and the command's own prefixes;
  // a plain assignment on a line of its own stays in the shell and does not reach it.
  const std::map<std::string, std::string> env = script.environment_of(*command);
  std::set<std::string> read;
  auto setting = [&](const std::string& name) -> std::optional<std::string> {
    read.insert(name);
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  constexpr long kBig = 1L << 30;
  // run_llama.sh's own defaults where the script is silent (scripts/run_llama.sh:16-85).
  auto whole = [&](const std::string& name, long min, long max, long fallback) {
    const auto v = setting(name);
    return v ? whole_number(*v, file, name, min, max) : fallback;
  };
  const std::string version = setting("HL_LLAMA_VER").value_or("3.1");
  const long size = whole("HL_LLAMA_MODEL_SIZE", 1, kBig, 8);
  const RunLlamaModel* row = nullptr;
  for (const RunLlamaModel& r : kModels)
    if (version == r.version && size == r.size_b) row = &r;
  if (!row)
    throw spec::SpecError(file, "HL_LLAMA_VER/HL_LLAMA_MODEL_SIZE",
                          "a Llama run_llama.sh builds (" + sizes_of_run_llama() + "), found Llama " + version + " " +
                              std::to_string(size) + "B");
  spec::Plan& p = job.plan;
  job.instances = int(whole("HL_NUM_NODES", 1, kBig, 1));
  job.devices_per_instance = int(whole("HL_DEVICES_PER_NODE", 1, 1024, 8));
  job.devices_per_instance_option = "HL_DEVICES_PER_NODE";
  p.instances = job.instances;
  const long dp = whole("HL_DP", 1, kBig, 2);
  p.tp = int(whole("HL_TP", 1, kBig, 2));
  p.pp = int(whole("HL_PP", 1, kBig, 2));
  if (double(job.instances) * job.devices_per_instance != double(dp) * p.tp * p.pp)
    throw spec::SpecError(file, "HL_DP",
                          "HL_NUM_NODES x HL_DEVICES_PER_NODE = HL_DP x HL_TP x HL_PP, as run_llama.sh checks (" +
                              std::to_string(job.instances) + " x " + std::to_string(job.devices_per_instance) + " against " +
                              std::to_string(dp) + " x " + std::to_string(p.tp) + " x " + std::to_string(p.pp) + ")");
  if (whole("HL_NO_PIPELINE_PARALLEL", 0, 1, 0) == 1)
    throw spec::SpecError(file, "HL_NO_PIPELINE_PARALLEL",
                          "0: trainplan's Gaudi stacks price the fork's DeepSpeed pipeline model, which run_llama.sh builds by default");
  p.micro_batch = int(whole("HL_MICRO_BATCH", 1, kBig, 1));
  job.workload.global_batch_seqs = whole("HL_GBS", 1, kBig, row->default_global_batch);
  job.workload.seq_len = int(whole("HL_SEQ_LEN", 1, kBig, row->default_seq));
  const long stage = whole("HL_ZERO_STAGE", 0, 3, 0);
  if (stage > 1)
    throw spec::SpecError(file, "HL_ZERO_STAGE", "0 or 1: DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3");
  // Both stages shard the FP32 states over DP under BF16 (stage 0 through DeepSpeed's BF16 optimizer):
  // trainplan's ZeRO 1, with FP32 accumulation at stage 0 and the model's BF16 at stage 1 (see write_habana).
  p.zero = 1;
  const std::string accumulation = setting("HL_GRAD_ACCUM_DTYPE").value_or("");
  if (!accumulation.empty() && accumulation != "bf16" && accumulation != "fp32")
    throw spec::SpecError(file, "HL_GRAD_ACCUM_DTYPE", "bf16, fp32 or unset, found '" + accumulation + "'");
  const bool bf16_accumulation = accumulation.empty() ? stage == 1 : accumulation == "bf16";
  if (bf16_accumulation != (stage == 1))
    throw spec::SpecError(file, "HL_GRAD_ACCUM_DTYPE",
                          std::string(stage == 1 ? "bf16 or unset at HL_ZERO_STAGE 1" : "fp32 or unset at HL_ZERO_STAGE 0") +
                              ": trainplan's Gaudi stacks price DeepSpeed's ZeRO optimizer with BF16 accumulation (stage 1) "
                              "and its BF16 optimizer with FP32 accumulation (stage 0)");
  job.bf16_grad_reduce = stage == 1;
  if (stage == 0)
    job.notes.push_back("HL_ZERO_STAGE 0 with BF16: DeepSpeed's BF16 optimizer shards the FP32 master weights and Adam "
                        "state over DP, priced as ZeRO 1 with FP32 gradient accumulation");
  if (job.stack_name.empty())
    job.stack_name = stage == 1 ? "megatron-deepspeed-habana" : "megatron-deepspeed-habana-bf16-optimizer";
  const bool sequence_parallel = whole("HL_SEQ_PARALLEL", 0, 1, 1) == 1;
  p.sp = sequence_parallel && p.tp > 1;
  if (sequence_parallel && p.tp == 1)
    job.notes.push_back("HL_SEQ_PARALLEL 1 at TP 1 read as off, as the fork switches it off");
  switch (whole("HL_CKP_ACT", 0, 4, 0)) {
    case 0: p.recompute = spec::Recompute::none; break;
    case 1: p.recompute = spec::Recompute::full; break;
    case 2: p.recompute = spec::Recompute::selective; break;
    default:
      throw spec::SpecError(file, "HL_CKP_ACT",
                            "0 (none), 1 (full, uniform) or 2 (selective): trainplan does not model "
                            "PyTorch's checkpointing of HL_CKP_ACT 4");
  }
  job.flash_attention = whole("HL_USE_FUSED_SDPA", 0, 1, 1) == 1;
  job.workload.precision = whole("HL_USE_TRANSFORMER_ENGINE", 0, 1, 0) == 1 ? spec::Precision::fp8 : spec::Precision::mixed_bf16;
  const bool cached = whole("HL_USE_CACHE_FP8_WEIGHT", 0, 1, 0) == 1;
  const bool cached_forward = whole("HL_USE_CACHE_FP8_WEIGHT_FWD", 0, 1, 0) == 1;
  if (job.workload.precision == spec::Precision::fp8 && !(cached && cached_forward))
    job.notes.push_back("HL_USE_CACHE_FP8_WEIGHT(_FWD): the file does not cache every FP8 weight copy across "
                        "micro-batches; the stack prices them cached (memory) and cast once per step");
  p.overlap_dp_comm = false;  // run_llama.sh's ds_config sets no overlap_comm
  const std::string position = setting("HL_POSITION_EMBEDDING_TYPE").value_or("rotary");
  if (position != "rotary")
    throw spec::SpecError(file, "HL_POSITION_EMBEDDING_TYPE", "rotary: trainplan reads run_llama.sh's Llamas with their rotary positions");
  if (whole("HL_USE_LAZY_MODE", 0, 1, 1) == 0)
    job.notes.push_back("HL_USE_LAZY_MODE 0: the fork's eager or torch.compile mode; the stack prices lazy mode");

  if (row->kv_heads % p.tp != 0 || row->heads % p.tp != 0)
    throw spec::SpecError(file, "HL_TP",
                          "a divisor of the " + std::to_string(row->kv_heads) + " KV heads of Llama " + row->version + " " +
                              std::to_string(row->size_b) + "B: the fork splits them over TP (megatron/model/transformer.py "
                              "core.utils.divide)");
  spec::ModelSpec& m = job.model;
  job.has_architecture = true;
  m.name = "Llama " + std::string(row->version) + " " + std::to_string(row->size_b) + "B (run_llama.sh)";
  m.source_file = file;
  m.source = "HabanaAI/Megatron-DeepSpeed@891d6db scripts/run_llama.sh, HL_LLAMA_VER " + std::string(row->version) +
             " HL_LLAMA_MODEL_SIZE " + std::to_string(row->size_b);
  m.kind = spec::ModelKind::decoder;
  m.layers = int(whole("HL_NUM_LAYERS", 1, kBig, row->layers));
  if (env.count("HL_NUM_LAYERS") && m.layers % p.pp != 0)
    throw spec::SpecError(file, "HL_NUM_LAYERS", "a multiple of HL_PP " + std::to_string(p.pp) + " (run_llama.sh checks it)");
  p.uneven_stages = m.layers % p.pp != 0;  // DeepSpeed splits the transformer layers as evenly as they go
  m.hidden = row->hidden;
  m.heads = row->heads;
  m.kv_heads = row->kv_heads;
  m.ffn_hidden = row->ffn;
  m.mlp = spec::MlpKind::swiglu;
  m.norm = spec::NormKind::rmsnorm;
  m.position = spec::PositionKind::rotary;
  m.rotary_fraction = 1.0;
  m.rope_theta = row->rope_theta;
  m.tied_embeddings = false;
  m.bias = false;
  m.vocab = row->vocab;
  m.vocab_pad_multiple = 128;  // Megatron's --make-vocab-size-divisible-by default; run_llama.sh passes none
  m.max_positions = job.workload.seq_len;  // --max-position-embeddings $SEQ_LEN
  const std::string dropout = setting("HL_DROPOUT").value_or("0.0");
  m.dropout = real_number(dropout, file, "HL_DROPOUT") > 0;

  // Where the job's data, tokenizer, nodes and outputs are: the user's, not the plan's.
  static const std::set<std::string> kPlaces = {
      "HL_DATA_DIR_ROOT", "HL_DATA_FILE_PREFIX", "HL_DATA_CACHE_DIR", "HL_TOKENIZER_MODEL", "HL_TOKENIZER_TYPE",
      "HL_TRUST_REMOTE_CODE", "HL_HOSTSFILE", "HL_RESULTS_DIR", "HL_RESULTS_DIR_PREFIX", "HL_CHECKPOINTS_DIR",
      "HL_TENSORBOARD_DIR", "HL_KILL_SWITCH", "HL_QNPU_DIR"};
  std::vector<std::string> unread;
  for (const auto& [name, value] : env)
    if (name.rfind("HL_", 0) == 0 && !read.count(name) && !kPlaces.count(name)) unread.push_back(name);
  // HL_* settings the script makes that never reach run_llama.sh (neither exported nor before the command).
  std::vector<std::string> unseen;
  for (const auto& [name, value] : script.variables)
    if (name.rfind("HL_", 0) == 0 && !env.count(name)) unseen.push_back(name);
  if (!unseen.empty()) {
    std::string note = "set in the script's shell but neither exported nor given to the run_llama.sh command, so it runs without them:";
    for (const std::string& name : unseen) note += " " + name;
    job.notes.push_back(note);
  }
  if (const std::string note = unread_options_note(unread); !note.empty()) job.notes.push_back(note);
  return job;
}

}  // namespace trainplan::exporting
