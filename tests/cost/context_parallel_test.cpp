// Context parallel by all-to-all (DeepSpeed-Ulysses): the bytes exchanged, the
// time, and the plan check, against hand-computed figures.
#include <gtest/gtest.h>

#include "cost/context_parallel.h"
#include "cost/evaluate.h"
#include "cost/layer_compute.h"
#include "net/instance_graph.h"
#include "step_fixture.h"

namespace trainplan::cost {
namespace {

spec::Plan ulysses_plan(int instances, int tp, int cp) {
  spec::Plan p;
  p.instances = instances;
  p.tp = tp;
  p.cp = cp;
  p.zero = 1;
  return p;
}

testing::StepFixture ulysses(const std::string& model, const std::string& hardware, int seq, long batch, spec::Plan p) {
  testing::StepFixture f(model, hardware, seq, batch, spec::Precision::mixed_bf16, p);
  f.stack.communication.context_parallel = spec::ContextParallel::all_to_all;
  return f;
}

}  // namespace

TEST(ContextParallelAllToAll, ExchangeBytesPerRank) {
  // Llama 2 7B (32 heads, 32 kv heads, head dim 128), seq 32768, micro-batch 1,
  // TP 1, CP 4: a rank holds 32768 / 4 = 8192 tokens. DeepSpeed 0.16.2
  // deepspeed/sequence/layer.py:375-384 sends Q, K and V, each its whole
  // [s/CP, b, heads, d] tensor (single_all_to_all :213-232, all_to_all_single
  // over input_t), and :405 the [s, b, heads/CP, d] output back: each
  // 8192 x 32 x 128 x 2 bytes = 67,108,864.
  testing::StepFixture f = ulysses("llama2-7b", "p4d.24xlarge", 32768, 2, ulysses_plan(1, 1, 4));
  const StepContext ctx = f.context();
  const HeadExchangeBytes x = head_exchange_bytes(ctx);
  EXPECT_DOUBLE_EQ(x.q, 67108864.0);
  EXPECT_DOUBLE_EQ(x.k, 67108864.0);
  EXPECT_DOUBLE_EQ(x.v, 67108864.0);
  EXPECT_DOUBLE_EQ(x.out, 67108864.0);
  // Grouped-query attention (Llama 3 8B: 8 kv heads) sends K and V at a
  // quarter of Q: 8192 x 8 x 128 x 2 = 16,777,216 (Transformer Engine's "a2a";
  // the microsoft fork itself asserts K and V as wide as Q, transformer.py:729).
  testing::StepFixture g = ulysses("llama3-8b", "p4d.24xlarge", 32768, 2, ulysses_plan(1, 1, 4));
  const HeadExchangeBytes y = head_exchange_bytes(g.context());
  EXPECT_DOUBLE_EQ(y.q, 67108864.0);
  EXPECT_DOUBLE_EQ(y.k, 16777216.0);
  EXPECT_DOUBLE_EQ(y.v, 16777216.0);
  EXPECT_DOUBLE_EQ(y.out, 67108864.0);
}

TEST(ContextParallelAllToAll, FourBlockingAllToAllsEachWay) {
  // The case above: four all-to-alls forward (Q, K, V, output; layer.py:375-405),
  // their mirrors backward (_SeqAllToAll.backward, :293-297), none hidden
  // (async_op False without an sp_stream, :265-266; the fork passes none,
  // microsoft/Megatron-DeepSpeed@f4157bea megatron/model/transformer.py:619-622).
  // Inside one p4d (CP group 4 ranks, stride 1: ranks i*CP .. (i+1)*CP-1,
  // parallel_state.py:209-215), each all-to-all of B = 67,108,864 bytes takes
  // step latency + fabric latency + B x 3/4 / (all-to-all bandwidth x intra efficiency).
  testing::StepFixture f = ulysses("llama2-7b", "p4d.24xlarge", 32768, 2, ulysses_plan(1, 1, 4));
  const StepContext ctx = f.context();
  const LayerCompute layer = layer_compute(ctx);
  const ContextParallelTime t = context_parallel(ctx, layer);
  const double one = f.cluster.all_to_all_seconds(67108864.0, {4, 1}, 1, f.calibration.collective);
  const double bps = f.cluster.graph().all_to_all_bytes_per_s({4, 1}) * f.calibration.collective.intra_node;
  EXPECT_GT(one, 67108864.0 * 3 / 4 / bps);
  EXPECT_LT(one, 67108864.0 * 3 / 4 / bps + 1e-3);  // latencies are microseconds
  EXPECT_DOUBLE_EQ(t.forward_s, 4 * one);
  EXPECT_DOUBLE_EQ(t.backward_s, 4 * one);
  EXPECT_EQ(t.recompute_s, 0);
  // Full recompute runs the layer's forward again, all-to-alls included.
  f.plan.recompute = spec::Recompute::full;
  const StepContext again = f.context();
  EXPECT_DOUBLE_EQ(context_parallel(again, layer_compute(again)).recompute_s, 4 * one);
}

TEST(ContextParallelAllToAll, AttentionSplitsByHeadsWithoutImbalance) {
  // Each rank runs the whole causal sequence for heads / CP: 1/CP of the
  // attention work, as the ring's load-balanced chunks do.
  testing::StepFixture one = ulysses("llama2-7b", "p4d.24xlarge", 32768, 8, ulysses_plan(1, 1, 1));
  testing::StepFixture four = ulysses("llama2-7b", "p4d.24xlarge", 32768, 2, ulysses_plan(1, 1, 4));
  const StepContext a = one.context(), b = four.context();
  EXPECT_DOUBLE_EQ(b.tokens(), 8192);
  EXPECT_LT(layer_compute(b).attention_forward_s, 0.3 * layer_compute(a).attention_forward_s);
}

TEST(ContextParallelAllToAll, PlanCheckRefusesHeadsCpDoesNotDivide) {
  const spec::ModelSpec llama3 = spec::load_model("llama3-8b");  // 32 heads, 8 kv heads
  const spec::ModelSpec gpt3 = spec::load_model("gpt3-175b");     // 96 heads
  const auto a2a = spec::ContextParallel::all_to_all;
  // CP 16 does not divide 8 kv heads (DeepSpeed 0.16.2 layer.py:219 asserts heads % SP).
  EXPECT_EQ(check_context_parallel(llama3, a2a, ulysses_plan(2, 1, 16)), PlanProblem::cp_not_dividing_heads);
  // TP 2 leaves 4 kv heads per rank: CP 8 does not divide them; CP 4 does.
  EXPECT_EQ(check_context_parallel(llama3, a2a, ulysses_plan(2, 2, 8)), PlanProblem::cp_not_dividing_heads);
  EXPECT_EQ(check_context_parallel(llama3, a2a, ulysses_plan(2, 2, 4)), PlanProblem::none);
  // GPT-3 175B at TP 8: 12 heads per rank, not divisible by CP 8.
  EXPECT_EQ(check_context_parallel(gpt3, a2a, ulysses_plan(8, 8, 8)), PlanProblem::cp_not_dividing_heads);
  // The ring and the all-gather split the sequence, not the heads.
  EXPECT_EQ(check_context_parallel(gpt3, spec::ContextParallel::ring, ulysses_plan(8, 8, 8)), PlanProblem::none);
  const spec::HardwareSpec hw = spec::load_hardware("p5.48xlarge");
  const spec::Workload w{32768, 16, 0, spec::Precision::mixed_bf16};
  const std::string why = explain(PlanProblem::cp_not_dividing_heads, llama3, hw, w, ulysses_plan(2, 2, 8));
  EXPECT_NE(why.find("CP 8"), std::string::npos) << why;
  EXPECT_NE(why.find("16 heads and 4 kv heads"), std::string::npos) << why;
  // evaluate refuses it with the stack's exchange.
  spec::Stack stack = spec::load_stack("megatron-lm");
  stack.communication.context_parallel = a2a;
  const Evaluation ev = evaluate(llama3, hw, stack, spec::Calibration{}, w, ulysses_plan(2, 2, 8));
  EXPECT_EQ(ev.problem, PlanProblem::cp_not_dividing_heads);
  stack.communication.context_parallel = spec::ContextParallel::ring;
  EXPECT_NE(evaluate(llama3, hw, stack, spec::Calibration{}, w, ulysses_plan(2, 2, 8)).problem,
            PlanProblem::cp_not_dividing_heads);
}

}  // namespace trainplan::cost
