// ModelSpec: one transformer architecture, decoder (causal LM head) or encoder
// (BERT with MLM head). Sizes are counts; derived figures (head dim, padded
// vocab, parameter count) are computed here so every layer agrees on them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trainplan::spec {

enum class ModelKind { decoder, encoder_mlm };
enum class MlpKind { gelu, swiglu };
enum class NormKind { layernorm, rmsnorm };
enum class PositionKind { learned, rotary, alibi };

struct ModelSpec {
  std::string name;
  std::string source_file;
  std::string source;  // where the architecture figures were published
  ModelKind kind = ModelKind::decoder;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // == heads for multi-head attention
  // Width of one attention head where it is not hidden / heads (Qwen3: 128
  // with hidden 2048 and 32 heads); 0: hidden / heads.
  int explicit_head_dim = 0;
  int ffn_hidden = 0;
  MlpKind mlp = MlpKind::gelu;
  NormKind norm = NormKind::layernorm;
  PositionKind position = PositionKind::learned;
  double rotary_fraction = 0;  // share of head dims rotated (NeoX: 0.25)
  bool parallel_residual = false;
  // Norms per layer: before a sublayer (its output feeds the sublayer's GEMMs:
  // 2, one each for attention and MLP; 1 where both share it, Falcon-7B) and
  // after one, on its output before the residual add (Gemma 2's sandwich: 2).
  int pre_norms = 2;
  int post_norms = 0;
  bool tied_embeddings = false;
  bool embedding_norm = false;  // a LayerNorm on the word embeddings (BLOOM's --embed-layernorm)
  bool bias = false;      // linear layers carry biases (BERT, GPT, NeoX; not Llama)
  bool qkv_bias = false;  // the Q, K and V projections alone carry biases (Qwen 1-2.5), where bias is false
  bool qk_norm = false;   // an RMSNorm over each head's query and key before RoPE (Qwen3, OLMo 2)
  // A gelu-kind MLP (two GEMMs) whose activation is ReLU squared (Nemotron): the
  // same FLOPs and bytes as GELU's, a different model for the launch files.
  bool squared_relu = false;
  double rope_theta = 0;  // RoPE base (HF rope_theta); 0: unstated, the clients' default 10000 applies
  // Sliding-window attention: on sliding_window_layer_share of the layers a
  // query sees at most sliding_window_tokens earlier tokens (0: every layer
  // attends to the whole sequence). Gemma 2: 4096 on every other layer.
  int sliding_window_tokens = 0;
  double sliding_window_layer_share = 0;
  bool dropout = false;  // dropout in training (GPT-3, BERT); modern LLM pre-training uses none
  int vocab = 0;
  int vocab_pad_multiple = 1;  // vocab is padded up to a multiple of this (times TP, as Megatron does)
  int max_positions = 0;
  int type_vocab = 0;  // BERT token-type embeddings
  // Share of positions the output head runs on: 1 for a causal LM, the masked
  // share (0.15) for BERT's MLM head, which gathers masked positions first.
  double head_token_fraction = 1.0;
  // What the source states that the cost model does not price, each named for
  // the user (a Hugging Face config's soft-capping, say); empty for our own files.
  std::vector<std::string> unpriced;

  // Mixture of experts (experts == 0: a dense model). Layers from
  // first_dense_layers on replace the MLP by `experts` routed experts of width
  // expert_ffn_hidden, top_k of them per token, beside shared experts that
  // every token runs (their widths summed: shared_expert_ffn_hidden, 0: none);
  // the first layers keep a dense MLP of ffn_hidden.
  int experts = 0;
  int top_k = 0;
  int expert_ffn_hidden = 0;
  int shared_expert_ffn_hidden = 0;
  double capacity_factor = 0;  // tokens an expert takes, over the mean; 0: dropless (no cap)
  int first_dense_layers = 0;
  // Multi-head latent attention (DeepSeek V2/V3; kv_lora_rank == 0: none):
  // K and V come up from a kv_lora_rank latent, Q from a q_lora_rank one (0:
  // projected directly); a query-key head has qk_nope + qk_rope dims, a value head v.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;

  bool moe() const { return experts > 0; }
  // Routed tokens the busiest expert rank computes, over the mean, given the
  // routing's imbalance: a capacity factor drops what exceeds it.
  double routed_load(double imbalance) const {
    return capacity_factor > 0 && capacity_factor < imbalance ? capacity_factor : imbalance;
  }
  // Tokens each expert computes, over the mean, where a stack runs every
  // expert's capacity slots filled or not: the capacity factor, or at full
  // capacity (dropless, or a factor of experts / top_k or more) every token, experts / top_k.
  double capacity_load() const { return full_capacity() ? double(experts) / top_k : capacity_factor; }
  // Whether each expert's capacity holds every token: dropless, or a factor of
  // experts / top_k or more (NxD's ExpertMLPs, expert_mlps.py@083d3ea:67-68).
  bool full_capacity() const { return capacity_factor <= 0 || capacity_factor >= double(experts) / top_k; }
  bool mla() const { return kv_lora_rank > 0; }
  int moe_layers() const { return moe() ? layers - first_dense_layers : 0; }
  // Dims per head of the query-key product and of the value (head_dim() without MLA).
  int qk_head_dim() const { return mla() ? qk_nope_head_dim + qk_rope_head_dim : head_dim(); }
  int value_head_dim() const { return mla() ? v_head_dim : head_dim(); }
  // TP splits the query heads evenly; the KV heads split evenly or, where TP
  // exceeds them, each is replicated over TP / kv_heads ranks (Megatron-Core's GQA).
  bool tp_divides_heads(int tp) const { return heads % tp == 0; }
  bool tp_fits_kv_heads(int tp) const { return kv_heads % tp == 0 || tp % kv_heads == 0; }
  // KV heads on one of `tp` ranks: their share, or 1 where they are replicated.
  double kv_heads_per_rank(int tp) const { return kv_heads % tp == 0 ? double(kv_heads) / tp : 1.0; }
  // Attention's projection weights (and biases) of one layer.
  int64_t attention_parameters() const;
  // One MLP (or one expert) of width `ffn`, with its biases.
  int64_t mlp_parameters(int ffn) const;
  // The shared experts of one MoE layer (0 when none).
  int64_t shared_mlp_parameters() const;
  // Routed-expert parameters of all layers, and the share of them a token runs.
  int64_t routed_expert_parameters() const;
  int64_t active_routed_expert_parameters() const;
  // Parameters a token runs through: total less the experts it is not routed to.
  int64_t active_parameters() const;

  int norms_per_layer() const { return pre_norms + post_norms; }
  int head_dim() const { return explicit_head_dim > 0 ? explicit_head_dim : hidden / heads; }
  // Widths of the queries (and of the attention output) and of K or V, over all heads.
  int query_hidden() const { return heads * head_dim(); }
  int kv_hidden() const { return kv_heads * head_dim(); }
  // Megatron pads the vocabulary to a multiple of pad_multiple * tp.
  int64_t padded_vocab(int tp = 1) const;
  // Parameters of one transformer layer (weights and biases of attention, MLP,
  // norms), routed experts excepted: for a MoE model the mean over layers of
  // the dense MLPs, shared experts and routers (these follow TP; experts follow EP).
  int64_t layer_parameters() const;
  // Embedding parameters (token, plus learned positions, plus BERT token types).
  int64_t embedding_parameters() const;
  // Head parameters beyond the embedding: untied LM head, or BERT's MLM transform.
  int64_t head_parameters() const;
  int64_t total_parameters() const;
  // Everything but the routed experts, exactly (layer_parameters() rounds its mean).
  int64_t non_expert_parameters() const;
};

const char* to_string(ModelKind kind);
const char* to_string(MlpKind kind);

}  // namespace trainplan::spec
