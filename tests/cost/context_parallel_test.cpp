// Context parallel by all-to-all (DeepSpeed-Ulysses): the bytes exchanged, the
// time, and the plan check, against hand-computed figures.
#include <gtest/gtest.h>

#include "cost/context_parallel.h"
#include "cost/estimate.h"
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
  spec::Stack a2a, ring;
  a2a.communication.context_parallel = spec::ContextParallel::all_to_all;
  ring.communication.context_parallel = spec::ContextParallel::ring;
  // CP 16 does not divide 8 kv heads (DeepSpeed 0.16.2 layer.py:219 asserts heads % SP).
  EXPECT_EQ(check_context_parallel(llama3, a2a, ulysses_plan(2, 1, 16)), PlanProblem::cp_not_dividing_heads);
  // TP 2 leaves 4 kv heads per rank: CP 8 does not divide them; CP 4 does.
  EXPECT_EQ(check_context_parallel(llama3, a2a, ulysses_plan(2, 2, 8)), PlanProblem::cp_not_dividing_heads);
  EXPECT_EQ(check_context_parallel(llama3, a2a, ulysses_plan(2, 2, 4)), PlanProblem::none);
  // GPT-3 175B at TP 8: 12 heads per rank, not divisible by CP 8.
  EXPECT_EQ(check_context_parallel(gpt3, a2a, ulysses_plan(8, 8, 8)), PlanProblem::cp_not_dividing_heads);
  // The ring and the all-gather split the sequence, not the heads.
  EXPECT_EQ(check_context_parallel(gpt3, ring, ulysses_plan(8, 8, 8)), PlanProblem::none);
  const spec::HardwareSpec hw = spec::load_hardware("p5.48xlarge");
  const spec::Workload w{32768, 16, 0, spec::Precision::mixed_bf16};
  const std::string why = explain(PlanProblem::cp_not_dividing_heads, llama3, hw, w, ulysses_plan(2, 2, 8));
  EXPECT_NE(why.find("CP 8"), std::string::npos) << why;
  EXPECT_NE(why.find("16 heads and 4 kv heads"), std::string::npos) << why;
  // evaluate refuses it with the stack's exchange.
  spec::Stack stack = spec::load_stack("megatron-lm");
  stack.communication.context_parallel = spec::ContextParallel::all_to_all;
  const Evaluation ev = evaluate(llama3, hw, stack, spec::Calibration{}, w, ulysses_plan(2, 2, 8));
  EXPECT_EQ(ev.problem, PlanProblem::cp_not_dividing_heads);
  stack.communication.context_parallel = spec::ContextParallel::ring;
  EXPECT_NE(evaluate(llama3, hw, stack, spec::Calibration{}, w, ulysses_plan(2, 2, 8)).problem,
            PlanProblem::cp_not_dividing_heads);
}

TEST(ContextParallelAllToAll, SequenceNeedsAMultipleOfCpOnly) {
  // The ring and the all-gather give each rank two of 2 x CP chunks (the causal mask's load
  // balancing); an all-to-all gives each rank s / CP tokens (microsoft/Megatron-DeepSpeed@f4157bea
  // pretrain_gpt.py:138 asserts seq_length % sp == 0) and then the whole sequence for heads / CP.
  const spec::ModelSpec m = spec::load_model("llama2-7b");
  const spec::HardwareSpec hw = spec::load_hardware("p4d.24xlarge");
  const spec::Workload w{32772, 16, 0, spec::Precision::mixed_bf16};  // 4 x 8193: a multiple of 4, not of 8
  EXPECT_EQ(cp_sequence_multiple(spec::ContextParallel::ring, 4), 8);
  EXPECT_EQ(cp_sequence_multiple(spec::ContextParallel::all_gather, 4), 8);
  EXPECT_EQ(cp_sequence_multiple(spec::ContextParallel::all_to_all, 4), 4);
  spec::Plan p = ulysses_plan(2, 1, 4);
  EXPECT_EQ(complete_plan(m, hw, w, p, spec::ContextParallel::ring), PlanProblem::cp_not_dividing_seq);
  p = ulysses_plan(2, 1, 4);
  EXPECT_EQ(complete_plan(m, hw, w, p, spec::ContextParallel::all_gather), PlanProblem::cp_not_dividing_seq);
  p = ulysses_plan(2, 1, 4);
  EXPECT_EQ(complete_plan(m, hw, w, p, spec::ContextParallel::all_to_all), PlanProblem::none);
  p = ulysses_plan(2, 1, 8);  // 32772 is not a multiple of 8
  EXPECT_EQ(complete_plan(m, hw, w, p, spec::ContextParallel::all_to_all), PlanProblem::cp_not_dividing_seq);
  const std::string a2a_why = explain(PlanProblem::cp_not_dividing_seq, m, hw, w, p, spec::ContextParallel::all_to_all);
  EXPECT_NE(a2a_why.find("divisible by CP (each rank's s / CP tokens"), std::string::npos) << a2a_why;
  EXPECT_NE(a2a_why.find("pretrain_gpt.py:138"), std::string::npos) << a2a_why;
  const std::string ring_why = explain(PlanProblem::cp_not_dividing_seq, m, hw, w, p);
  EXPECT_NE(ring_why.find("divisible by 2 x CP"), std::string::npos) << ring_why;
  // evaluate takes the rule from the stack: the microsoft fork's Ulysses stack prices CP 4 at 32772 tokens.
  const spec::Stack ulysses = spec::load_stack("megatron-deepspeed-ms-nopipe-ulysses");
  spec::Plan q = ulysses_plan(2, 1, 4);
  q.recompute = spec::Recompute::full;
  EXPECT_NE(evaluate(m, hw, ulysses, spec::Calibration{}, w, q).problem, PlanProblem::cp_not_dividing_seq);
  spec::Stack as_ring = ulysses;
  as_ring.communication.context_parallel = spec::ContextParallel::ring;
  EXPECT_EQ(evaluate(m, hw, as_ring, spec::Calibration{}, w, q).problem, PlanProblem::cp_not_dividing_seq);
}

TEST(ContextParallelAllToAll, MicrosoftForkRefusesCpBesideTpPpOrGroupedQueryAttention) {
  // microsoft/Megatron-DeepSpeed@f4157bea asserts TP 1 and PP 1 under --ds-sequence-parallel-size
  // (megatron/core/parallel_state.py:145-147) and K and V as wide as Q (megatron/model/transformer.py:729):
  // stack megatron-deepspeed-ms-nopipe-ulysses says so, and evaluate refuses what the fork refuses.
  const spec::Stack s = spec::load_stack("megatron-deepspeed-ms-nopipe-ulysses");
  EXPECT_TRUE(s.capabilities.context_parallel_without_tp_pp);
  EXPECT_TRUE(s.capabilities.context_parallel_needs_all_kv_heads);
  EXPECT_FALSE(spec::load_stack("megatron-lm").capabilities.context_parallel_without_tp_pp);
  EXPECT_FALSE(spec::load_stack("megatron-lm").capabilities.context_parallel_needs_all_kv_heads);
  const spec::ModelSpec llama2 = spec::load_model("llama2-7b");  // 32 heads, 32 kv heads
  const spec::ModelSpec llama3 = spec::load_model("llama3-8b");  // 32 heads, 8 kv heads
  const spec::HardwareSpec hw = spec::load_hardware("p4d.24xlarge");
  const spec::Workload w{32768, 16, 0, spec::Precision::mixed_bf16};
  auto plan = [](int tp, int cp) {
    spec::Plan p = ulysses_plan(2, tp, cp);
    p.recompute = spec::Recompute::full;
    return p;
  };
  EXPECT_EQ(check_context_parallel(llama2, s, plan(2, 4)), PlanProblem::cp_beside_tp_or_pp);
  spec::Plan pp2 = plan(1, 4);
  pp2.pp = 2;
  EXPECT_EQ(check_context_parallel(llama2, s, pp2), PlanProblem::cp_beside_tp_or_pp);
  EXPECT_EQ(check_context_parallel(llama3, s, plan(1, 4)), PlanProblem::cp_needs_all_kv_heads);
  EXPECT_EQ(check_context_parallel(llama2, s, plan(1, 4)), PlanProblem::none);
  // Without CP the stack is megatron-deepspeed-ms-nopipe's: TP and GQA run.
  EXPECT_EQ(check_context_parallel(llama3, s, plan(2, 1)), PlanProblem::none);
  // The ring stacks keep TP and GQA beside CP.
  EXPECT_EQ(check_context_parallel(llama3, spec::load_stack("megatron-lm"), plan(2, 4)), PlanProblem::none);
  EXPECT_EQ(evaluate(llama2, hw, s, spec::Calibration{}, w, plan(2, 4)).problem, PlanProblem::cp_beside_tp_or_pp);
  EXPECT_EQ(evaluate(llama3, hw, s, spec::Calibration{}, w, plan(1, 4)).problem, PlanProblem::cp_needs_all_kv_heads);
  const Evaluation ok = evaluate(llama2, hw, s, spec::Calibration{}, w, plan(1, 4));
  EXPECT_TRUE(ok.problem == PlanProblem::none || ok.problem == PlanProblem::out_of_memory) << to_string(ok.problem);
  const std::string tp_why = explain(PlanProblem::cp_beside_tp_or_pp, llama2, hw, w, plan(2, 4));
  EXPECT_NE(tp_why.find("CP 4 runs only at TP 1 and PP 1 under this stack; the plan has TP 2, PP 1"), std::string::npos) << tp_why;
  EXPECT_NE(tp_why.find("parallel_state.py:145-147"), std::string::npos) << tp_why;
  const std::string kv_why = explain(PlanProblem::cp_needs_all_kv_heads, llama3, hw, w, plan(1, 4));
  EXPECT_NE(kv_why.find("llama3-8b has 8 kv heads for 32 heads"), std::string::npos) << kv_why;
  EXPECT_NE(kv_why.find("transformer.py:729"), std::string::npos) << kv_why;
}

// The step part every report names CP's time by, declared once (kStepParts): right for the ring
// and the all-gather (K and V) and for the all-to-all (Q, K, V and the output heads) alike.
TEST(ContextParallelAllToAll, StepPartLabelNamesNoOneExchange) {
  int found = 0;
  for (const StepPart& part : kStepParts)
    if (part.seconds == &StepBreakdown::cp_comm_exposed_s) {
      ++found;
      EXPECT_STREQ(part.label, "exposed CP communication (attention exchange)");
    }
  EXPECT_EQ(found, 1);
}

}  // namespace trainplan::cost
