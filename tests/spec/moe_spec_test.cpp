// MoE and MLA descriptors: parameter counts by hand, HF imports, bad fields.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "expect_spec_error.h"
#include "spec/load.h"

using namespace trainplan::spec;
using trainplan::spec::test_support::expect_spec_error;

TEST(MoeModel, Mixtral8x7bTotalAndActiveParameters) {
  const ModelSpec m = load_model("mixtral-8x7b");
  // Per layer: attention 4096 x (4096 + 2 x 1024) + 4096^2 = 41,943,040;
  // one SwiGLU expert 3 x 4096 x 14336 = 176,160,768, eight of them
  // 1,409,286,144; router 4096 x 8 = 32,768; two RMSNorms 8,192.
  // 32 layers: 32 x 1,451,270,144 = 46,440,644,608; embedding and untied
  // head 2 x 32000 x 4096 = 262,144,000, final norm 4,096: 46,702,792,704
  // (Mistral AI: 46.7B total).
  EXPECT_EQ(m.total_parameters(), 46702792704LL);
  // A token runs 2 of the 8 experts: 32 x (41,943,040 + 2 x 176,160,768 +
  // 32,768 + 8,192) + 262,148,096 = 12,879,925,248 (Mistral AI: 12.9B active).
  EXPECT_EQ(m.active_parameters(), 12879925248LL);
  EXPECT_EQ(m.routed_expert_parameters(), 32LL * 8 * 176160768);
}

TEST(MoeModel, DeepSeekV3TotalAndActiveParameters) {
  const ModelSpec m = load_model("deepseek-v3");
  // MLA per layer: Q 7168 x 1536 + 1536 + 1536 x 128 x 192 = 48,760,320;
  // KV 7168 x (512 + 64) + 512 + 512 x 128 x (128 + 128) = 20,906,496;
  // output 128 x 128 x 7168 = 117,440,512: 187,107,328.
  EXPECT_EQ(m.attention_parameters(), 187107328LL);
  // DeepSeek-AI (arXiv:2412.19437): 671B total, 37B activated per token (both
  // without the 14B multi-token-prediction module, which is left out here).
  EXPECT_NEAR(m.total_parameters() / 1e9, 671.0, 1.0);
  EXPECT_NEAR(m.active_parameters() / 1e9, 37.5, 0.6);
}

TEST(MoeModel, HuggingFaceMixtralMatchesTheDescriptor) {
  const auto j = nlohmann::json::parse(R"({"architectures": ["MixtralForCausalLM"], "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000, "max_position_embeddings": 32768,
    "tie_word_embeddings": false})");
  const ModelSpec m = model_from_json(j, "config.json");
  EXPECT_EQ(m.total_parameters(), load_model("mixtral-8x7b").total_parameters());
  EXPECT_EQ(m.active_parameters(), load_model("mixtral-8x7b").active_parameters());
}

TEST(MoeModel, HuggingFaceQwen2Moe) {
  // Qwen1.5-MoE-A2.7B's config.json: 60 experts of 1408, top 4, one shared
  // expert of 5632 (Qwen's model card: 14.3B total, 2.7B activated). Per layer
  // attention 3 x 2048^2 + 2048^2 = 16.8M, shared expert 3 x 2048 x 5632 =
  // 34.6M, 4 routed 4 x 3 x 2048 x 1408 = 34.6M: 24 x 86.1M = 2.07B, and the
  // untied embedding and head 2 x 151936 x 2048 = 0.62B.
  const auto j = nlohmann::json::parse(R"({"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048,
    "intermediate_size": 5632, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
    "num_experts": 60, "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_attention_heads": 16,
    "num_key_value_heads": 16, "vocab_size": 151936, "max_position_embeddings": 8192, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "tie_word_embeddings": false})");
  const ModelSpec m = model_from_json(j, "config.json");
  EXPECT_NEAR(m.total_parameters() / 1e9, 14.3, 0.05);
  EXPECT_NEAR(m.active_parameters() / 1e9, 2.7, 0.05);
}

// Qwen3 heads are 128 wide whatever the hidden size (2048 here, 32 heads): Q
// and the attention output are 4096 wide. Per layer: attention 2048 x (4096 +
// 2 x 512) + 4096 x 2048 = 18,874,368; 128 experts of 3 x 2048 x 768 =
// 603,979,776; router 262,144; two RMSNorms 4,096 (QK norm left out). 48 layers:
// 29,909,778,432 (Qwen3 model card: 29.9B non-embedding); untied embedding and
// head 2 x 151936 x 2048 and the final norm: 30,532,110,336 (30.5B total). A
// token runs 8 experts: 48 x 56,889,344 + 622,331,904 = 3,353,020,416 (3.3B).
TEST(MoeModel, Qwen3MoeHeadsWiderThanHiddenOverHeads) {
  const ModelSpec m = load_model("qwen3-30b-a3b");
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.query_hidden(), 4096);
  // Q, K, V, O (18,874,368) plus the per-head query and key RMSNorm weights (2 x 128, modeling_qwen3_moe.py q_norm, k_norm).
  EXPECT_EQ(m.attention_parameters(), 18874368LL + 256);
  EXPECT_EQ(m.total_parameters(), 30532110336LL + 48 * 256);
  EXPECT_EQ(m.active_parameters(), 3353020416LL + 48 * 256);
  const auto j = nlohmann::json::parse(R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
    "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
    "vocab_size": 151936, "max_position_embeddings": 40960, "decoder_sparse_step": 1, "mlp_only_layers": [],
    "tie_word_embeddings": false})");
  const ModelSpec hf = model_from_json(j, "config.json");
  EXPECT_EQ(hf.total_parameters(), m.total_parameters());
  EXPECT_EQ(hf.active_parameters(), m.active_parameters());
  // A head_dim equal to hidden / heads (Llama 3's configs state 128) changes nothing.
  auto llama = nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 128256, "max_position_embeddings": 8192})");
  EXPECT_EQ(model_from_json(llama, "config.json").explicit_head_dim, 0);
}

TEST(MoeModel, HeadDimIsCheckedWithItsPath) {
  auto j = read_json_file(data_root() + "/models/qwen3-30b-a3b.json");
  j["head_dim"] = 4;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.head_dim", "");
  j.erase("head_dim");
  j["heads"] = 30;  // 2048 % 30 != 0 and no head_dim
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.heads", "head_dim");
}

TEST(MoeModel, HuggingFaceDeepSeekV3MatchesTheDescriptor) {
  const auto j = nlohmann::json::parse(R"({"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1, "num_hidden_layers": 61,
    "num_attention_heads": 128, "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
    "max_position_embeddings": 163840, "num_nextn_predict_layers": 1, "tie_word_embeddings": false})");
  const ModelSpec m = model_from_json(j, "config.json");
  EXPECT_EQ(m.total_parameters(), load_model("deepseek-v3").total_parameters());
  EXPECT_TRUE(m.mla());
  EXPECT_EQ(m.qk_head_dim(), 192);
}

namespace {

nlohmann::json mixtral_file() {
  std::ifstream in(data_root() + "/models/mixtral-8x7b.json");
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(MoeModel, BadFieldsAreRefusedWithTheirPath) {
  auto j = mixtral_file();
  j["moe"]["experts"] = 1;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.moe.experts", "expected 2 to 65536 routed experts, got 1", "m.json");
  j = mixtral_file();
  j["moe"]["top_k"] = 9;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.moe.top_k", "at most the experts");
  j = mixtral_file();
  j["moe"]["first_dense_layers"] = 32;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.moe.first_dense_layers", "0..31");
  j = mixtral_file();
  j["moe"]["capacity_factor"] = 0.5;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.moe.capacity_factor", "dropless");
  j = mixtral_file();
  j["moe"]["expertz"] = 8;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.moe.expertz", "experts");
  j = mixtral_file();
  j["moe"].erase("top_k");
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.moe.top_k", "");
}

TEST(MoeModel, HuggingFaceBadFields) {
  auto j = nlohmann::json::parse(R"({"architectures": ["MixtralForCausalLM"], "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 3, "vocab_size": 32000, "max_position_embeddings": 32768})");
  j["num_experts_per_tok"] = 9;
  expect_spec_error([&] { model_from_json(j, "config.json"); }, "$.num_experts_per_tok", "at most the experts");
  j["num_experts_per_tok"] = 2;
  // Issue 41: 2^31 - 1 experts overflowed the search's divisor loop (SIGFPE)
  // and priced "5227 PiB to spare"; past any published MoE it is refused.
  j["num_local_experts"] = 2147483647;
  expect_spec_error([&] { model_from_json(j, "config.json"); }, "$.num_local_experts", "2 to 65536 routed experts");
  j.erase("num_local_experts");
  expect_spec_error([&] { model_from_json(j, "config.json"); }, "$.num_local_experts", "");
}

TEST(MoeStack, ContextAndExpertParallelAreOptionalAndRefused) {
  const Stack megatron = load_stack("megatron-lm");
  EXPECT_EQ(megatron.communication.context_parallel, ContextParallel::ring);
  EXPECT_TRUE(megatron.capabilities.expert_parallel);
  EXPECT_EQ(load_stack("torchtitan").communication.context_parallel, ContextParallel::all_gather);
  const Stack ds = load_stack("megatron-deepspeed");  // says nothing of CP or EP
  EXPECT_EQ(ds.communication.context_parallel, ContextParallel::none);
  EXPECT_FALSE(ds.capabilities.expert_parallel);
  Stack old = megatron;
  old.communication.context_parallel = ContextParallel::none;
  old.capabilities.expert_parallel = false;
  Plan p;
  p.cp = 2;
  EXPECT_NE(stack_refusal(old, p).find("context parallelism"), std::string::npos);
  EXPECT_EQ(stack_refusal(megatron, p), "");
  p.cp = 1;
  p.ep = 4;
  EXPECT_NE(stack_refusal(old, p).find("expert parallelism"), std::string::npos);
}

// DeepSeek-V2-Lite as published on the Hub, verbatim (issue 39.5): its
// config.json as checked in with the model's whole snapshot at
// cakeng/CS262_moe@afc71826 (DeepSeek-V2-Lite/config.json); the snapshot's
// model.safetensors.index.json gives total_size 31,412,968,448 bytes of BF16,
// 15,706,484,224 parameters, and its model card: "DeepSeek-V2-Lite comprises
// 15.7B total parameters, of which 2.4B are activated for each token".
TEST(MoeModel, HuggingFaceDeepSeekV2LiteAsPublished) {
  const auto j = nlohmann::json::parse(R"({
  "architectures": [
    "DeepseekV2ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "auto_map": {
    "AutoConfig": "configuration_deepseek.DeepseekV2Config",
    "AutoModel": "modeling_deepseek.DeepseekV2Model",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV2ForCausalLM"
  },
  "aux_loss_alpha": 0.001,
  "bos_token_id": 100000,
  "eos_token_id": 100001,
  "first_k_dense_replace": 1,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 10944,
  "kv_lora_rank": 512,
  "max_position_embeddings": 163840,
  "model_type": "deepseek_v2",
  "moe_intermediate_size": 1408,
  "moe_layer_freq": 1,
  "n_group": 1,
  "n_routed_experts": 64,
  "n_shared_experts": 2,
  "norm_topk_prob": false,
  "num_attention_heads": 16,
  "num_experts_per_tok": 6,
  "num_hidden_layers": 27,
  "num_key_value_heads": 16,
  "pretraining_tp": 1,
  "q_lora_rank": null,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "rms_norm_eps": 1e-06,
  "rope_scaling": {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 0.707,
    "mscale_all_dim": 0.707,
    "original_max_position_embeddings": 4096,
    "type": "yarn"
  },
  "rope_theta": 10000,
  "routed_scaling_factor": 1.0,
  "scoring_func": "softmax",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 1,
  "topk_method": "greedy",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.33.1",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 102400
})");
  const ModelSpec m = model_from_json(j, "DeepSeek-V2-Lite/config.json");
  EXPECT_TRUE(m.mla());
  EXPECT_NEAR(m.total_parameters() / 1e9, 15.7064842, 0.01);
  // The card's activated count leaves out the input embedding (102,400 x 2,048):
  // attention, the dense first layer, 2 shared and 6 of 64 routed experts in
  // each of the other 26, the routers, norms and the output head: 2.45B.
  EXPECT_NEAR((m.active_parameters() - 102400LL * 2048) / 1e9, 2.4, 0.06);
  EXPECT_EQ(m.qk_head_dim(), 192);
}
