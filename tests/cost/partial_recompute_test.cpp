// Full recompute of the first N layers of each model chunk (Megatron-Core
// --recompute-method block, NVIDIA/Megatron-LM@d98e8a64 megatron/core/recompute.py:167-181):
// the recompute's time and the chunk's checkpoints scale with N / chunk layers,
// the rest of the chunk keeps every activation, and N at or above the chunk's
// layers is every layer.
#include <gtest/gtest.h>

#include "cost/evaluate.h"
#include "cost/memory.h"
#include "cost/plan_check.h"
#include "spec/load.h"
#include "spec/plan.h"

using namespace trainplan;

namespace {

struct Llama3Stages {
  spec::ModelSpec model = spec::load_model("llama3-8b");  // 32 layers
  spec::HardwareSpec hw = spec::load_hardware("dgx-h100");
  spec::Stack stack;  // generic: flash attention
  spec::Calibration calibration;
  spec::Workload workload{8192, 128, 0, spec::Precision::mixed_bf16};
  spec::Plan plan;
  Llama3Stages() {
    plan.instances = 2;
    plan.tp = 2;
    plan.pp = 2;  // 16 layers a stage
    plan.sp = true;
    plan.zero = 1;
  }
  cost::Evaluation run(spec::Recompute mode, int layers) {
    spec::Plan p = plan;
    p.recompute = mode;
    p.recompute_layers = layers;
    return cost::evaluate(model, hw, stack, calibration, workload, p);
  }
};

}  // namespace

TEST(PartialRecompute, SharesFollowTheChunk) {
  spec::Plan p;
  p.recompute = spec::Recompute::full;
  EXPECT_DOUBLE_EQ(spec::recomputed_layers(p, 16), 16);  // 0: every layer
  p.recompute_layers = 5;
  EXPECT_DOUBLE_EQ(spec::recomputed_layers(p, 16), 5);
  EXPECT_DOUBLE_EQ(spec::recomputed_share(p, 16), 5.0 / 16);
  EXPECT_DOUBLE_EQ(spec::recomputed_layers(p, 4), 4);  // a chunk smaller than N recomputes all of it
  p.pp = 2;
  p.virtual_stages = 2;  // 32 layers: chunks of 8
  EXPECT_DOUBLE_EQ(spec::recomputed_share(32, p), 5.0 / 8);
  EXPECT_EQ(spec::recompute_text(p), "full, first 5 layers of each chunk");
  EXPECT_EQ(spec::recompute_text(p, false), "full, first 5");
  p.recompute = spec::Recompute::selective;
  EXPECT_DOUBLE_EQ(spec::recomputed_layers(p, 16), 0);
}

TEST(PartialRecompute, TimeIsLinearInTheRecomputedLayers) {
  Llama3Stages s;
  const auto none = s.run(spec::Recompute::none, 0), full = s.run(spec::Recompute::full, 0);
  const auto four = s.run(spec::Recompute::full, 4), eight = s.run(spec::Recompute::full, 8);
  ASSERT_TRUE(none.ok() && full.ok() && four.ok() && eight.ok());
  // Every layer costs the same: 4 of 16 re-run a quarter of what 16 of 16 do.
  EXPECT_NEAR(four.estimate.time.recompute_s, 0.25 * full.estimate.time.recompute_s, 1e-12);
  EXPECT_NEAR(eight.estimate.time.recompute_s, 0.5 * full.estimate.time.recompute_s, 1e-12);
  EXPECT_GT(full.estimate.time.recompute_s, 0);
  // And so is the step's extra time over no recompute (compute and the replayed TP collectives).
  const double extra_full = full.estimate.time.step_s - none.estimate.time.step_s;
  const double extra_four = four.estimate.time.step_s - none.estimate.time.step_s;
  EXPECT_GT(extra_full, 0);
  EXPECT_NEAR(extra_four / extra_full, 0.25, 0.02);
  // HFU counts the recomputed forward of 4 layers of each 16.
  const double flops_full = full.estimate.hardware_flops_per_step - full.estimate.model_flops_per_step;
  const double flops_four = four.estimate.hardware_flops_per_step - four.estimate.model_flops_per_step;
  EXPECT_NEAR(flops_four / flops_full, 0.25, 1e-9);
}

TEST(PartialRecompute, CheckpointsTheRecomputedLayersAndKeepsTheRest) {
  Llama3Stages s;
  spec::Plan p = s.plan;
  ASSERT_EQ(cost::complete_plan(s.model, s.hw, s.workload, p, spec::ContextParallel::ring), cost::PlanProblem::none);
  spec::Plan stored = p, checkpointed = p;
  checkpointed.recompute = spec::Recompute::full;
  const double whole_layer = cost::layer_activation_bytes(s.model, s.stack, s.workload, stored);
  const double input_only = cost::layer_activation_bytes(s.model, s.stack, s.workload, checkpointed);
  ASSERT_GT(whole_layer, input_only);
  spec::Plan partial = checkpointed;
  partial.recompute_layers = 4;
  const int in_flight = cost::chunks_in_flight(p, 0);  // PP 2: the first stage holds two micro-batches
  EXPECT_NEAR(cost::activations_bytes(s.model, s.stack, s.workload, partial, 0),
              in_flight * (4 * input_only + 12 * whole_layer), 1.0);
  // Every layer recomputed: the checkpoints and one replayed layer.
  EXPECT_NEAR(cost::activations_bytes(s.model, s.stack, s.workload, checkpointed, 0),
              in_flight * 16 * input_only + whole_layer, 1.0);
  // Between none and full in the estimate too.
  const auto none = s.run(spec::Recompute::none, 0), full = s.run(spec::Recompute::full, 0);
  const auto four = s.run(spec::Recompute::full, 4);
  EXPECT_LT(four.estimate.memory.activations_bytes, none.estimate.memory.activations_bytes);
  EXPECT_GT(four.estimate.memory.activations_bytes, full.estimate.memory.activations_bytes);
}

TEST(PartialRecompute, AllOfTheChunkIsFullAndOtherModesRefuseIt) {
  Llama3Stages s;
  const auto all = s.run(spec::Recompute::full, 16), more = s.run(spec::Recompute::full, 40);
  const auto full = s.run(spec::Recompute::full, 0);
  ASSERT_TRUE(all.ok() && more.ok());
  EXPECT_EQ(all.plan.recompute_layers, 0);  // one plan, one name
  EXPECT_EQ(more.plan.recompute_layers, 0);
  EXPECT_DOUBLE_EQ(all.estimate.time.step_s, full.estimate.time.step_s);
  EXPECT_EQ(s.run(spec::Recompute::selective, 4).problem, cost::PlanProblem::partial_recompute_not_full);
  EXPECT_EQ(s.run(spec::Recompute::none, 4).problem, cost::PlanProblem::partial_recompute_not_full);
  EXPECT_EQ(s.run(spec::Recompute::full, -1).problem, cost::PlanProblem::non_positive);
}
