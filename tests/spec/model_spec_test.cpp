#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "spec/load.h"
#include "expect_spec_error.h"

using trainplan::spec::load_model;
using trainplan::spec::test_support::expect_spec_error;

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

// Nemotron-4 (NeMo's Nemotron4Config340B / 15B: GQA with 8 groups, a squared-ReLU
// MLP of two GEMMs, untied 256000-token embeddings), counted by hand from those
// shapes: per layer Q and O h x h, K and V h x 8 x (h / heads), MLP 2 x h x ffn.
TEST(ModelSpec, NemotronFourCountsFromItsShapes) {
  const ModelSpec big = load_model("nemotron4-340b");
  const double layer = 2.0 * 18432 * 18432 + 2.0 * 18432 * 8 * 192 + 2.0 * 18432 * 73728;
  const double embeddings = 2.0 * 256000 * 18432;
  EXPECT_NEAR(big.total_parameters(), 96 * layer + embeddings, 1e7);  // norms: under 10 M
  EXPECT_NEAR((96 * layer + embeddings) / 1e9, 341.0, 0.1);
  EXPECT_EQ(big.mlp, MlpKind::gelu);
  EXPECT_DOUBLE_EQ(big.rotary_fraction, 0.5);
  const ModelSpec small = load_model("nemotron4-15b");
  const double small_layer = 2.0 * 6144 * 6144 + 2.0 * 6144 * 8 * 128 + 2.0 * 6144 * 24576;
  EXPECT_NEAR(small.total_parameters(), 32 * small_layer + 2.0 * 256000 * 6144, 1e6);
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
  const trainplan::spec::ModelSpec q = trainplan::spec::model_from_hf_config(qwen, "ut/config.json");
  EXPECT_EQ(q.name, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(q.kv_heads, 4);
  EXPECT_EQ(q.mlp, trainplan::spec::MlpKind::swiglu);
  EXPECT_NEAR(q.total_parameters() / 1e9, 7.61, 0.01);
  EXPECT_NEAR((q.total_parameters() - 2.0 * 152064 * 3584) / 1e9, 6.53, 0.01);
  qwen.erase("_name_or_path");
  EXPECT_EQ(trainplan::spec::model_from_hf_config(qwen, "ut/config.json").name, "qwen2");

  const auto phi = nlohmann::json::parse(R"({"_name_or_path": "microsoft/Phi-3.5-mini-instruct",
    "architectures": ["Phi3ForCausalLM"], "attention_bias": false, "hidden_act": "silu", "hidden_size": 3072,
    "intermediate_size": 8192, "max_position_embeddings": 131072, "model_type": "phi3", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 262144, "tie_word_embeddings": false,
    "vocab_size": 32064})");
  const trainplan::spec::ModelSpec p = trainplan::spec::model_from_hf_config(phi, "config.json");
  EXPECT_EQ(p.head_dim(), 96);
  EXPECT_NEAR(p.total_parameters() / 1e9, 3.82, 0.01);

  // google/gemma-7b config.json: 16 heads of 256 over hidden 3072 (head_dim stated), GeGLU, tied by default;
  // Gemma Team 2024 (arXiv:2403.08295) Table 2: 7,751,248,896 non-embedding parameters.
  const auto gemma = nlohmann::json::parse(R"({"architectures": ["GemmaForCausalLM"], "head_dim": 256,
    "hidden_act": "gelu", "hidden_size": 3072, "intermediate_size": 24576, "max_position_embeddings": 8192,
    "model_type": "gemma", "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 16,
    "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "vocab_size": 256000})");
  const trainplan::spec::ModelSpec g = trainplan::spec::model_from_hf_config(gemma, "config.json");
  EXPECT_EQ(g.name, "gemma");
  EXPECT_EQ(g.explicit_head_dim, 256);
  EXPECT_TRUE(g.tied_embeddings);
  EXPECT_EQ(g.total_parameters() - 256000LL * 3072, 7751248896LL);
}

// Gemma 2: google/gemma-2-2b-it config.json (transformers 4.42.4), as quoted in
// ThanatosShinji/onnx-tool's LLM examples ("copy
// https://huggingface.co/google/gemma-2-2b-it/blob/main/config.json here"); the
// same values are Gemma2Config's defaults at huggingface/transformers@19f53461
// (configuration_gemma2.py: "every other layer uses sliding window
// attention"). Gemma Team 2024 (arXiv:2408.00118), table 2: 2,024,517,888
// non-embedding parameters, four RMSNorms per layer included (26 x 4 x 2304 + 2304).
TEST(ModelSpec, HuggingFaceGemma2SlidingWindowAndSandwichNorms) {
  auto config = nlohmann::json::parse(R"({"architectures": ["Gemma2ForCausalLM"], "attention_bias": false,
    "attention_dropout": 0.0, "attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid",
    "eos_token_id": [1, 107], "final_logit_softcapping": 30.0, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2304, "initializer_range": 0.02, "intermediate_size": 9216,
    "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 8, "num_hidden_layers": 26,
    "num_key_value_heads": 4, "pad_token_id": 0, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
    "rope_theta": 10000.0, "sliding_window": 4096, "torch_dtype": "bfloat16", "transformers_version": "4.42.4",
    "use_cache": true, "vocab_size": 256000})");
  const trainplan::spec::ModelSpec g = trainplan::spec::model_from_hf_config(config, "config.json");
  EXPECT_TRUE(g.tied_embeddings);
  EXPECT_EQ(g.post_norms, 2);
  EXPECT_EQ(g.total_parameters() - 256000LL * 2304, 2024517888LL);
  EXPECT_EQ(g.sliding_window_tokens, 4096);
  EXPECT_DOUBLE_EQ(g.sliding_window_layer_share, 0.5);
  // Soft-capping is named for the user, not dropped; null turns one off.
  ASSERT_EQ(g.unpriced.size(), 2u);
  EXPECT_NE(g.unpriced[0].find("attn_logit_softcapping 50"), std::string::npos);
  config["final_logit_softcapping"] = nullptr;
  EXPECT_EQ(trainplan::spec::model_from_hf_config(config, "config.json").unpriced.size(), 1u);
  auto unwindowed = config;  // null: no window (absent: Gemma2Config's 4096)
  unwindowed["sliding_window"] = nullptr;
  EXPECT_EQ(trainplan::spec::model_from_hf_config(unwindowed, "config.json").sliding_window_tokens, 0);
  unwindowed.erase("sliding_window");
  EXPECT_EQ(trainplan::spec::model_from_hf_config(unwindowed, "config.json").sliding_window_tokens, 4096);
  // Newer configs list each layer's kind (transformers' layer_types): the share counts them.
  config["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 26; ++i) config["layer_types"].push_back(i < 20 ? "sliding_attention" : "full_attention");
  EXPECT_DOUBLE_EQ(trainplan::spec::model_from_hf_config(config, "config.json").sliding_window_layer_share, 20.0 / 26);
  config["layer_types"].erase(0);
  expect_spec_error([&] { trainplan::spec::model_from_hf_config(config, "config.json"); }, "$.layer_types",
                    "one entry per layer (26)");
}

// Falcon-7B: FalconConfig's defaults at huggingface/transformers@5fd8edad
// (configuration_falcon.py: vocab 65024, hidden 4544, 32 layers, 71 heads,
// multi_query, parallel_attn, no bias, 2048 positions) are tiiuae/falcon-7b's
// config.json. The module shapes transformers builds from it, as printed in
// kimborgen/falcon-llm's README: query_key_value 4544 -> 4672 (71 query heads
// of 64 plus one K and one V head), dense 4544 -> 4544, dense_h_to_4h 4544 ->
// 18176, one input_layernorm per layer, ln_f, and the LM head tied to the embedding.
TEST(ModelSpec, HuggingFaceFalconMultiQueryParallelBlocks) {
  const auto falcon7b = nlohmann::json::parse(R"({"_name_or_path": "tiiuae/falcon-7b", "alibi": false,
    "apply_residual_connection_post_layernorm": false, "architectures": ["FalconForCausalLM"], "attention_dropout": 0.0,
    "bias": false, "bos_token_id": 11, "eos_token_id": 11, "hidden_dropout": 0.0, "hidden_size": 4544,
    "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "falcon", "multi_query": true,
    "new_decoder_architecture": false, "num_attention_heads": 71, "num_hidden_layers": 32, "num_kv_heads": 71,
    "parallel_attn": true, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 65024})");
  const trainplan::spec::ModelSpec f = trainplan::spec::model_from_hf_config(falcon7b, "config.json");
  EXPECT_EQ(f.name, "tiiuae/falcon-7b");
  EXPECT_EQ(f.kv_heads, 1);
  EXPECT_EQ(f.ffn_hidden, 18176);
  EXPECT_EQ(f.max_positions, 2048);
  EXPECT_EQ(f.pre_norms, 1);
  EXPECT_TRUE(f.parallel_residual);
  EXPECT_TRUE(f.tied_embeddings);
  const int64_t layer = 4544LL * 4672 + 4544LL * 4544 + 2 * 4544LL * 18176 + 2 * 4544;
  EXPECT_EQ(f.total_parameters(), 32 * layer + 65024LL * 4544 + 2 * 4544);
  // The new decoder architecture (Falcon-40B, 180B): num_kv_heads groups, two
  // norms (num_ln_in_parallel_attn's default), an MLP width it may state.
  auto grouped = falcon7b;
  grouped["new_decoder_architecture"] = true;
  grouped["num_attention_heads"] = 128;
  grouped["num_kv_heads"] = 8;
  grouped["hidden_size"] = 8192;
  grouped["ffn_hidden_size"] = 32768;
  const trainplan::spec::ModelSpec g = trainplan::spec::model_from_hf_config(grouped, "config.json");
  EXPECT_EQ(g.kv_heads, 8);
  EXPECT_EQ(g.pre_norms, 2);
  EXPECT_EQ(g.ffn_hidden, 32768);
}


// Mistral 7B and Qwen3 8B as published on the Hub, verbatim (issue 39.5):
// mistralai/Mistral-7B-v0.1 config.json as checked in with the model's whole
// snapshot at janhvi2806/Lanchain_rag@63f8b42b (Mistral-7B-v0.1/config.json,
// CRLF line ends dropped); its model.safetensors.index.json gives total_size
// 14,483,464,192 bytes of BF16, 7,241,732,096 parameters ("7.3B", Mistral's
// release post). Qwen/Qwen3-8B config.json as quoted verbatim in
// kohya-ss/musubi-tuner@2a1eac8b (src/musubi_tuner/zimage/zimage_utils.py,
// QWEN3_8B_CONFIG_JSON); its model card: "Number of Parameters: 8.2B",
// "Number of Paramaters (Non-Embedding): 6.95B".
TEST(ModelSpec, HuggingFaceMistralAndQwen3AsPublished) {
  const auto mistral = nlohmann::json::parse(R"({
  "architectures": [
    "MistralForCausalLM"
  ],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})");
  const trainplan::spec::ModelSpec m = trainplan::spec::model_from_hf_config(mistral, "Mistral-7B-v0.1/config.json");
  EXPECT_EQ(m.name, "mistral");
  EXPECT_EQ(m.total_parameters(), 7241732096LL);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.sliding_window_tokens, 4096);  // every layer: the window is priced, not dropped
  EXPECT_DOUBLE_EQ(m.sliding_window_layer_share, 1.0);
  EXPECT_DOUBLE_EQ(m.rope_theta, 10000.0);

  const auto qwen3 = nlohmann::json::parse(R"({
  "architectures": [
    "Qwen3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 12288,
  "max_position_embeddings": 40960,
  "max_window_layers": 36,
  "model_type": "qwen3",
  "num_attention_heads": 32,
  "num_hidden_layers": 36,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})");
  const trainplan::spec::ModelSpec q = trainplan::spec::model_from_hf_config(qwen3, "Qwen3-8B/config.json");
  EXPECT_EQ(q.name, "qwen3");
  EXPECT_NEAR(q.total_parameters() / 1e9, 8.2, 0.05);
  EXPECT_NEAR((q.total_parameters() - 2.0 * 151936 * 4096) / 1e9, 6.95, 0.005);
  EXPECT_TRUE(q.qk_norm);
  EXPECT_EQ(q.head_dim(), 128);
  EXPECT_DOUBLE_EQ(q.rope_theta, 1e6);
  EXPECT_EQ(q.sliding_window_tokens, 0);  // use_sliding_window false
}

// GPT-OSS as transformers describes it (huggingface/transformers@828a27fd
// src/transformers/models/gpt_oss/configuration_gpt_oss.py, GptOssConfig, whose
// defaults are the 120B model: 36 layers, 128 experts of 2880, top-4, 64 heads of
// 64, 8 KV heads, a 128-token window on alternate layers starting with the first,
// attention_bias always True, rope_theta 150000). The config here states what
// save_pretrained writes for those defaults, layer_types left to the default.
// By hand from the shapes, without biases and norms: per layer Q 2880 x 4096,
// K and V 2880 x 512 each, O 4096 x 2880, 128 experts of 3 x 2880 x 2880 and a
// 2880 x 128 router; 2 x 201088 x 2880 untied embeddings: 116.79 G.
TEST(ModelSpec, HuggingFaceGptOssAsTransformersDefinesIt) {
  const auto config = nlohmann::json::parse(R"({
  "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_hidden_layers": 36,
  "num_local_experts": 128, "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880,
  "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "sliding_window": 128,
  "rope_theta": 150000.0, "tie_word_embeddings": false, "max_position_embeddings": 131072,
  "num_experts_per_tok": 4, "attention_bias": true})");
  const trainplan::spec::ModelSpec hf = trainplan::spec::model_from_hf_config(config, "config.json");
  EXPECT_EQ(hf.experts, 128);
  EXPECT_EQ(hf.top_k, 4);
  EXPECT_EQ(hf.expert_ffn_hidden, 2880);
  EXPECT_EQ(hf.head_dim(), 64);
  EXPECT_TRUE(hf.bias);
  EXPECT_EQ(hf.sliding_window_tokens, 128);
  EXPECT_DOUBLE_EQ(hf.sliding_window_layer_share, 0.5);
  EXPECT_DOUBLE_EQ(hf.rope_theta, 150000);
  ASSERT_EQ(hf.unpriced.size(), 1u);
  EXPECT_NE(hf.unpriced[0].find("attention sinks"), std::string::npos);
  const double layer = 2880.0 * 4096 + 2 * 2880.0 * 512 + 4096.0 * 2880 + 128 * 3 * 2880.0 * 2880 + 2880.0 * 128;
  const double hand = 36 * layer + 2 * 201088.0 * 2880;
  EXPECT_NEAR(hand / 1e9, 116.79, 0.01);
  EXPECT_NEAR(hf.total_parameters(), hand, 0.002 * hand);  // biases and norms: under 0.2%
  // The catalogue's file (models/gpt-oss-120b.json) is the same model.
  const trainplan::spec::ModelSpec file = load_model("gpt-oss-120b");
  EXPECT_EQ(file.total_parameters(), hf.total_parameters());
  EXPECT_EQ(file.active_parameters(), hf.active_parameters());
  // The 20B model states its layer_types: 12 of 24 windowed.
  auto twenty = config;
  twenty["num_hidden_layers"] = 24;
  twenty["num_local_experts"] = 32;
  twenty["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 24; ++i) twenty["layer_types"].push_back(i % 2 ? "full_attention" : "sliding_attention");
  const trainplan::spec::ModelSpec small = trainplan::spec::model_from_hf_config(twenty, "config.json");
  EXPECT_DOUBLE_EQ(small.sliding_window_layer_share, 0.5);
  EXPECT_EQ(load_model("gpt-oss-20b").total_parameters(), small.total_parameters());
}

// Gemma 3 (huggingface/transformers@008f5c8c src/transformers/models/gemma3/
// configuration_gemma3.py): Gemma 2's sandwich norms and GeGLU, per-head QK norms,
// 256-wide heads, and a local window on all layers but every sliding_window_pattern-th
// (default 6); no soft-capping by default. A multimodal checkpoint's text_config holds
// only what differs from Gemma3TextConfig's defaults (PretrainedConfig.to_diff_dict),
// which fill the rest; its vision tower is said as not priced.
TEST(ModelSpec, HuggingFaceGemma3TextAndMultimodal) {
  const auto multimodal = nlohmann::json::parse(R"({
  "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
  "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                  "num_hidden_layers": 34, "sliding_window": 1024},
  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152}})");
  const trainplan::spec::ModelSpec g = trainplan::spec::model_from_hf_config(multimodal, "config.json");
  EXPECT_EQ(g.layers, 34);
  EXPECT_EQ(g.hidden, 2560);
  EXPECT_EQ(g.heads, 8);      // Gemma3TextConfig's default
  EXPECT_EQ(g.kv_heads, 4);   // default
  EXPECT_EQ(g.head_dim(), 256);
  EXPECT_EQ(g.vocab, 262208);  // default
  EXPECT_TRUE(g.tied_embeddings);
  EXPECT_TRUE(g.qk_norm);
  EXPECT_EQ(g.post_norms, 2);
  EXPECT_EQ(g.sliding_window_tokens, 1024);
  EXPECT_DOUBLE_EQ(g.sliding_window_layer_share, (34.0 - 34 / 6) / 34);  // layers 6, 12, ..., 30 are global
  EXPECT_DOUBLE_EQ(g.rope_theta, 1000000);
  ASSERT_EQ(g.unpriced.size(), 1u);  // no soft-capping by default, the vision tower said
  EXPECT_NE(g.unpriced[0].find("vision tower"), std::string::npos);
  // The text model alone reads its own keys; a stated cap is said.
  auto text = nlohmann::json::parse(R"({
  "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "vocab_size": 262144, "hidden_size": 1152,
  "intermediate_size": 6912, "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
  "head_dim": 256, "max_position_embeddings": 32768, "sliding_window": 512, "sliding_window_pattern": 6,
  "attn_logit_softcapping": 50.0})");
  const trainplan::spec::ModelSpec one = trainplan::spec::model_from_hf_config(text, "config.json");
  EXPECT_EQ(one.kv_heads, 1);
  EXPECT_DOUBLE_EQ(one.sliding_window_layer_share, 22.0 / 26);
  ASSERT_EQ(one.unpriced.size(), 1u);
  EXPECT_NE(one.unpriced[0].find("attn_logit_softcapping"), std::string::npos);
  // A text_config that is not an object is refused with its path.
  auto bad = multimodal;
  bad["text_config"] = 3;
  expect_spec_error([&] { trainplan::spec::model_from_hf_config(bad, "config.json"); }, "text_config", "", "config.json");
}

// A gelu-kind MLP may name its activation (Nemotron's squared ReLU); a SwiGLU one may not.
TEST(ModelSpec, ActivationKeyIsAGeluKindMlpsOnly) {
  EXPECT_TRUE(load_model("nemotron4-340b").squared_relu);
  EXPECT_FALSE(load_model("gpt3-175b").squared_relu);
  auto j = nlohmann::json::parse(R"({"name": "x", "source": "test", "kind": "decoder", "layers": 2, "hidden": 64,
    "heads": 4, "kv_heads": 4, "ffn_hidden": 256, "mlp": "swiglu", "norm": "rmsnorm", "position": "learned",
    "parallel_residual": false, "tied_embeddings": true, "bias": false, "vocab": 1000, "vocab_pad_multiple": 1,
    "max_positions": 128, "activation": "squared-relu"})");
  expect_spec_error([&] { trainplan::spec::model_from_json(j, "x.json"); }, "$.activation", "no activation key with mlp swiglu",
                    "x.json");
  j["mlp"] = "gelu";
  j["activation"] = "relu";
  expect_spec_error([&] { trainplan::spec::model_from_json(j, "x.json"); }, "$.activation", "squared-relu", "x.json");
  j["activation"] = "squared-relu";
  EXPECT_TRUE(trainplan::spec::model_from_json(j, "x.json").squared_relu);
}
