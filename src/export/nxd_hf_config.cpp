#include "export/nxd_hf_config.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "export/header.h"
#include "export/nxd_sections.h"
#include "export/refusal.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::exporting {
namespace fs = std::filesystem;
namespace {

constexpr const char* kHfExample =
    "aws-neuron/neuronx-distributed-training@ff83d7bdb1b21fcc4c282c4775ae25a6ffdfbf36 "
    "examples/conf/hf_llama3_70B_config.yaml, src/neuronx_distributed_training/lightning_modules/model/hf_models/llama_model.py";

}  // namespace

// What the HF path's model is (models/hf_models/modeling_llama.py@ff83d7bd): Llama's layer
// and nothing else. Empty where `m` is that; else what differs, in words.
std::string unlike_hf_llama(const spec::ModelSpec& m) {
  // LlamaRMSNorm before attention and the MLP (:449-454); the MLP's gate_up_proj and
  // down_proj with ACT2FN[hidden_act] (:165-181, :200-204): SwiGLU under 'silu'.
  if (m.norm != spec::NormKind::rmsnorm) return "LayerNorm where the HF path's Llama layer has RMSNorm";
  if (m.mlp != spec::MlpKind::swiglu) return "a GELU MLP where the HF path's Llama MLP is gated (SwiGLU)";
  // Rotary tables over the whole head (llama_model.py:67-75, head_dim = hidden / heads).
  if (m.position != spec::PositionKind::rotary || (m.rotary_fraction > 0 && m.rotary_fraction < 1))
    return "positions other than rotary over the whole head";
  // Every projection is built with bias=False (:169, :278, :289, :299, :307, :315, :323, :655).
  if (m.bias || m.qkv_bias) return "linear biases, which the HF path's Llama projections lack";
  if (m.qk_norm) return "QK-norm, which the HF path's Llama attention lacks";
  // CoreAttention (:217-238) and the residual path drop nothing.
  if (m.dropout) return "dropout, which the HF path's Llama model does not apply";
  // lm_head is a ColumnParallelLinear of its own (:652-658); tying it to the sharded
  // embedding through the pipeline is not exported.
  if (m.tied_embeddings) return "tied embeddings (not exported on the HF path yet)";
  // LlamaDecoderLayer's one LlamaMLP (:448); NxD Training@ff83d7bd builds MoE on its megatron
  // model alone (NeuronSwitchMLP, megatron_mixtral_8x7b_config.yaml), which divides the KV heads over TP.
  if (m.moe()) return "routed experts, which the HF path's Llama MLP lacks (NxD Training@ff83d7bd's MoE model is the megatron one)";
  return "";
}

namespace {

double rope_base(const spec::ModelSpec& m) { return m.rope_theta > 0 ? m.rope_theta : 10000.0; }

// The config.json the HF path's LlamaConfig.from_pretrained reads (llama_model.py@ff83d7bd:21),
// in the form of NxD's own Llama configs (aws-neuron/neuronx-distributed@083d3ea
// examples/training/llama/tp_pp_llama_hf_pretrain/70B_config_llama3.1/config.json): transformers
// 4.31's LlamaConfig keys (NxD Training's requirements.txt pins 4.31.0), rope_scaling null (4.31
// knows no 'llama3' scaling), and the three keys modeling_llama.py reads from the config
// itself: sequence_parallel_enabled (replaced from the YAML, llama_model.py:24),
// selective_checkpoint_enabled (:208: under selective recompute the SwiGLU activation is
// checkpointed, as the NxD stacks price it, spec::SelectiveRecompute) and
// move_model_to_device (:183, :336).
std::string llama_config_json(const LaunchJob& job) {
  const spec::ModelSpec& m = job.model;
  nlohmann::json j;
  j["_name_or_path"] = m.name;
  j["architectures"] = {"LlamaForCausalLM"};
  j["model_type"] = "llama";
  j["hidden_act"] = "silu";
  j["hidden_size"] = m.hidden;
  j["intermediate_size"] = m.ffn_hidden;
  j["num_hidden_layers"] = m.layers;
  j["num_attention_heads"] = m.heads;
  j["num_key_value_heads"] = m.kv_heads;
  // The embedding and lm_head are sharded over TP unpadded (modeling_llama.py:475-477, :652-658;
  // NxD's ParallelEmbedding divides the vocabulary by TP, parallel_layers/utils.py@083d3ea:38):
  // the vocabulary as priced, padded to a multiple of TP.
  j["vocab_size"] = m.padded_vocab(job.plan.tp);
  j["max_position_embeddings"] = std::max(m.max_positions, job.workload.seq_len);
  j["rope_theta"] = rope_base(m);
  j["rope_scaling"] = nullptr;
  j["rms_norm_eps"] = 1e-5;
  j["initializer_range"] = 0.02;
  j["pretraining_tp"] = 1;
  j["tie_word_embeddings"] = false;
  j["use_cache"] = false;
  j["sequence_parallel_enabled"] = job.plan.sp;
  j["selective_checkpoint_enabled"] = job.plan.recompute == spec::Recompute::selective;
  j["move_model_to_device"] = false;
  j["transformers_version"] = "4.31.0";
  return j.dump(2) + "\n";
}

// kv_replicator as priced: 1 where TP divides the KV heads, TP / KV heads where the KV heads
// divide TP (one KV head per rank, spec::ModelSpec::kv_heads_per_rank), 0 where neither.
int priced_kv_replicator(const spec::ModelSpec& m, int tp) {
  return m.kv_heads % tp == 0 ? 1 : tp % m.kv_heads == 0 ? tp / m.kv_heads : 0;
}

}  // namespace

namespace {
bool tp_splits_kv_heads(const LaunchJob& job) { return job.model.kv_heads > 0 && job.model.kv_heads % job.plan.tp != 0; }
bool wraps_mlp(const LaunchJob& job) { return job.recompute_mlp && job.plan.recompute == spec::Recompute::selective; }
// The NKI flash attention a stack prices runs on the HF path alone: modeling_llama.py@ff83d7bd:411-413
// calls nki_flash_attn_func under model.fusions.flash_attention; models/megatron has no flash path.
// A dense Llama goes there; other models stay on the megatron path, which refuses them (nxd_config.cpp).
bool flash_on_hf(const LaunchJob& job) {
  return job.flash_attention && !job.model.moe() && unlike_hf_llama(job.model).empty();
}
}  // namespace

// The megatron model wraps CoreAttention alone under selective recompute; the HF
// model adds the MLP (llama_model.py@ff83d7bd:37-41).
bool nxd_hf_path(const LaunchJob& job) { return tp_splits_kv_heads(job) || wraps_mlp(job) || flash_on_hf(job); }

NxdHfFiles write_nxd_hf(const LaunchJob& job, const std::string& config_name) {
  const spec::Plan& p = job.plan;
  const spec::ModelSpec& m = job.model;
  refuse_what_no_nxd_path_runs(job);
  const std::string why_hf =
      tp_splits_kv_heads(job)
          ? "TP " + std::to_string(p.tp) + " does not divide the " + std::to_string(m.kv_heads) + " KV heads of " + m.name +
                ", which NxD Training's megatron model divides over TP (transformer.py@ff83d7bd:846-847); its HF Llama "
                "model replicates them"
      : wraps_mlp(job)
          ? "stack " + job.stack_name + " recomputes the whole MLP under selective recompute, which NxD Training's HF "
                "Llama model alone offers (llama_model.py@ff83d7bd:37-41)"
          : "stack " + job.stack_name + " prices NKI flash attention, which NxD Training's HF Llama model alone "
                "runs (modeling_llama.py@ff83d7bd:411-413)";
  // activations_checkpoint_recompute_mlp wraps the MLP only from 8,192 tokens (llama_model.py@ff83d7bd:38).
  if (wraps_mlp(job) && job.workload.seq_len < 8192)
    refuse_nxd("model.activations_checkpoint_recompute_mlp",
               "a sequence of 8192 tokens or more, where NxD Training wraps the MLP (llama_model.py@ff83d7bd:38), as stack " +
                   job.stack_name + " prices; found " + std::to_string(job.workload.seq_len));
  if (const std::string unlike = unlike_hf_llama(m); !unlike.empty())
    refuse_nxd("model.model_config", "a Llama architecture for the HF model path (" + why_hf + "); " + m.name + " has " + unlike);
  // kv_replicator divides TP (modules/qkv_linear.py@083d3ea:526, :49) and the replicated KV
  // heads divide over TP (modeling_llama.py@ff83d7bd:329-331); trainplan prices one KV head per rank.
  const int replicas = priced_kv_replicator(m, p.tp);
  if (replicas == 0)
    refuse_nxd("distributed_strategy.kv_replicator", "a TP that the " + std::to_string(m.kv_heads) +
                                                         " KV heads divide, so that kv_replicator = TP / KV heads; found TP " +
                                                         std::to_string(p.tp));
  // modeling_llama.py@ff83d7bd:328 divides the query heads over TP.
  if (m.heads % p.tp != 0)
    refuse_nxd("distributed_strategy.tensor_model_parallel_size",
               "a divisor of the " + std::to_string(m.heads) + " heads of " + m.name + " (modeling_llama.py@ff83d7bd:328), found " +
                   std::to_string(p.tp));
  if (p.zero != 1)
    refuse_nxd("distributed_strategy.zero1", "ZeRO 1: NxD Training's HF path is written with zero1 only (without it: not exported yet)");

  YAML::Node root = nxd_job_root(job, "hf_llama", "hf");
  // llama_model.py@ff83d7bd:26 reads it as the config's kv_shared_group_size.
  root["distributed_strategy"]["kv_replicator"] = replicas;
  YAML::Node model = root["model"];
  model["model_config"] = config_name;                           // llama_model.py:21
  model["encoder_seq_length"] = job.workload.seq_len;
  model["max_position_embeddings"] = std::max(m.max_positions, job.workload.seq_len);  // llama_model.py:27
  model["num_layers"] = m.layers;                                // llama_model.py:29-32 override the config.json
  model["hidden_size"] = m.hidden;
  // GQAQKVColumnParallelLinear is the only projection that replicates KV heads
  // (modeling_llama.py:285-294); the separate k_proj/v_proj (:304-318) divide them unreplicated.
  model["qkv_linear"] = true;
  model["rope_theta"] = rope_base(m);                            // llama_model.py:33-34
  // selective: CoreAttention, and the MLP where the stack prices it (llama_model.py:37-41:
  // activations_checkpoint_recompute_mlp, True in hf_llama3_70B_config.yaml, adds the MLP at 8192+
  // tokens: written either way so that a file composed over that example runs as priced too);
  // full: each LlamaDecoderLayer (:42-43).
  if (p.recompute == spec::Recompute::none) model["activations_checkpoint_granularity"] = YAML::Node(YAML::NodeType::Null);
  else model["activations_checkpoint_granularity"] = p.recompute == spec::Recompute::selective ? "selective" : "full";
  if (p.recompute == spec::Recompute::selective) model["activations_checkpoint_recompute_mlp"] = job.recompute_mlp;
  model["fusions"]["softmax"] = true;
  // llama_model.py:28 reads it by attribute: the NKI kernel where the stack priced it (modeling_llama.py:411-415).
  model["fusions"]["flash_attention"] = job.flash_attention;
  write_nxd_precision(root, job);
  write_nxd_example_sections(root, "hf_llama", false);

  FormatInfo format = info(LaunchFormat::nxd);
  format.source = kHfExample;
  std::string header = header_comment(job, format);
  if (tp_splits_kv_heads(job))
    header += "# model_source hf: TP " + std::to_string(p.tp) + " does not divide the " + std::to_string(m.kv_heads) + " KV heads of " +
              comment_word(m.name) + ", which NxD Training's megatron model divides over TP\n#   (transformer.py@ff83d7bd:846-847); "
              "its HF Llama model replicates each kv_replicator (" + std::to_string(replicas) +
              ") times with qkv_linear (GQAQKVColumnParallelLinear), one KV head per TP rank.\n";
  else
    header += "# model_source hf: stack " + comment_word(job.stack_name) + " recomputes each layer's whole MLP under selective "
              "recompute,\n#   which NxD Training's HF Llama model alone offers (activations_checkpoint_recompute_mlp at "
              "8192+ tokens, llama_model.py@ff83d7bd:37-41).\n";
  if (p.uneven_stages)
    header += "# PP " + std::to_string(p.pp) + " does not divide the " + std::to_string(m.layers) + " layers: NxD partitions them itself "
              "(auto_partition, no model.pipeline_cuts),\n#   the remainder of layers / PP on the last stages "
              "(pipeline/partition.py@083d3ea:280-296), as trainplan priced its busiest stage.\n";
  header += "# model.model_config names " + comment_word(config_name) +
            ", written beside this file: the architecture as priced (vocab_size " +
            std::to_string(m.padded_vocab(p.tp)) + ", padded to TP).\n#   NxD Training opens it from the folder "
            "train.sh runs in (examples/): copy it there or give its full path; set your tokenizer's token ids in it.\n";
  header += "# Add data.train_dir (a tokenized data set, datasets.load_from_disk). exp_manager and model.optim hold\n"
            "#   megatron_llama_7B_config.yaml's example values: set your own learning rate, schedule and checkpoint cadence.\n";
  return {nxd_yaml_text(header, root), llama_config_json(job)};
}

void read_nxd_hf(const YamlFields& y, LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  const std::string& file = y.file();
  job.nxd_hf = true;
  job.kv_replicator = int(y.whole("distributed_strategy.kv_replicator", 1, kBig, 0));
  if (job.kv_replicator > 1 && y.has("model.qkv_linear") && !y.flag("model.qkv_linear", false))
    throw spec::SpecError(file, "model.qkv_linear",
                          "True with kv_replicator above 1: only GQAQKVColumnParallelLinear replicates the KV heads "
                          "(modeling_llama.py@ff83d7bd:285-294)");
  const std::string named = y.text("model.model_config", "");
  fs::path path(named);
  if (!named.empty() && path.is_relative()) path = fs::path(file).parent_path() / path;
  std::error_code error;
  if (named.empty() || !fs::is_regular_file(path, error)) {
    job.notes.push_back("the architecture is in model.model_config (" + spec::one_line(named.empty() ? "unnamed" : named, 200) +
                        "), which trainplan does not read: --model names it");
    return;
  }
  const nlohmann::json config = spec::read_json_file(path.string());
  const bool llama = config.is_object() && config.contains("architectures") && config["architectures"].is_array() &&
                     !config["architectures"].empty() && config["architectures"][0] == "LlamaForCausalLM";
  // llama_model.py@ff83d7bd:21, :55: LlamaConfig.from_pretrained, then LlamaForCausalLM, whatever the file names.
  if (!llama)
    throw spec::SpecError(path.string(), "$.architectures", "[\"LlamaForCausalLM\"]: NxD Training's HF path builds Llama");
  spec::ModelSpec m = spec::model_from_hf_config(config, path.string());
  // llama_model.py:27-34: the YAML's max_position_embeddings (the larger), num_layers, hidden_size and rope_theta win.
  if (job.model.layers > 0) m.layers = job.model.layers;
  if (job.model.hidden > 0) m.hidden = job.model.hidden;
  if (y.has("model.rope_theta")) m.rope_theta = y.real("model.rope_theta", m.rope_theta);
  m.max_positions = std::max<long>(m.max_positions, y.whole("model.max_position_embeddings", 1, kBig, 1));
  if (m.hidden % m.heads != 0)  // modeling_llama.py:266-270
    throw spec::SpecError(file, "model.hidden_size", "a multiple of the " + std::to_string(m.heads) + " heads of " +
                                                         spec::one_line(path.string(), 200) + ", found " + std::to_string(m.hidden));
  job.model = m;
  job.has_architecture = true;
  check_nxd_kv_replicator(job, job.model, file);
}

void check_nxd_kv_replicator(LaunchJob& job, const spec::ModelSpec& m, const std::string& file) {
  if (!job.nxd_hf || m.kv_heads <= 0) return;
  const int tp = job.plan.tp, stated = job.kv_replicator, r = stated > 0 ? stated : 1;
  const std::string option = "distributed_strategy.kv_replicator";
  if (tp % r != 0)
    throw spec::SpecError(file, option, "a divisor of TP " + std::to_string(tp) + " (qkv_linear.py@083d3ea:526), found " +
                                            std::to_string(r));
  const int priced = priced_kv_replicator(m, tp);
  if ((long(m.kv_heads) * r) % tp != 0) {
    const std::string why = "modeling_llama.py@ff83d7bd:329-331 divides " + std::to_string(m.kv_heads) +
                            " KV heads x kv_replicator over TP " + std::to_string(tp);
    if (stated > 0 || priced == 0) throw spec::SpecError(file, option, "a replication the TP divides (" + why + "), found " + std::to_string(r));
    job.notes.push_back(option + " is not stated: alone the file replicates no KV heads (llama_model.py@ff83d7bd:26) and " +
                        why + "; priced as kv_replicator " + std::to_string(priced) + ", as a config composed under it must set");
    return;
  }
  if (priced > 0 && r != priced)
    throw spec::SpecError(file, option, std::to_string(priced) + " (trainplan prices " +
                                            (priced == 1 ? "the KV heads divided over TP" : std::string("one KV head per TP rank")) +
                                            "), found " + std::to_string(r));
}

}  // namespace trainplan::exporting
