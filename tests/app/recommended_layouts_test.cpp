// Layouts NVIDIA runs are layouts that fit (issue 40.1: no real run refused).
// NeMo's performance scripts launch each pre-training model on H100 with the
// layout its recommended-configs table names, and the published throughputs
// are measured with them, so every row whose model trainplan describes must be
// predicted to fit under the nemo stack, in both precisions it lists.
#include <gtest/gtest.h>

#include <string>

#include "app/estimate.h"

namespace trainplan::app {
namespace {

// NVIDIA/NeMo@8cfedd72 scripts/performance/recommended_model_configs/model_configs_h100.csv,
// pre_train rows (the line of each): num_gpus, seq_len, tp, pp, cp, ep, vp, mbs, gbs, etp,
// use_mcore_fsdp; recompute_layers 0 in every row.
struct RecommendedLayout {
  int line;
  const char* model;
  const char* dtype;
  int gpus, seq_len, tp, pp, cp, ep, vp, mbs, gbs, etp;
  bool fsdp;
};

constexpr RecommendedLayout kNemoH100[] = {
    {8, "gpt3-175b", "fp8", 512, 2048, 4, 8, 1, 1, 6, 2, 2048, 0, false},
    {9, "gpt3-175b", "fp8", 128, 2048, 4, 8, 1, 1, 6, 1, 256, 0, false},
    {10, "gpt3-175b", "bf16", 128, 2048, 4, 8, 1, 1, 6, 1, 256, 0, false},
    {11, "llama3.1-405b", "fp8", 1024, 8192, 8, 8, 2, 1, 8, 1, 512, 0, false},
    {12, "llama3.1-405b", "bf16", 1024, 8192, 8, 8, 2, 1, 8, 1, 512, 0, false},
    {13, "llama3-70b", "fp8", 64, 8192, 4, 8, 1, 1, 5, 1, 128, 0, false},
    {14, "llama3-70b", "bf16", 64, 8192, 4, 4, 2, 1, 5, 1, 128, 0, false},
    {15, "llama3-8b", "fp8", 8, 8192, 1, 1, 1, 1, 1, 1, 128, 0, true},
    {16, "llama3-8b", "bf16", 8, 8192, 1, 1, 2, 1, 1, 1, 128, 0, false},
    {17, "mixtral-8x7b", "fp8", 64, 4096, 1, 4, 1, 8, 8, 1, 256, 0, false},
    {18, "mixtral-8x7b", "bf16", 64, 4096, 1, 4, 1, 8, 8, 1, 256, 0, false},
    {19, "mixtral-8x22b", "bf16", 256, 65536, 4, 4, 8, 8, 14, 1, 256, 1, false},
    {20, "mixtral-8x22b", "fp8", 256, 65536, 4, 4, 8, 8, 14, 1, 256, 1, false},
    {25, "nemotron4-15b", "bf16", 64, 4096, 2, 1, 1, 1, 1, 2, 256, 0, false},
    {26, "nemotron4-15b", "fp8", 64, 4096, 2, 1, 1, 1, 1, 2, 256, 0, false},
    {27, "nemotron4-340b", "bf16", 256, 4096, 8, 8, 1, 1, 12, 1, 64, 0, false},
    {28, "nemotron4-340b", "fp8", 256, 4096, 8, 8, 1, 1, 12, 1, 64, 0, false},
};

TEST(RecommendedLayouts, NemoH100PretrainingLayoutsFit) {
  for (const RecommendedLayout& row : kNemoH100) {
    const std::string where = std::string("model_configs_h100.csv:") + std::to_string(row.line) + " " + row.model;
    ScenarioOptions s;
    s.model = row.model;
    s.hardware = "dgx-h100";
    s.stack = "nemo";
    s.precision = std::string(row.dtype) == "fp8" ? "fp8" : "mixed-bf16";
    s.seq_len = row.seq_len;
    s.global_batch = row.gbs;
    PlanOptions p;
    p.instances = row.gpus / 8;
    p.tp = row.tp;
    p.pp = row.pp;
    p.cp = row.cp;
    p.ep = row.ep;
    p.etp = row.etp;
    p.virtual_stages = row.vp;
    p.micro_batch = row.mbs;
    p.zero = row.fsdp ? 3 : 1;  // use_mcore_fsdp: Megatron-FSDP shards weights, gradients and states
    p.recompute = "none";
    // SP as the stack's default (stacks/nemo.json sequence_parallel_default: NeMo's recipes run it at TP > 1).
    p.overlap_tp = row.tp > 1;  // NeMo's H100 recipes overlap TP communication
    // nemo/collections/llm/recipes/llama31_405b.py:72-73: account_for_embedding/loss_in_pipeline_split.
    p.edge_layer_slots = std::string(row.model) == "llama3.1-405b";
    const EstimateOutcome out = estimate_plan(s, p, cost::PipelineMethod::dag, "");
    ASSERT_TRUE(out.refusal.empty()) << where << ": " << out.refusal;
    EXPECT_TRUE(out.evaluation.ok()) << where << " predicted not to fit: " << out.evaluation.estimate.memory.total_bytes / (1 << 30)
                                     << " GiB";
  }
}

}  // namespace
}  // namespace trainplan::app
