// ModelSpec: one transformer architecture, decoder (causal LM head) or encoder
// (BERT with MLM head). Sizes are counts; derived figures (head dim, padded
// vocab, parameter count) are computed here so every layer agrees on them.
#pragma once
#include <cstdint>
#include <string>

namespace tp::spec {

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
  int ffn_hidden = 0;
  MlpKind mlp = MlpKind::gelu;
  NormKind norm = NormKind::layernorm;
  PositionKind position = PositionKind::learned;
  double rotary_fraction = 0;  // share of head dims rotated (NeoX: 0.25)
  bool parallel_residual = false;
  bool tied_embeddings = false;
  bool bias = false;
  bool dropout = false;  // dropout in training (GPT-3, BERT); modern LLM pre-training uses none  // linear layers carry biases (BERT, GPT, NeoX; not Llama)
  int vocab = 0;
  int vocab_pad_multiple = 1;  // vocab is padded up to a multiple of this (times TP, as Megatron does)
  int max_positions = 0;
  int type_vocab = 0;  // BERT token-type embeddings
  // Share of positions the output head runs on: 1 for a causal LM, the masked
  // share (0.15) for BERT's MLM head, which gathers masked positions first.
  double head_token_fraction = 1.0;

  int head_dim() const { return hidden / heads; }
  int kv_hidden() const { return kv_heads * head_dim(); }
  // Megatron pads the vocabulary to a multiple of pad_multiple * tp.
  int64_t padded_vocab(int tp = 1) const;
  // Parameters of one transformer layer (weights and biases of attention, MLP, norms).
  int64_t layer_parameters() const;
  // Embedding parameters (token, plus learned positions, plus BERT token types).
  int64_t embedding_parameters() const;
  // Head parameters beyond the embedding: untied LM head, or BERT's MLM transform.
  int64_t head_parameters() const;
  int64_t total_parameters() const;
};

const char* to_string(ModelKind kind);
const char* to_string(MlpKind kind);

}  // namespace tp::spec
