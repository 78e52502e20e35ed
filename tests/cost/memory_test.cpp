#include <gtest/gtest.h>

#include "cost/memory.h"
#include "cost/plan_check.h"
#include "spec/load.h"

using namespace tp;

namespace {
spec::Workload workload(int seq, long batch, spec::Precision precision = spec::Precision::mixed_bf16) {
  spec::Workload w;
  w.seq_len = seq;
  w.global_batch_seqs = batch;
  w.precision = precision;
  return w;
}
}  // namespace

// Korthikanti et al. 2022, Table 2, per layer for GPT-3 175B (s 2048, b 1, h 12288, a 96, t 8).
TEST(Memory, ActivationsFollowKorthikanti) {
  const spec::ModelSpec m = spec::load_model("gpt3-175b");
  const spec::Workload w = workload(2048, 1);
  const double sbh = 2048.0 * 12288;
  spec::Plan p;
  p.tp = 8;
  p.recompute = spec::Recompute::none;
  EXPECT_DOUBLE_EQ(cost::layer_activation_bytes(m, w, p), sbh * (10 + 24.0 / 8 + 5 * 96 * 2048.0 / (12288 * 8)));
  p.sp = true;
  EXPECT_DOUBLE_EQ(cost::layer_activation_bytes(m, w, p), sbh * (34 + 5 * 96 * 2048.0 / 12288) / 8);
  p.recompute = spec::Recompute::selective;
  EXPECT_DOUBLE_EQ(cost::layer_activation_bytes(m, w, p), 34 * sbh / 8);
  p.recompute = spec::Recompute::full;
  EXPECT_DOUBLE_EQ(cost::layer_activation_bytes(m, w, p), 2 * sbh / 8);
  p.tp = 1;
  p.sp = false;
  p.recompute = spec::Recompute::none;
  EXPECT_DOUBLE_EQ(cost::layer_activation_bytes(m, w, p), sbh * (34 + 5 * 96 * 2048.0 / 12288));
}

TEST(Memory, StateBytesPerPrecision) {
  // Megatron-LM distributed optimizer docs: BF16 params with FP32 grads = 18 bytes/param.
  const auto mixed = cost::state_bytes_per_parameter(spec::Precision::mixed_bf16);
  EXPECT_DOUBLE_EQ(mixed.weights + mixed.gradients + mixed.optimizer, 18);
  const auto sr = cost::state_bytes_per_parameter(spec::Precision::bf16_sr);
  EXPECT_DOUBLE_EQ(sr.weights + sr.gradients + sr.optimizer, 8);
}

TEST(Memory, ZeroShardsTheRightState) {
  const spec::ModelSpec m = spec::load_model("llama2-7b");
  const spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  const spec::Workload w = workload(4096, 1024);
  spec::Plan p;
  p.instances = 4;
  p.tp = 8;
  ASSERT_EQ(cost::complete_plan(m, hw, w, p), cost::PlanProblem::none);
  ASSERT_EQ(p.dp, 16);
  const double params = cost::parameters_per_device(m, p);
  EXPECT_NEAR(params, m.total_parameters() / 8.0, 1);  // PP 1: everything, split by TP
  p.zero = 0;
  const auto z0 = cost::memory_per_device(m, hw, w, p);
  EXPECT_DOUBLE_EQ(z0.optimizer_bytes, params * 12);
  p.zero = 1;
  const auto z1 = cost::memory_per_device(m, hw, w, p);
  EXPECT_DOUBLE_EQ(z1.optimizer_bytes, params * 12 / 16);
  EXPECT_DOUBLE_EQ(z1.gradients_bytes, z0.gradients_bytes);
  p.zero = 2;
  EXPECT_DOUBLE_EQ(cost::memory_per_device(m, hw, w, p).gradients_bytes, params * 4 / 16);
  p.zero = 3;
  EXPECT_DOUBLE_EQ(cost::memory_per_device(m, hw, w, p).weights_bytes, params * 2 / 16);
}

TEST(Memory, PipelineKeepsMicroBatchesInFlightOnTheFirstStage) {
  const spec::ModelSpec m = spec::load_model("gpt-neox-20b");
  const spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  const spec::Workload w = workload(2048, 16384);
  spec::Plan p;
  p.instances = 4;
  p.tp = 8;
  p.pp = 4;
  p.recompute = spec::Recompute::selective;
  p.sp = true;
  ASSERT_EQ(cost::complete_plan(m, hw, w, p), cost::PlanProblem::none);
  const auto mem = cost::memory_per_device(m, hw, w, p);
  // 44 layers / 4 stages, 4 micro-batches in flight (= PP, since many micro-batches).
  EXPECT_DOUBLE_EQ(mem.activations_bytes, cost::layer_activation_bytes(m, w, p) * 11 * 4);
  EXPECT_NEAR(mem.total_bytes + mem.margin_bytes, 16.0 * 1073741824.0, 1);
}

TEST(Memory, VerdictAgainstCapacity) {
  const spec::ModelSpec m = spec::load_model("llama2-70b");
  const spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  const spec::Workload w = workload(4096, 1024);
  spec::Plan p;  // 70B on TP 8, no PP, no ZeRO: 17 GB of BF16 weights alone per core
  p.instances = 1;
  p.tp = 8;
  p.zero = 0;
  ASSERT_EQ(cost::complete_plan(m, hw, w, p), cost::PlanProblem::none);
  const auto mem = cost::memory_per_device(m, hw, w, p);
  EXPECT_FALSE(mem.fits);
  EXPECT_LT(mem.margin_bytes, 0);
}
