#include <gtest/gtest.h>

#include "cost/plan_check.h"
#include "spec/load.h"

using namespace trainplan;
using cost::PlanProblem;

// Outside an anonymous namespace: TEST_F's classes derive from it, and in a
// unity batch an internal-linkage base is a -Wsubobject-linkage warning.
struct PlanCheck : ::testing::Test {
  spec::ModelSpec model = spec::load_model("llama2-7b");
  spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  spec::Workload w{4096, 1024, 0, spec::Precision::bf16_sr};
  PlanProblem check(spec::Plan p) { return cost::complete_plan(model, hw, w, p); }
};

TEST_F(PlanCheck, Seed002PlanIsValidAndDerivesDpAndAccumulation) {
  spec::Plan p;
  p.instances = 128;
  p.tp = 8;
  p.sp = true;
  ASSERT_EQ(cost::complete_plan(model, hw, w, p), PlanProblem::none);
  EXPECT_EQ(p.dp, 512);        // seed 002: DP 512
  EXPECT_EQ(p.grad_accum, 2);  // seed 002: gradient accumulation 2
}

TEST_F(PlanCheck, Refusals) {
  spec::Plan p;
  p.instances = 1;
  p.tp = 3;
  EXPECT_EQ(check(p), PlanProblem::tp_not_dividing_heads);
  p.tp = 8;
  p.pp = 5;
  EXPECT_EQ(check(p), PlanProblem::pp_not_dividing_layers);
  p.pp = 1;
  p.micro_batch = 3;
  EXPECT_EQ(check(p), PlanProblem::batch_not_dividing);
  p.micro_batch = 1;
  p.virtual_stages = 2;
  EXPECT_EQ(check(p), PlanProblem::interleave_needs_pp);
  p.virtual_stages = 1;
  p.tp = 1;
  p.sp = true;
  EXPECT_EQ(check(p), PlanProblem::sp_without_tp);
  p.sp = false;
  p.zero = 4;
  EXPECT_EQ(check(p), PlanProblem::non_positive);
}

TEST_F(PlanCheck, TensorParallelStaysInsideTheInstanceAndRespectsKvHeads) {
  spec::Plan p;
  p.instances = 2;
  p.tp = 64;  // divides nothing of a 32-core instance... and not the 32 heads
  EXPECT_EQ(check(p), PlanProblem::tp_not_dividing_heads);
  model = spec::load_model("llama2-70b");  // 8 kv heads: TP 16 replicates them, TP 64 > instance
  p.tp = 16;
  EXPECT_EQ(check(p), PlanProblem::none);
  hw = spec::load_hardware("dl1.24xlarge");
  EXPECT_EQ(check(p), PlanProblem::tp_not_dividing_instance);
}

TEST_F(PlanCheck, ExplainNamesTheNumbers) {
  spec::Plan p;
  p.tp = 3;
  const std::string why = cost::explain(PlanProblem::tp_not_dividing_heads, model, hw, w, p);
  EXPECT_NE(why.find("TP 3"), std::string::npos);
  EXPECT_NE(why.find("32 attention heads"), std::string::npos);
}

// Sizes that would overflow an int or build an unbounded schedule are refused
// before any work: 2e9 instances of 32 devices, or a global batch of 2e9
// sequences (one extra zero) on one instance (2^21 > 2^20 micro-batches).
TEST_F(PlanCheck, HugeClustersAndBatchesAreBeyondLimits) {
  spec::Plan p;
  p.instances = 2000000000;
  p.tp = 8;
  EXPECT_EQ(check(p), PlanProblem::beyond_limits);
  p.instances = 1;
  w.global_batch_seqs = 2000000000;
  EXPECT_EQ(check(p), PlanProblem::beyond_limits);
  const std::string why = cost::explain(PlanProblem::beyond_limits, model, hw, w, p);
  EXPECT_NE(why.find("2000000000"), std::string::npos) << why;
  EXPECT_NE(why.find("1048576 micro-batches"), std::string::npos) << why;
  w.global_batch_seqs = 1024L * 1024 * 4;  // exactly 2^20 micro-batches of DP 4: at the bound, accepted
  EXPECT_EQ(cost::complete_plan(model, hw, w, p), PlanProblem::none);
  EXPECT_EQ(p.grad_accum, 1 << 20);
}

// PP x virtual stages past an int (reachable through the library and the
// Python module, which the command line's caps do not guard): refused as not
// dividing the layers, not an overflow or a division by zero.
TEST_F(PlanCheck, PipelineChunksBeyondAnIntAreRefusedNotOverflowed) {
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  p.pp = 1 << 30;
  p.virtual_stages = 4;  // 2^32 chunks: 0 in 32-bit arithmetic
  EXPECT_EQ(check(p), PlanProblem::pp_not_dividing_layers);
}
