// Expert and context parallelism: each formula against a hand-computed figure.
#include <gtest/gtest.h>

#include "cost/context_parallel.h"
#include "cost/evaluate.h"
#include "cost/mlp_compute.h"
#include "cost/expert_parallel.h"
#include "cost/flops.h"
#include "cost/layer_compute.h"
#include "cost/memory.h"
#include "step_fixture.h"

namespace trainplan::cost {
namespace {

spec::Plan plan_of(int instances, int tp, int pp, int cp, int ep, bool sp = false) {
  spec::Plan p;
  p.instances = instances;
  p.tp = tp;
  p.pp = pp;
  p.cp = cp;
  p.ep = ep;
  p.sp = sp;
  p.zero = 1;
  return p;
}

}  // namespace

TEST(ExpertParallel, DispatchBytesPerRank) {
  // Mixtral 8x7B, TP 1, micro-batch 1, seq 4096: 4096 tokens x top-2 x h 4096
  // x 2 bytes = 67,108,864 bytes leave for the experts, and as many come back.
  testing::StepFixture f("mixtral-8x7b", "p5.48xlarge", 4096, 64, spec::Precision::mixed_bf16, plan_of(8, 1, 1, 1, 8));
  const StepContext ctx = f.context();
  EXPECT_DOUBLE_EQ(dispatch_bytes(ctx), 4096.0 * 2 * 4096 * 2);
  // The busiest rank's load scales it: imbalance 1.25.
  f.workload.expert_imbalance = 1.25;
  EXPECT_DOUBLE_EQ(dispatch_bytes(f.context()), 1.25 * 4096.0 * 2 * 4096 * 2);
  // A capacity factor caps it.
  f.model.capacity_factor = 1.1;
  EXPECT_DOUBLE_EQ(dispatch_bytes(f.context()), 1.1 * 4096.0 * 2 * 4096 * 2);
}

TEST(ExpertParallel, AllToAllInsideAndAcrossInstances) {
  const spec::HardwareSpec hw = spec::load_hardware("p5.48xlarge");
  const net::Cluster cluster(hw);
  spec::CollectiveEfficiency ideal;
  ideal.intra_node = ideal.inter_node = 1;
  ideal.step_latency_s = 0;
  // 8 GPUs on NVSwitch (450 GB/s per direction each): every GPU sends 7/8 of
  // 64 MB, the switch port is the bottleneck: 56e6 / 450e9 s, plus 2 us latency.
  EXPECT_NEAR(cluster.all_to_all_seconds(64e6, {8, 1}, 1, ideal), 56e6 / 450e9 + 2e-6, 1e-12);
  // EP 16 over 2 instances: 8 of 16 shares leave the instance over EFA (3200
  // Gb/s = 400e9 B/s shared by 8 GPUs: 50e9 each): 32e6 / 50e9; the local
  // 7/16 share on NVSwitch is faster; latency max(15 us, 2 us).
  EXPECT_NEAR(cluster.all_to_all_seconds(64e6, {16, 1}, 2, ideal), 32e6 / 50e9 + 15e-6, 1e-12);
}

// A once-per-instance dispatcher (DeepEP, HybridEP) sends each token over EFA
// to every other instance holding one of its experts. Mixtral's 8 experts, top
// 2, over 2 instances: both picks stay home with probability 4/8 x 3/7 = 3/14,
// so 11/14 of a copy leaves. Qwen3's 128, top 8: 1 - prod (64 - i) / (128 - i).
TEST(ExpertParallel, OncePerInstanceDispatchSendsOneCopyPerInstanceReached) {
  EXPECT_DOUBLE_EQ(instances_reached_per_token(8, 2, 2), 11.0 / 14);
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (64.0 - i) / (128.0 - i);
  EXPECT_NEAR(instances_reached_per_token(128, 8, 2), 1 - miss, 1e-12);
  EXPECT_DOUBLE_EQ(instances_reached_per_token(128, 8, 1), 0.0);
  // The fabric and EFA parts given apart: EP 16 over 2 p5 instances, ideal
  // efficiencies, 8e6 bytes over EFA at 50e9 B/s per GPU outlast 14e6 on NVSwitch.
  const net::Cluster cluster(spec::load_hardware("p5.48xlarge"));
  spec::CollectiveEfficiency ideal;
  ideal.intra_node = ideal.inter_node = 1;
  ideal.step_latency_s = 0;
  EXPECT_NEAR(cluster.all_to_all_seconds(14e6, 8e6, {16, 1}, 2, ideal), 8e6 / 50e9 + 15e-6, 1e-12);
}

// Qwen3 30B-A3B, EP 16 over two DGX H100: the nemo stack's dispatcher sends
// about a quarter of the plain all-to-all's EFA bytes (1 copy against 4 of a
// token's 8 for the other instance), so its exposed EP time falls.
TEST(ExpertParallel, NemoDispatchesOncePerInstance) {
  const spec::ModelSpec m = spec::load_model("qwen3-30b-a3b");
  const spec::HardwareSpec hw = spec::load_hardware("dgx-h100");
  spec::Stack nemo = spec::load_stack("nemo");
  ASSERT_TRUE(nemo.communication.dispatch_once_per_instance);
  spec::Workload w;
  w.seq_len = 4096;
  w.global_batch_seqs = 1024;
  w.precision = spec::Precision::fp8;
  spec::Plan p;
  p.instances = 2;
  p.ep = 16;
  p.etp = 1;
  p.recompute = spec::Recompute::none;
  const spec::Calibration c;
  const double once = evaluate(m, hw, nemo, c, w, p).estimate.time.ep_comm_exposed_s;
  nemo.communication.dispatch_once_per_instance = false;
  const double plain = evaluate(m, hw, nemo, c, w, p).estimate.time.ep_comm_exposed_s;
  EXPECT_GT(once, 0);
  EXPECT_LT(once, 0.6 * plain);
}

// Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm) pairs a
// forward with another micro-batch's backward. Without a pipeline all but the
// first forward and last backward of m micro-batches pair: (m - 1) / m. Under
// an interleaved one the first stage warms up with 2 (pp - 1) + (vp - 1) pp + 1
// chunk forwards (schedules.py@d98e8a64:955-975) of m x vp: PP 8, VP 4, 512
// micro-batches: 1 - 39 / 2048. The client refuses the overlap at EP 1, under
// full recompute and at PP > 1 without virtual stages: nothing pairs there.
TEST(ExpertParallel, EpOverlapPairsTheCombinedScheduleSteadyState) {
  spec::Plan p = plan_of(2, 1, 1, 1, 16);
  p.grad_accum = 64;
  EXPECT_DOUBLE_EQ(ep_overlap_paired_share(p), 63.0 / 64);
  p = plan_of(32, 2, 8, 1, 32, true);
  p.virtual_stages = 4;
  p.grad_accum = 512;
  EXPECT_DOUBLE_EQ(ep_overlap_paired_share(p), 1 - 39.0 / 2048);
  p.grad_accum = 8;  // 32 chunk passes, 39 to warm up: none pairs
  EXPECT_DOUBLE_EQ(ep_overlap_paired_share(p), 0.0);
  p.grad_accum = 512;
  p.virtual_stages = 1;
  EXPECT_DOUBLE_EQ(ep_overlap_paired_share(p), 0.0);
  p = plan_of(2, 1, 1, 1, 16);
  p.grad_accum = 64;
  p.recompute = spec::Recompute::full;
  EXPECT_DOUBLE_EQ(ep_overlap_paired_share(p), 0.0);
  p = plan_of(2, 1, 1, 1, 1);
  p.grad_accum = 64;
  EXPECT_DOUBLE_EQ(ep_overlap_paired_share(p), 0.0);
}

// The stack's share of each paired pass's all-to-all time hides, at most the
// other micro-batch's layer compute: a forward's beside a backward's compute,
// a backward's beside a forward's. Qwen3 30B-A3B, EP 16 over two DGX H100,
// 64 micro-batches per replica, share 0.3655 (stacks/nemo-alltoall-ep-overlap.json).
TEST(ExpertParallel, EpOverlapHidesAShareOfThePairedAllToAll) {
  spec::Plan p = plan_of(2, 1, 1, 1, 16);
  p.etp = 1;
  p.recompute = spec::Recompute::none;
  testing::StepFixture f("qwen3-30b-a3b", "dgx-h100", 4096, 1024, spec::Precision::fp8, p);
  f.stack = spec::load_stack("nemo-alltoall-ep-overlap");
  ASSERT_DOUBLE_EQ(f.stack.communication.ep_a2a_hidden_share, 0.3655);
  const StepContext ctx = f.context();
  ASSERT_EQ(ctx.plan.grad_accum, 64);
  const LayerCompute layer = layer_compute(ctx);
  const ExpertParallelTime overlapped = expert_parallel(ctx, layer);
  f.stack.communication.ep_a2a_hidden_share = 0;
  const ExpertParallelTime exposed = expert_parallel(f.context(), layer);
  ASSERT_GT(exposed.forward_s, 0);
  const double share = 0.3655 * 63.0 / 64;
  EXPECT_NEAR(overlapped.forward_s, exposed.forward_s - share * std::min(exposed.forward_s, layer.backward_s()), 1e-15);
  EXPECT_NEAR(overlapped.backward_s, exposed.backward_s - share * std::min(exposed.backward_s, layer.forward_s()), 1e-15);
  EXPECT_LT(overlapped.forward_s, exposed.forward_s);
  // Full recompute: Megatron-Core refuses the overlap, so the recipe runs without it.
  f.plan.recompute = spec::Recompute::full;
  const StepContext full = f.context();
  const ExpertParallelTime full_exposed = expert_parallel(full, layer);
  f.stack.communication.ep_a2a_hidden_share = 0.3655;
  const ExpertParallelTime full_overlapped = expert_parallel(f.context(), layer);
  EXPECT_DOUBLE_EQ(full_overlapped.forward_s, full_exposed.forward_s);
  EXPECT_DOUBLE_EQ(full_overlapped.recompute_s, full_exposed.recompute_s);
}

TEST(ExpertParallel, ExpertsShardedByEpInMemory) {
  const spec::ModelSpec m = spec::load_model("mixtral-8x7b");
  spec::Plan p = plan_of(8, 1, 1, 1, 8);
  p.etp = 1;
  // 32 x 8 experts x 176,160,768 / EP 8 = 5,637,144,576 routed parameters per GPU.
  EXPECT_DOUBLE_EQ(expert_parameters_per_device(m, p), 32.0 * 176160768);
  p.ep = 1;
  EXPECT_DOUBLE_EQ(expert_parameters_per_device(m, p), 32.0 * 8 * 176160768);
  // Expert DP: TP 1 x CP 1 x DP 64 / (ETP 1 x EP 8) = 8.
  p.ep = 8;
  p.dp = 64;
  EXPECT_EQ(spec::expert_dp(p), 8);
}

// NxD's ExpertMLPs compute each expert's capacity, filled or not
// (aws-neuron/neuronx-distributed@083d3ea modules/moe/expert_mlps.py:67-68,
// :139-167): dropless Mixtral 8x7B (8 experts, top-2) runs every token through
// every expert, 8 / 2 = 4 times the routed rows, and a capacity factor of 2 runs
// 2 times them, where a routing stack computes the routed tokens alone.
TEST(ExpertParallel, CapacityStacksComputeEveryExpertSlot) {
  testing::StepFixture f("mixtral-8x7b", "trn1.32xlarge", 4096, 1024, spec::Precision::bf16_sr, plan_of(16, 8, 4, 1, 1, true));
  f.stack = spec::load_stack("neuronx-distributed-2.20");
  ASSERT_TRUE(f.stack.compute.experts_compute_capacity);
  ASSERT_EQ(f.model.capacity_factor, 0);  // dropless as shipped
  const double capacity_rows = routed_rows(f.context());
  f.stack.compute.experts_compute_capacity = false;
  const double routed = routed_rows(f.context());
  EXPECT_DOUBLE_EQ(routed, 4096.0 / 8 * 2 * 8);  // SP tokens x top-2 x expert TP 8, load 1
  EXPECT_DOUBLE_EQ(capacity_rows, 4 * routed);
  f.model.capacity_factor = 2;
  f.stack.compute.experts_compute_capacity = true;
  EXPECT_DOUBLE_EQ(routed_rows(f.context()), 2 * routed);
  f.model.capacity_factor = 6;  // past experts / top_k: full capacity
  EXPECT_DOUBLE_EQ(routed_rows(f.context()), 4 * routed);
}

// NxD wraps its MoE layer beside CoreAttention for selective recompute
// (neuronx-distributed@4f95471 run_mixtral_pretrain_ptl.py:182; NxD Training@ff83d7bd
// megatron_base_model.py:56-59): the layer keeps only its input and its expert
// GEMMs run forward again in backward, where Megatron re-runs attention alone.
TEST(ExpertParallel, NxdSelectiveRecomputeWrapsTheMoeLayer) {
  testing::StepFixture f("mixtral-8x7b", "trn1.32xlarge", 4096, 1024, spec::Precision::bf16_sr, plan_of(16, 8, 4, 1, 1, true));
  f.stack = spec::load_stack("neuronx-distributed-2.20");
  f.plan.recompute = spec::Recompute::selective;
  ASSERT_TRUE(spec::selective_wraps_mlp(f.stack, f.model));
  const LayerCompute nxd = layer_compute(f.context());
  double mlp_forward_s = 0, mlp_backward_s = 0;
  mlp_compute(f.context(), mlp_forward_s, mlp_backward_s);
  EXPECT_GT(nxd.recompute_s, mlp_forward_s);  // the experts' GEMMs and the cheap ops around them
  EXPECT_LT(nxd.recompute_s, nxd.forward_s());  // not the attention (flash: the module is bypassed)
  const double kept = cost::layer_activation_bytes(f.model, f.stack, f.workload, f.plan);
  spec::Plan none = f.plan;
  none.recompute = spec::Recompute::none;
  f.stack.compute.experts_compute_capacity = false;  // the routed copies, as a hand count
  // Mixtral, t 8, SP: the MLP's elements per token inside the TP region are 2
  // routed copies x (8 x 4096 permuted input + 3 x 14336 SwiGLU) / 8 = 18,944.
  const double routed_kept = cost::layer_activation_bytes(f.model, f.stack, f.workload, f.plan);
  const double routed_all = cost::layer_activation_bytes(f.model, f.stack, f.workload, none);
  EXPECT_DOUBLE_EQ(routed_all - routed_kept, 4096.0 * 18944 * 2);
  EXPECT_LT(kept, routed_all);
}

TEST(ExpertParallel, ModelFlopsCountActiveParameters) {
  const spec::ModelSpec m = spec::load_model("mixtral-8x7b");
  // Per token and layer, forward MLP: router 2 x 4096 x 8 + 2 experts x
  // 2 x 3 x 4096 x 14336 = 65,536 + 704,643,072.
  const LayerFlops l = layer_forward_flops(m, 1.0, 4096);
  EXPECT_DOUBLE_EQ(l.mlp, 2.0 * 4096 * 8 + 2 * 2.0 * 3 * 4096 * 14336);
}

TEST(ExpertParallel, EpMustDivideTheExperts) {
  const spec::ModelSpec mixtral = spec::load_model("mixtral-8x7b");
  const spec::HardwareSpec hw = spec::load_hardware("p5.48xlarge");
  const spec::Workload w{4096, 64, 0, spec::Precision::mixed_bf16};
  spec::Plan p = plan_of(8, 1, 1, 1, 3);
  EXPECT_EQ(complete_plan(mixtral, hw, w, p), PlanProblem::ep_not_dividing_experts);
  EXPECT_NE(explain(PlanProblem::ep_not_dividing_experts, mixtral, hw, w, p).find("does not divide"), std::string::npos);
  p = plan_of(8, 1, 1, 1, 2);
  EXPECT_EQ(complete_plan(spec::load_model("llama3-8b"), hw, w, p), PlanProblem::ep_not_dividing_experts);
  // MoE with TP and no SP: Megatron-Core refuses it.
  p = plan_of(8, 2, 1, 1, 2);
  EXPECT_EQ(complete_plan(mixtral, hw, w, p), PlanProblem::moe_tp_needs_sp);
  // Expert TP 8 x EP 8 = 64 does not divide TP 1 x DP 8 on one instance.
  p = plan_of(1, 1, 1, 1, 8);
  p.etp = 8;
  EXPECT_EQ(complete_plan(mixtral, hw, w, p), PlanProblem::expert_grid_not_dividing);
}

TEST(ContextParallel, RingChunkBytes) {
  // Llama 3.1 405B, TP 8, CP 4, seq 131072: a rank holds 32768 tokens; its K
  // and V chunk: 32768 x 1 kv head (8 over TP 8) x (128 + 128) x 2 bytes = 16,777,216.
  testing::StepFixture f("llama3.1-405b", "trn2.48xlarge", 131072, 128, spec::Precision::mixed_bf16,
                         plan_of(64, 8, 2, 4, 1, true));
  const StepContext ctx = f.context();
  EXPECT_DOUBLE_EQ(kv_chunk_bytes(ctx), 32768.0 * 1 * 256 * 2);
  // The exposed ring is CP-1 = 3 steps of what a send takes beyond 1/CP of attention.
  const LayerCompute layer = layer_compute(ctx);
  const ContextParallelTime t = context_parallel(ctx, layer);
  const double send = f.cluster.seconds(net::Collective::point_to_point, kv_chunk_bytes(ctx), {4, 8}, 64,
                                        f.calibration.collective);
  EXPECT_DOUBLE_EQ(t.forward_s, 3 * std::max(0.0, send - layer.attention_forward_s / 4));
}

TEST(ContextParallel, SplitsAttentionAndActivations) {
  // CP 2 halves a rank's attention FLOPs (load-balanced causal chunks) and its activations.
  testing::StepFixture one("llama3-8b", "p5.48xlarge", 16384, 64, spec::Precision::mixed_bf16, plan_of(2, 1, 1, 1, 1));
  testing::StepFixture two("llama3-8b", "p5.48xlarge", 16384, 64, spec::Precision::mixed_bf16, plan_of(2, 1, 1, 2, 1));
  const StepContext a = one.context(), b = two.context();
  EXPECT_EQ(b.plan.dp, 8);  // 16 GPUs / CP 2
  EXPECT_DOUBLE_EQ(b.tokens(), 8192);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(two.model, two.stack, two.workload, b.plan) * 2,
                   layer_activation_bytes(one.model, one.stack, one.workload, a.plan));
  EXPECT_LT(layer_compute(b).attention_forward_s, 0.6 * layer_compute(a).attention_forward_s);
  // The sequence must split into 2 x CP chunks.
  spec::Plan p = plan_of(2, 1, 1, 4, 1);  // 16388 is not a multiple of 2 x 4
  EXPECT_EQ(complete_plan(one.model, one.hardware, spec::Workload{16388, 64, 0, spec::Precision::mixed_bf16}, p),
            PlanProblem::cp_not_dividing_seq);
}

TEST(ContextParallel, EvaluateReportsTheExposedExchange) {
  const spec::ModelSpec m = spec::load_model("llama3-8b");
  const spec::HardwareSpec hw = spec::load_hardware("p5.48xlarge");
  const spec::Stack stack = spec::load_stack("megatron-lm");
  const spec::Calibration cal;
  const spec::Workload w{65536, 16, 0, spec::Precision::mixed_bf16};
  spec::Plan p = plan_of(2, 2, 1, 8, 1, true);
  p.recompute = spec::Recompute::selective;
  const Evaluation ev = evaluate(m, hw, stack, cal, w, p);
  ASSERT_TRUE(ev.ok()) << to_string(ev.problem);
  EXPECT_GE(ev.estimate.time.cp_comm_exposed_s, 0);
  EXPECT_EQ(ev.estimate.time.ep_comm_exposed_s, 0);
  const auto& t = ev.estimate.time;
  EXPECT_NEAR(t.step_s,
              t.forward_compute_s + t.backward_compute_s + t.tp_comm_exposed_s + t.cp_comm_exposed_s +
                  t.ep_comm_exposed_s + t.pipeline_bubble_s + t.pp_comm_exposed_s + t.dp_comm_exposed_s +
                  t.grad_accumulation_s + t.optimizer_s + t.overhead_s,
              1e-12);
}

}  // namespace trainplan::cost
