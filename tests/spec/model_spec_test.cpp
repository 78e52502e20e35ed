#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "spec/load.h"

using tp::spec::load_model;

// Parameter counts against the published checkpoints (Hugging Face model cards /
// config.json of each model; counts as reported by model.num_parameters()).
TEST(ModelSpec, ParameterCountsMatchPublishedCheckpoints) {
  EXPECT_EQ(load_model("llama2-7b").total_parameters(), 6738415616LL);    // meta-llama/Llama-2-7b-hf
  EXPECT_EQ(load_model("llama2-13b").total_parameters(), 13015864320LL);  // meta-llama/Llama-2-13b-hf
  EXPECT_EQ(load_model("llama2-70b").total_parameters(), 68976648192LL);  // meta-llama/Llama-2-70b-hf
  EXPECT_EQ(load_model("llama3-8b").total_parameters(), 8030261248LL);    // meta-llama/Meta-Llama-3-8B
  EXPECT_EQ(load_model("llama3-70b").total_parameters(), 70553706496LL);  // meta-llama/Meta-Llama-3-70B
  EXPECT_EQ(load_model("pythia-6.9b").total_parameters(), 6857302016LL);  // EleutherAI/pythia-6.9b
}

TEST(ModelSpec, PublishedRoundFigures) {
  // GPT-3 paper Table 2.1: 175.0B; BERT paper: BERT-Large 340M (HF counts 335-336M).
  EXPECT_NEAR(load_model("gpt3-175b").total_parameters() / 1e9, 175.0, 0.5);
  EXPECT_NEAR(load_model("bert-large").total_parameters() / 1e6, 336, 5);
  // Black et al. 2022: GPT-NeoX-20B, "20.55B" in the paper's Table 1.
  EXPECT_NEAR(load_model("gpt-neox-20b").total_parameters() / 1e9, 20.55, 0.01);
  // Seed 000: "BERT 1.5B".
  EXPECT_NEAR(load_model("bert-1.5b").total_parameters() / 1e9, 1.5, 0.05);
}

TEST(ModelSpec, VocabularyPaddingFollowsMegatron) {
  auto m = load_model("gpt3-175b");  // 50257 padded to a multiple of 128 x TP
  EXPECT_EQ(m.padded_vocab(1), 50304);
  EXPECT_EQ(m.padded_vocab(8), 51200);
}

TEST(ModelSpec, GroupedQueryAttention) {
  auto m = load_model("llama2-70b");
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.kv_hidden(), 1024);
}

// Qwen2 and Phi-3 configs as published on the Hub, read as Llama's layer
// (issue 39): Qwen/Qwen2.5-7B-Instruct config.json (transformers 4.43.3) and
// microsoft/Phi-3.5-mini-instruct config.json (4.46.3), both as quoted verbatim
// in Lightning-AI/lightning-thunder's RoPE benchmarks (hf_qwen2_rope,
// hf_phi3_rope; Phi-3.5's rope_scaling lists omitted: they change no shape).
// Published sizes: Qwen2.5 technical report (arXiv:2412.15115, table 1) 7.61B,
// 6.53B without embeddings; Phi-3.5-mini model card 3.8B. A config is named as
// it names itself: its _name_or_path, else its model_type.
TEST(ModelSpec, HuggingFaceQwen2Phi3AndGemmaReadAsLlamaLayers) {
  auto qwen = nlohmann::json::parse(R"({"_name_or_path": "Qwen/Qwen2.5-7B-Instruct",
    "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584, "intermediate_size": 18944,
    "max_position_embeddings": 32768, "max_window_layers": 28, "model_type": "qwen2", "num_attention_heads": 28,
    "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "sliding_window": null, "tie_word_embeddings": false, "use_sliding_window": false, "vocab_size": 152064})");
  const tp::spec::ModelSpec q = tp::spec::model_from_hf_config(qwen, "ut/config.json");
  EXPECT_EQ(q.name, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(q.kv_heads, 4);
  EXPECT_EQ(q.mlp, tp::spec::MlpKind::swiglu);
  EXPECT_NEAR(q.total_parameters() / 1e9, 7.61, 0.01);
  EXPECT_NEAR((q.total_parameters() - 2.0 * 152064 * 3584) / 1e9, 6.53, 0.01);
  qwen.erase("_name_or_path");
  EXPECT_EQ(tp::spec::model_from_hf_config(qwen, "ut/config.json").name, "qwen2");

  const auto phi = nlohmann::json::parse(R"({"_name_or_path": "microsoft/Phi-3.5-mini-instruct",
    "architectures": ["Phi3ForCausalLM"], "attention_bias": false, "hidden_act": "silu", "hidden_size": 3072,
    "intermediate_size": 8192, "max_position_embeddings": 131072, "model_type": "phi3", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 262144, "tie_word_embeddings": false,
    "vocab_size": 32064})");
  const tp::spec::ModelSpec p = tp::spec::model_from_hf_config(phi, "config.json");
  EXPECT_EQ(p.head_dim(), 96);
  EXPECT_NEAR(p.total_parameters() / 1e9, 3.82, 0.01);

  // google/gemma-7b config.json: 16 heads of 256 over hidden 3072 (head_dim stated), GeGLU, tied by default;
  // Gemma Team 2024 (arXiv:2403.08295) Table 2: 7,751,248,896 non-embedding parameters.
  const auto gemma = nlohmann::json::parse(R"({"architectures": ["GemmaForCausalLM"], "head_dim": 256,
    "hidden_act": "gelu", "hidden_size": 3072, "intermediate_size": 24576, "max_position_embeddings": 8192,
    "model_type": "gemma", "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 16,
    "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "vocab_size": 256000})");
  const tp::spec::ModelSpec g = tp::spec::model_from_hf_config(gemma, "config.json");
  EXPECT_EQ(g.name, "gemma");
  EXPECT_EQ(g.explicit_head_dim, 256);
  EXPECT_TRUE(g.tied_embeddings);
  EXPECT_EQ(g.total_parameters() - 256000LL * 3072, 7751248896LL);
}
