#include <gtest/gtest.h>

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
