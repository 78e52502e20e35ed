#include <gtest/gtest.h>

#include "cost/evaluate.h"
#include "cost/memory.h"
#include "cost/plan_check.h"
#include "spec/error.h"
#include "spec/load.h"
#include "step_fixture.h"

using namespace trainplan;

namespace {

struct Case {
  const char* model;
  const char* hardware;
  int instances, tp, pp, zero, micro_batch, seq_len;
  long global_batch;
  spec::Precision precision;
  bool sp;
  spec::Recompute recompute;
};

// Every configuration of shared/reference/seed-measurements.md, as published
// (BERT-Large's batch per accelerator is not published: 64 assumed here).
const Case seed_cases[] = {
    {"bert-large", "dl1.24xlarge", 1, 1, 1, 0, 64, 128, 8 * 64, spec::Precision::mixed_bf16, false, spec::Recompute::none},
    {"bert-large", "dl1.24xlarge", 8, 1, 1, 0, 64, 128, 64 * 64, spec::Precision::mixed_bf16, false, spec::Recompute::none},
    {"bert-1.5b", "dl1.24xlarge", 1, 1, 1, 1, 16, 128, 8 * 384, spec::Precision::mixed_bf16, false, spec::Recompute::none},
    {"bert-1.5b", "dl1.24xlarge", 16, 1, 1, 1, 16, 128, 128 * 384, spec::Precision::mixed_bf16, false, spec::Recompute::none},
    {"pythia-6.9b", "trn1.32xlarge", 1, 8, 1, 1, 1, 2048, 256, spec::Precision::bf16_sr, true, spec::Recompute::selective},
    {"pythia-6.9b", "trn1.32xlarge", 4, 8, 1, 1, 1, 2048, 256, spec::Precision::bf16_sr, true, spec::Recompute::selective},
    {"gpt-neox-20b", "trn1.32xlarge", 4, 8, 4, 1, 1, 2048, 16384, spec::Precision::bf16_sr, true, spec::Recompute::selective},
    {"gpt-neox-20b", "trn1.32xlarge", 64, 8, 4, 1, 1, 2048, 16384, spec::Precision::bf16_sr, true, spec::Recompute::selective},
    {"llama2-7b", "trn1.32xlarge", 128, 8, 1, 1, 1, 4096, 1024, spec::Precision::bf16_sr, true, spec::Recompute::selective},
};

struct Loaded {
  spec::ModelSpec model;
  spec::HardwareSpec hw;
  spec::Stack stack;  // generic: separate accumulation pass, flash attention, FP32 states
  spec::Calibration calibration;
  spec::Workload workload;
  spec::Plan plan;
};

Loaded load(const Case& c) {
  Loaded l{spec::load_model(c.model), spec::load_hardware(c.hardware), {}, {}, {}};
  l.workload = {c.seq_len, c.global_batch, 1e9, c.precision};
  l.plan.instances = c.instances;
  l.plan.tp = c.tp;
  l.plan.pp = c.pp;
  l.plan.zero = c.zero;
  l.plan.micro_batch = c.micro_batch;
  l.plan.sp = c.sp;
  l.plan.recompute = c.recompute;
  return l;
}

}  // namespace

TEST(Evaluate, EverySeedConfigurationRunsAndFits) {
  for (const Case& c : seed_cases) {
    Loaded l = load(c);
    const auto ev = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
    EXPECT_TRUE(ev.ok()) << c.model << " x" << c.instances << ": " << cost::to_string(ev.problem);
    EXPECT_GT(ev.estimate.seqs_per_s, 0);
    EXPECT_GT(ev.estimate.mfu, 0.01);
    EXPECT_LT(ev.estimate.mfu, 1.0);
  }
}

TEST(Evaluate, BreakdownAddsUpToStepAndRatesFollow) {
  for (const Case& c : seed_cases) {
    Loaded l = load(c);
    const auto ev = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
    const auto& t = ev.estimate.time;
    const double parts = t.forward_compute_s + t.backward_compute_s + t.tp_comm_exposed_s + t.pipeline_bubble_s +
                         t.pp_comm_exposed_s + t.dp_comm_exposed_s + t.grad_accumulation_s + t.optimizer_s + t.overhead_s;
    EXPECT_NEAR(parts / t.step_s, 1.0, 1e-9) << c.model;
    EXPECT_LE(t.dp_comm_exposed_s, t.dp_comm_total_s + 1e-12);
    EXPECT_NEAR(ev.estimate.seqs_per_s * t.step_s, double(c.global_batch), 1e-6);
    const double peak = l.hw.peak_bf16_flops_per_s * ev.estimate.devices;
    EXPECT_NEAR(ev.estimate.mfu, ev.estimate.model_flops_per_step / t.step_s / peak, 1e-12);
    EXPECT_GE(ev.estimate.hfu, ev.estimate.mfu);
  }
}

TEST(Evaluate, MoreInstancesMoreThroughputLessPerDevice) {
  Loaded l = load(seed_cases[6]);  // NeoX 20B, TP 8, PP 4
  double previous_seqs = 0, previous_per_device = 1e30;
  for (int n : {4, 8, 16, 32, 64}) {
    l.plan.instances = n;
    const auto ev = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
    ASSERT_TRUE(ev.ok()) << n;
    EXPECT_GT(ev.estimate.seqs_per_s, previous_seqs);
    EXPECT_LE(ev.estimate.tokens_per_s_per_device, previous_per_device * (1 + 1e-9));
    previous_seqs = ev.estimate.seqs_per_s;
    previous_per_device = ev.estimate.tokens_per_s_per_device;
  }
}

TEST(Evaluate, RecomputeTradesTimeForMemory) {
  Loaded l = load(seed_cases[8]);
  l.stack.compute.attention = spec::AttentionKernel::unfused;  // selective recompute frees the score matrix
  auto run = [&](spec::Recompute r) {
    l.plan.recompute = r;
    return cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan).estimate;
  };
  const auto none = run(spec::Recompute::none), selective = run(spec::Recompute::selective), full = run(spec::Recompute::full);
  EXPECT_LT(none.time.step_s, selective.time.step_s);
  EXPECT_LT(selective.time.step_s, full.time.step_s);
  EXPECT_GT(none.memory.activations_bytes, selective.memory.activations_bytes);
  EXPECT_GT(selective.memory.activations_bytes, full.memory.activations_bytes);
  EXPECT_DOUBLE_EQ(none.time.recompute_s, 0);
}

TEST(Evaluate, FasterCalibrationIsFaster) {
  Loaded l = load(seed_cases[4]);
  const auto base = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan).estimate;
  l.calibration.gemm.ceiling *= 1.2;
  l.calibration.collective.intra_node *= 1.2;
  const auto faster = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan).estimate;
  EXPECT_LT(faster.time.step_s, base.time.step_s);
}

TEST(Evaluate, OutOfMemoryIsReportedWithEstimate) {
  Loaded l = load(seed_cases[8]);
  l.model = spec::load_model("llama2-70b");
  l.plan.instances = 1;
  l.plan.zero = 0;
  const auto ev = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
  EXPECT_EQ(ev.problem, cost::PlanProblem::out_of_memory);
  EXPECT_LT(ev.estimate.memory.margin_bytes, 0);
}

TEST(Evaluate, DagAndClosedFormAgreeOnSeedPipelines) {
  Loaded l = load(seed_cases[7]);  // PP 4
  const auto closed = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan, cost::PipelineMethod::closed_form);
  const auto dag = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan, cost::PipelineMethod::dag);
  // pipeline_closed_form.cpp: within -4% / +7% of the DAG for 1F1B on this shape.
  EXPECT_NEAR(closed.estimate.time.step_s / dag.estimate.time.step_s, 1.0, 0.02);
}

// Accumulation streams the local gradient buffer three times (read the new BF16
// gradient, read and write the FP32 sum) for every micro-batch after the first.
// Hand figure for BERT-1.5B on one dl1 (mixed-bf16), micro-batch 16, 24 micro-batches.
TEST(Evaluate, GradientAccumulationStreamsTheBufferPerLaterMicroBatch) {
  Loaded l = load(seed_cases[2]);
  l.calibration.memory_by_op["residual"] = {0.5, 0};
  const auto ev = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev.estimate.micro_batches, 24);
  const double params = cost::parameters_per_device(l.model, ev.plan);
  const double expected_s = 23 * (2 + 2 * 4) * params / (l.hw.hbm_bytes_per_s * 0.5);
  EXPECT_NEAR(ev.estimate.time.grad_accumulation_s / expected_s, 1.0, 1e-12);
  // 1.53e9 parameters x 10 bytes x 23 at 0.5 x 900 GB/s is about 0.78 s.
  EXPECT_NEAR(ev.estimate.time.grad_accumulation_s, 0.78, 0.03);

  l.workload.global_batch_seqs = 8 * 16;  // one micro-batch: nothing to accumulate
  EXPECT_EQ(cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan).estimate.time.grad_accumulation_s, 0.0);
}

namespace {

// A schedule too large for the task graph is timed by the closed form instead
// of building millions of tasks: Llama 2 7B, PP 4, 2^20 micro-batches (2^23
// tasks, DP 1) gives the closed form's step time under either method.
TEST(Evaluate, HugeSchedulesFallBackToTheClosedForm) {
  const spec::ModelSpec m = spec::load_model("llama2-7b");
  const spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  const spec::Workload w{4096, 1L << 20, 0, spec::Precision::bf16_sr};
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  p.pp = 4;
  const spec::Stack stack;
  const spec::Calibration calibration;
  const cost::Evaluator evaluator(m, hw, stack, calibration, w);
  const auto dag = evaluator.evaluate(p, cost::PipelineMethod::dag);
  ASSERT_TRUE(dag.ok() || dag.problem == cost::PlanProblem::out_of_memory) << cost::to_string(dag.problem);
  ASSERT_EQ(dag.plan.grad_accum, 1 << 20);
  const auto closed = evaluator.evaluate(p, cost::PipelineMethod::closed_form);
  EXPECT_DOUBLE_EQ(dag.estimate.time.step_s, closed.estimate.time.step_s);
}

}  // namespace

namespace trainplan::cost {
namespace {

// An auto-cast FP32 model is a compiler's mode (neuronx-cc --auto-cast
// matmult): a stack whose file does not say its compiler does it refuses it.
TEST(Evaluate, Fp32WithBf16MatmulsNeedsAStackWhoseCompilerCasts) {
  const spec::ModelSpec model = spec::load_model("bert-large-hf");
  const spec::Workload cast{128, 512, 0, spec::Precision::fp32_bf16_matmul};
  const spec::HardwareSpec trn1 = spec::load_hardware("trn1.32xlarge");
  const spec::Calibration calibration;
  try {
    Evaluator(model, trn1, spec::load_stack("neuronx-distributed"), calibration, cast);
    FAIL() << "neuronx-distributed does not say its compiler casts FP32 matmuls";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("fp32-bf16-matmul (an FP32 model whose matmuls the compiler casts to BF16) is not offered by neuronx-distributed"),
              std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(Evaluator(model, trn1, spec::load_stack("torch-neuronx-hf"), calibration, cast));
}

// FP8 needs an FP8 matrix path in the hardware descriptor and a stack that
// offers it; otherwise the Evaluator refuses with the reason, never an inf.
TEST(Evaluate, Fp8IsRefusedWithoutAnFp8PathOrStack) {
  const spec::ModelSpec model = spec::load_model("llama2-7b");
  const spec::Workload fp8{4096, 64, 0, spec::Precision::fp8};
  const spec::Stack megatron = spec::load_stack("megatron-lm"), bigscience = spec::load_stack("megatron-deepspeed");
  const spec::HardwareSpec a100 = spec::load_hardware("p4d.24xlarge"), h100 = spec::load_hardware("p5.48xlarge");
  const spec::Calibration calibration;
  try {
    Evaluator(model, a100, megatron, calibration, fp8);
    FAIL() << "A100 has no FP8 path";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("p4d.24xlarge (NVIDIA A100-SXM4-40GB) has none"), std::string::npos) << e.what();
  }
  try {
    Evaluator(model, h100, bigscience, calibration, fp8);
    FAIL() << "bigscience Megatron-DeepSpeed offers no FP8";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("fp8 is not offered by megatron-deepspeed"), std::string::npos) << e.what();
  }
  // On p5 under Megatron-LM it runs, faster than mixed BF16 and with more weight memory.
  spec::Plan plan;
  plan.instances = 2;
  plan.tp = 8;
  plan.zero = 1;
  const spec::Workload mixed{4096, 64, 0, spec::Precision::mixed_bf16};
  const Evaluator on_p5(model, h100, megatron, calibration, fp8), bf16(model, h100, megatron, calibration, mixed);
  const Evaluation a = on_p5.evaluate(plan), b = bf16.evaluate(plan);
  ASSERT_TRUE(a.ok()) << to_string(a.problem);
  EXPECT_LT(a.estimate.time.step_s, b.estimate.time.step_s);
  EXPECT_GT(a.estimate.memory.weights_bytes, b.estimate.memory.weights_bytes);
}

}  // namespace
}  // namespace trainplan::cost

// BLOOM-176B as trained (tr11 README 'Architecture': 70 layers over PP 12 with
// the embedding and the head in a layer's slot each). Uneven stages without the
// slots time every rank as the last: 6 = ceil(70 / 12) layers plus the head.
// With them the last holds 5 layers and the head, which weighs less than a
// layer with its TP all-reduces and recompute, so a middle rank's 6 layers
// are the busiest: the same recompute, no head on the critical rank.
TEST(Evaluate, EdgeSlotsTakeALayerFromTheFirstAndLastStage) {
  const spec::ModelSpec m = spec::load_model("bloom-176b");
  const spec::HardwareSpec hw = spec::load_hardware("jean-zay-a100-80gb");
  const spec::Stack stack = spec::load_stack("megatron-deepspeed");
  const spec::Calibration calibration;
  const spec::Workload w{2048, 2048, 1e9, spec::Precision::mixed_bf16};
  const spec::Plan p = cost::testing::bloom_176b_plan();
  spec::Plan uneven = p, slots = p;
  uneven.uneven_stages = true;
  slots.edge_layer_slots = true;
  const cost::Evaluator evaluator(m, hw, stack, calibration, w);
  const auto a = evaluator.evaluate(uneven), b = evaluator.evaluate(slots);
  ASSERT_EQ(a.problem, cost::PlanProblem::none);
  ASSERT_EQ(b.problem, cost::PlanProblem::none);
  EXPECT_NEAR(b.estimate.time.recompute_s, a.estimate.time.recompute_s, a.estimate.time.recompute_s * 1e-12);
  EXPECT_LT(b.estimate.time.forward_compute_s, a.estimate.time.forward_compute_s);
  EXPECT_LT(b.estimate.time.step_s, a.estimate.time.step_s);
  // Without either, PP 12 does not divide 70 layers; with the slots, 72 it does.
  EXPECT_EQ(evaluator.evaluate(p).problem, cost::PlanProblem::pp_not_dividing_layers);
  slots.pp = 5;  // 72 slots over 5 stages
  EXPECT_EQ(evaluator.evaluate(slots).problem, cost::PlanProblem::pp_not_dividing_layers);
  slots.pp = 12;
  slots.virtual_stages = 5;  // 72 slots over 12 x 5 chunks do not divide
  EXPECT_EQ(evaluator.evaluate(slots).problem, cost::PlanProblem::pp_not_dividing_layers);
}

// Interleaved with edge slots, as NVIDIA runs Llama 3.1 405B on DGX H100 (TP 8,
// PP 8, CP 2, VP 8: NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md,
// 25.09-26.02 DGX-H100 rows; the recipe sets account_for_embedding_in_pipeline_split
// and account_for_loss_in_pipeline_split, src/megatron/bridge/recipes/llama/llama3.py
// @6f6f95e0 llama31_405b_pretrain_config). Megatron-Core (transformer_block.py@d98e8a64
// get_num_layers_to_build): (126 + 2) / 8 = 16 slots per rank, 2 per chunk; the
// first rank's first chunk and the last rank's last chunk build one layer.
TEST(Evaluate, EdgeSlotsInterleaveAsMegatronCoreSplitsThem) {
  const spec::ModelSpec m = spec::load_model("llama3.1-405b");
  const spec::HardwareSpec hw = spec::load_hardware("dgx-h100");
  const spec::Stack stack = spec::load_stack("nemo");
  const spec::Calibration calibration;
  const spec::Workload w{8192, 512, 1e9, spec::Precision::fp8};
  spec::Plan p;
  p.instances = 128;
  p.tp = 8, p.pp = 8, p.cp = 2, p.sp = true, p.zero = 1, p.micro_batch = 1;
  p.edge_layer_slots = true;
  const cost::Evaluator evaluator(m, hw, stack, calibration, w);
  spec::Plan one = p, eight = p;
  eight.virtual_stages = 8;
  const auto a = evaluator.evaluate(one), b = evaluator.evaluate(eight);
  ASSERT_EQ(a.problem, cost::PlanProblem::none);
  ASSERT_EQ(b.problem, cost::PlanProblem::none);
  EXPECT_DOUBLE_EQ(spec::layers_per_stage(m.layers, eight) / eight.virtual_stages, 2.0);
  EXPECT_DOUBLE_EQ(spec::stage_layers(m.layers, eight, 0), 15.0);
  EXPECT_DOUBLE_EQ(spec::stage_layers(m.layers, eight, 3), 16.0);
  EXPECT_DOUBLE_EQ(spec::stage_layers(m.layers, eight, 7), 15.0);
  // The same work on the busiest rank; eight chunks shrink the bubble (64 micro-batches:
  // (PP - 1) / (VP x m) of the steady state instead of (PP - 1) / m).
  EXPECT_NEAR(b.estimate.time.forward_compute_s, a.estimate.time.forward_compute_s,
              a.estimate.time.forward_compute_s * 1e-12);
  EXPECT_LT(b.estimate.time.pipeline_bubble_s, a.estimate.time.pipeline_bubble_s / 4);
  // Memory: the first rank keeps 2 (PP - 1) + (VP - 1) PP + 1 = 71 chunk-forwards in
  // flight (schedules.py get_num_warmup_microbatches), each 15 / 8 layers on average.
  ASSERT_EQ(cost::complete_plan(m, hw, w, eight), cost::PlanProblem::none);  // DP 8, 64 micro-batches
  ASSERT_EQ(cost::chunks_in_flight(eight, 0), 71);
  EXPECT_NEAR(cost::activations_bytes(m, stack, w, eight, 0),
              cost::layer_activation_bytes(m, stack, w, eight) * 15.0 / 8 * 71,
              cost::activations_bytes(m, stack, w, eight, 0) * 1e-12);
  // Without the slots 8 x 8 chunks do not divide 126 layers; 128 slots over 8 x 5 do not either.
  eight.edge_layer_slots = false;
  EXPECT_EQ(evaluator.evaluate(eight).problem, cost::PlanProblem::pp_not_dividing_layers);
  eight.edge_layer_slots = true;
  eight.virtual_stages = 5;
  EXPECT_EQ(evaluator.evaluate(eight).problem, cost::PlanProblem::pp_not_dividing_layers);
}

// The pipeline's per-micro-batch hand-off (Calibration::pipeline_microbatch_overhead_s)
// holds each chunk once in the forward and once in the backward of every
// micro-batch: on 1F1B with m micro-batches and p stages the busiest rank pays
// 2m of them and the fill and drain at most 2(p - 1) more, all counted as
// exposed pipeline communication. Without a pipeline it costs nothing.
TEST(Evaluate, PipelineHandOffIsPaidPerMicroBatchPerChunk) {
  Loaded l = load(seed_cases[6]);  // NeoX 20B, TP 8, PP 4, 4 instances: DP 4, 4096 micro-batches
  const auto base = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
  ASSERT_TRUE(base.ok());
  const double handoff_s = 0.01;
  l.calibration.pipeline_microbatch_overhead_s = handoff_s;
  // A stack whose sends are asynchronous pays no hand-off.
  const auto async = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
  EXPECT_DOUBLE_EQ(async.estimate.time.step_s, base.estimate.time.step_s);
  l.stack.communication.pipeline_graph_cut_per_micro_batch = true;
  const auto slower = cost::evaluate(l.model, l.hw, l.stack, l.calibration, l.workload, l.plan);
  ASSERT_TRUE(slower.ok());
  const double m = slower.estimate.micro_batches, p = l.plan.pp;
  const double added = slower.estimate.time.step_s - base.estimate.time.step_s;
  EXPECT_GE(added, 2 * m * handoff_s * (1 - 1e-9));
  EXPECT_LE(added, 2 * (m + p - 1) * handoff_s * (1 + 1e-9));
  EXPECT_NEAR(slower.estimate.time.pp_comm_exposed_s - base.estimate.time.pp_comm_exposed_s, added, 1e-6 * added);

  Loaded flat = load(seed_cases[5]);  // Pythia 6.9B, PP 1
  flat.stack.communication.pipeline_graph_cut_per_micro_batch = true;
  const auto before = cost::evaluate(flat.model, flat.hw, flat.stack, flat.calibration, flat.workload, flat.plan);
  flat.calibration.pipeline_microbatch_overhead_s = handoff_s;
  const auto after = cost::evaluate(flat.model, flat.hw, flat.stack, flat.calibration, flat.workload, flat.plan);
  EXPECT_DOUBLE_EQ(after.estimate.time.step_s, before.estimate.time.step_s);
}
