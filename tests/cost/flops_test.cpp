#include <gtest/gtest.h>

#include "cost/flops.h"
#include "spec/load.h"

using namespace trainplan;

// Narayanan et al. 2021 (Megatron-LM, SC21), eq. 3: FLOPs per iteration of a
// GPT with a 4h MLP and full (non-causal) attention, with recompute excluded:
//   F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
TEST(Flops, MatchesMegatronFormulaWithoutCausalSaving) {
  spec::ModelSpec m = spec::load_model("gpt3-175b");
  m.kind = spec::ModelKind::encoder_mlm;  // full attention, as the formula assumes
  m.head_token_fraction = 1.0;
  // The formula has no MLM transform; remove it by comparing the layer part and head part.
  const double B = 1536, s = 2048, l = m.layers, h = m.hidden, V = double(m.padded_vocab());
  const double megatron_layers = 72 * B * s * l * h * h * (1 + s / (6 * h));
  const double ours_layers = 3 * l * cost::layer_forward_flops(m, B * s, int(s)).total();
  EXPECT_NEAR(ours_layers / megatron_layers, 1.0, 1e-12);
  spec::ModelSpec decoder = spec::load_model("gpt3-175b");
  const double megatron_head = 72 * B * s * l * h * h * V / (12 * l * h);
  EXPECT_NEAR(3 * cost::head_forward_flops(decoder, B * s) / megatron_head, 1.0, 1e-12);
}

TEST(Flops, CausalAttentionCountsTheLowerTriangle) {
  const spec::ModelSpec m = spec::load_model("llama2-7b");
  const auto l = cost::layer_forward_flops(m, 4096, 4096);
  // Hand count: 2 * tokens * s * h * (s+1)/(2s) = 2 * 4096 * 4096 * 4096 * 4097/8192.
  EXPECT_DOUBLE_EQ(l.attention_scores, 2.0 * 4096 * 4096 * 4096 * 4097.0 / 8192.0);
  // SwiGLU: three h x f matrices; GQA-free QKV: 3 h^2.
  EXPECT_DOUBLE_EQ(l.mlp, 2.0 * 4096 * 4096 * 11008 * 3);
  EXPECT_DOUBLE_EQ(l.qkv, 2.0 * 4096 * 4096 * 3 * 4096);
}

TEST(Flops, GroupedQueryAttentionShrinksQkv) {
  const spec::ModelSpec m = spec::load_model("llama2-70b");  // 64 heads, 8 kv heads of 128
  const auto l = cost::layer_forward_flops(m, 1, 4096);
  EXPECT_DOUBLE_EQ(l.qkv, 2.0 * 8192 * (8192 + 2 * 1024));
}

// Heads wider than hidden / heads (Qwen3 30B-A3B: 32 x 128 = 4096 over hidden
// 2048): QKV 2 x 2048 x (4096 + 2 x 512) and the output projection
// 2 x 4096 x 2048 FLOPs per token, scores and context 2 x s x 4096 each.
TEST(Flops, ExplicitHeadDimSetsTheAttentionWidths) {
  const spec::ModelSpec m = spec::load_model("qwen3-30b-a3b");
  const cost::LayerFlops l = cost::layer_forward_flops(m, 1, 4096);
  const double causal = 4097.0 / 8192;
  EXPECT_DOUBLE_EQ(l.qkv, 2.0 * 2048 * (4096 + 1024));
  EXPECT_DOUBLE_EQ(l.output_projection, 2.0 * 4096 * 2048);
  EXPECT_DOUBLE_EQ(l.attention_scores, 2.0 * 4096 * 4096 * causal);
  EXPECT_DOUBLE_EQ(l.attention_context, 2.0 * 4096 * 4096 * causal);
}

TEST(Flops, ModelFlopsCloseToSixND) {
  // Kaplan et al. 2020: training FLOPs ~ 6 N D, plus attention; for llama2-7b at
  // s = 4096 the attention share adds about 6 * 2 * l * s * h / 2 per token.
  const spec::ModelSpec m = spec::load_model("llama2-7b");
  const double tokens = 4096;
  const double six_nd = 6.0 * m.total_parameters() * tokens;
  const double ours = cost::model_flops(m, tokens, 4096);
  EXPECT_GT(ours / six_nd, 1.05);
  EXPECT_LT(ours / six_nd, 1.20);
}

TEST(Flops, RecomputeAddsHardwareFlopsOnly) {
  const spec::ModelSpec m = spec::load_model("llama2-7b");
  const double model = cost::model_flops(m, 4096, 4096);
  const auto layer = cost::layer_forward_flops(m, 4096, 4096);
  EXPECT_DOUBLE_EQ(cost::hardware_flops(m, 4096, 4096, spec::Recompute::none), model);
  EXPECT_DOUBLE_EQ(cost::hardware_flops(m, 4096, 4096, spec::Recompute::selective),
                   model + 32 * layer.attention_core());
  EXPECT_DOUBLE_EQ(cost::hardware_flops(m, 4096, 4096, spec::Recompute::full), model + 32 * layer.total());
}
