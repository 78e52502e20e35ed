// Tensor-parallel collectives per layer: two pairs (attention, MLP), all-reduce
// without SP, all-gather + reduce-scatter with it; under FP8 a Transformer
// Engine stack gathers FP8 tensors (one byte per element) forward and backward.
#include <gtest/gtest.h>

#include "cost/gemm_time.h"
#include "cost/layer_compute.h"
#include "cost/tensor_parallel.h"
#include "step_fixture.h"

namespace trainplan::cost {
namespace {

spec::Plan tp8_sp() {
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  p.sp = true;
  return p;
}

// Llama 2 7B on one p5.48xlarge, TP 8 with SP, seq 4096, micro-batch 1: each
// collective moves 4096 x 4096 elements; forward and backward are each two
// all-gathers and two reduce-scatters, at 1 and 2 bytes per element under FP8
// with TE, at 2 under BF16. Forward TE gathers the quantized norm output
// (NVIDIA/TransformerEngine@v2.5 module/layernorm_linear.py:189-254); backward
// the row-parallel layer quantizes its output gradient before gathering it
// (@v1.8 module/base.py:674-689 cast_to_fp8 then gather_along_first_dim;
// @v2.5 base.py:1076-1105), and the reduce-scatters carry BF16 GEMM outputs.
TEST(TensorParallel, Fp8SequenceParallelGathersOneByte) {
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::fp8, tp8_sp());
  f.stack = spec::load_stack("megatron-lm");
  ASSERT_TRUE(f.stack.memory.fp8_saves_gemm_inputs_in_fp8);
  // Every backward collective blocking, as the backward's bytes are the point
  // here (the overlap the stack has is tested below).
  f.stack.communication.tp_backward_overlap = spec::TpBackwardOverlap::none;
  const StepContext ctx = f.context();
  const TensorParallelTime t = tensor_parallel(ctx, layer_compute(ctx));
  const net::GroupLayout group{8, 1};
  const double elements = 4096.0 * 4096;
  auto s = [&](net::Collective c, double bytes) { return f.cluster.seconds(c, bytes, group, 1, f.calibration.collective); };
  const double gather_fp8 = s(net::Collective::all_gather, elements), gather = s(net::Collective::all_gather, 2 * elements);
  const double scatter = s(net::Collective::reduce_scatter, 2 * elements);
  EXPECT_DOUBLE_EQ(t.forward_s, 2 * (gather_fp8 + scatter));
  EXPECT_DOUBLE_EQ(t.backward_s, 2 * (gather_fp8 + scatter));
  EXPECT_LT(gather_fp8, gather);

  testing::StepFixture bf16("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::mixed_bf16, tp8_sp());
  bf16.stack = f.stack;
  const StepContext bctx = bf16.context();
  const TensorParallelTime b = tensor_parallel(bctx, layer_compute(bctx));
  EXPECT_DOUBLE_EQ(b.forward_s, b.backward_s);
  EXPECT_DOUBLE_EQ(b.forward_s, 2 * (gather + scatter));

  // With the stack's backward overlap (Megatron-Core's column-parallel layers),
  // the column layer's re-gather of its saved FP8 input for the weight gradient
  // (@v1.8 layernorm_linear.py:444, @v2.5 :648) is FP8 as well: it costs at
  // most the one-byte gather, never the two-byte one.
  f.stack.communication.tp_backward_overlap = spec::TpBackwardOverlap::always;
  const StepContext octx = f.context();
  const TensorParallelTime o = tensor_parallel(octx, layer_compute(octx));
  EXPECT_GE(o.backward_s, 2 * gather_fp8);  // the row-parallel layers' gathers block
  EXPECT_LE(o.backward_s, 2 * gather_fp8 + 2 * (gather_fp8 + scatter) + 1e-15);
  testing::StepFixture bf16_inputs = f;  // a stack that keeps BF16 GEMM inputs gathers them in BF16
  bf16_inputs.stack.memory.fp8_saves_gemm_inputs_in_fp8 = false;
  const StepContext ictx = bf16_inputs.context();
  EXPECT_GE(tensor_parallel(ictx, layer_compute(ictx)).backward_s, 2 * gather);
}

// Neuron NeMo before 2.18 runs a SwiGLU MLP's gate and up projections as two
// ColumnParallelLinear layers (aws-neuron/neuronx-nemo-megatron@89680bbb
// transformer.py:152-172), each gathering its SP input forward (apex layers.py:323-325)
// and again backward (:345-346) and reduce-scattering its input gradient (:360-366):
// Llama 2 7B on one trn1 at TP 8 with SP, 4096 x 4096 elements of 2 bytes per collective.
TEST(TensorParallel, SeparateGateUpLayersGatherTheMlpInputTwice) {
  testing::StepFixture fused("llama2-7b", "trn1.32xlarge", 4096, 4, spec::Precision::bf16_sr, tp8_sp());
  fused.stack = spec::load_stack("neuronx-nemo-megatron");
  ASSERT_TRUE(fused.stack.communication.gate_up_separate_linears);
  testing::StepFixture separate = fused;
  fused.stack.communication.gate_up_separate_linears = false;
  const StepContext fctx = fused.context(), sctx = separate.context();
  const TensorParallelTime f = tensor_parallel(fctx, layer_compute(fctx));
  const TensorParallelTime s = tensor_parallel(sctx, layer_compute(sctx));
  const net::GroupLayout group{8, 1};
  auto at = [&](net::Collective c) { return fused.cluster.seconds(c, 2 * 4096.0 * 4096, group, 1, fused.calibration.collective); };
  const double gather = at(net::Collective::all_gather), scatter = at(net::Collective::reduce_scatter);
  EXPECT_DOUBLE_EQ(f.forward_s, 2 * (gather + scatter));
  EXPECT_DOUBLE_EQ(s.forward_s, 3 * gather + 2 * scatter);
  EXPECT_DOUBLE_EQ(s.backward_s, 3 * gather + 3 * scatter);

  // A GELU MLP has one up projection: the field changes nothing.
  testing::StepFixture gelu("gpt3-5b", "trn1.32xlarge", 2048, 4, spec::Precision::bf16_sr, tp8_sp());
  gelu.stack = separate.stack;
  const StepContext gctx = gelu.context();
  const TensorParallelTime g = tensor_parallel(gctx, layer_compute(gctx));
  auto gat = [&](net::Collective c) { return gelu.cluster.seconds(c, 2 * 2048.0 * 4096, group, 1, gelu.calibration.collective); };
  EXPECT_DOUBLE_EQ(g.forward_s, 2 * (gat(net::Collective::all_gather) + gat(net::Collective::reduce_scatter)));
}

// Full recompute repeats the forward's collectives: with SP two all-gathers
// and two reduce-scatters, without it two all-reduces. A stack whose checkpoint
// stops at the last saved tensor (torch non-reentrant) leaves out the MLP's
// closing one: the reduce-scatter under SP, the second all-reduce without.
TEST(TensorParallel, FullRecomputeRepeatsTheForwardCollectivesUpToTheLastSavedTensor) {
  const net::GroupLayout group{8, 1};
  const double bytes = 4096.0 * 4096 * 2;
  for (bool sp : {true, false}) {
    spec::Plan p = tp8_sp();
    p.sp = sp;
    p.recompute = spec::Recompute::full;
    testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::mixed_bf16, p);
    auto s = [&](net::Collective c) { return f.cluster.seconds(c, bytes, group, 1, f.calibration.collective); };
    const double gather = s(net::Collective::all_gather), scatter = s(net::Collective::reduce_scatter);
    const double reduce = s(net::Collective::all_reduce);
    const StepContext ctx = f.context();
    const TensorParallelTime whole = tensor_parallel(ctx, layer_compute(ctx));
    EXPECT_DOUBLE_EQ(whole.recompute_s, sp ? 2 * (gather + scatter) : 2 * reduce);
    f.stack.capabilities.full = spec::FullRecompute::until_last_saved;
    const StepContext ectx = f.context();
    const TensorParallelTime early = tensor_parallel(ectx, layer_compute(ectx));
    EXPECT_NEAR(early.recompute_s, sp ? 2 * gather + scatter : reduce, 1e-15);
    EXPECT_DOUBLE_EQ(early.forward_s, whole.forward_s);
  }
}

// Megatron's column-parallel backward (NVIDIA/Megatron-LM@d98e8a64
// megatron/core/tensor_parallel/layers.py:666-711) launches its collectives
// beside its own GEMMs: without SP the input gradient's all-reduce beside the
// weight gradient; under SP the saved input's re-gather beside the input
// gradient and the reduce-scatter beside the weight gradient, while the
// row-parallel layer's gather blocks. GPT-3 175B at TP 8 on one DGX A100,
// seq 2048, micro-batch 1: 2048 x 12288 elements of 2 bytes per collective.
// The layer's GEMM times are set by hand so each collective is hidden in part.
TEST(TensorParallel, BackwardOverlapHidesColumnCollectivesBehindTheirOwnGemms) {
  const net::GroupLayout group{8, 1};
  const double bytes = 2048.0 * 12288 * 2;
  for (bool sp : {false, true}) {
    spec::Plan p = tp8_sp();
    p.sp = sp;
    testing::StepFixture f("gpt3-175b", "dgx-a100-80gb", 2048, 8, spec::Precision::mixed_bf16, p);
    f.stack = spec::load_stack("megatron-lm");
    ASSERT_EQ(f.stack.communication.tp_backward_overlap, spec::TpBackwardOverlap::always);
    auto s = [&](net::Collective c) { return f.cluster.seconds(c, bytes, group, 1, f.calibration.collective); };
    const double gather = s(net::Collective::all_gather), scatter = s(net::Collective::reduce_scatter);
    const double reduce = s(net::Collective::all_reduce);
    const StepContext ctx = f.context();
    LayerCompute layer;
    // QKV hides a quarter of each of its collectives; the MLP's up projection
    // hides all of its gather and its reduction, with time to spare.
    layer.qkv = {0, 0.75 * gather, 0.75 * (sp ? scatter : reduce)};
    layer.mlp_up = {0, 2 * gather, 3 * (sp ? scatter : reduce)};
    const TensorParallelTime t = tensor_parallel(ctx, layer);
    EXPECT_NEAR(t.backward_s, sp ? 2 * gather + 0.25 * gather + 0.25 * scatter : 0.25 * reduce, 1e-15);
    EXPECT_DOUBLE_EQ(t.forward_s, sp ? 2 * (gather + scatter) : 2 * reduce);  // forward blocks
    // No overlap (the SC21 code): every backward collective blocks, as priced before.
    f.stack.communication.tp_backward_overlap = spec::TpBackwardOverlap::none;
    const StepContext nctx = f.context();
    EXPECT_DOUBLE_EQ(tensor_parallel(nctx, layer).backward_s, sp ? 2 * (gather + scatter) : 2 * reduce);
    // Under DeepSpeed the Microsoft fork turns the all-reduce path off and
    // keeps the SP one (microsoft/Megatron-DeepSpeed@f4157bea arguments.py:395-399).
    f.stack.communication.tp_backward_overlap = spec::TpBackwardOverlap::sequence_parallel;
    const StepContext sctx = f.context();
    EXPECT_DOUBLE_EQ(tensor_parallel(sctx, layer).backward_s, tensor_parallel(sp ? ctx : nctx, layer).backward_s);
  }
}

// With the layer's own GEMMs: GPT-3 175B at TP 8 without SP, the setting of the
// Megatron-LM A100 runs under full recompute. The QKV weight gradient
// (12288 x 4608 x 2048, 232 GFLOP) and the up projection's (4/3 of that)
// outlast a 50 MB all-reduce over NVLink, so the backward's all-reduces are
// hidden whole; full recompute's re-run is a forward and keeps its all-reduces.
TEST(TensorParallel, BackwardOverlapLeavesRecomputeAndForwardAlone) {
  spec::Plan p = tp8_sp();
  p.sp = false;
  p.recompute = spec::Recompute::full;
  testing::StepFixture f("gpt3-175b", "dgx-a100-80gb", 2048, 8, spec::Precision::mixed_bf16, p);
  f.stack = spec::load_stack("megatron-lm");
  const StepContext ctx = f.context();
  const LayerCompute layer = layer_compute(ctx);
  double forward_s = 0, backward_s = 0;
  const double qkv_wgrad =
      add_gemm(ctx, ctx.linear_peak_flops_per_s(), 2048, 3 * 12288 / 8, 12288, forward_s, backward_s).wgrad_s;
  EXPECT_DOUBLE_EQ(layer.qkv.wgrad_s, qkv_wgrad);
  EXPECT_NEAR(layer.mlp_up.wgrad_s, 4.0 / 3 * qkv_wgrad, 0.2 * qkv_wgrad);  // 4h wide against 3h
  const double reduce = f.cluster.seconds(net::Collective::all_reduce, 2048.0 * 12288 * 2, net::GroupLayout{8, 1}, 1,
                                          f.calibration.collective);
  ASSERT_GT(qkv_wgrad, reduce);
  const TensorParallelTime t = tensor_parallel(ctx, layer);
  EXPECT_DOUBLE_EQ(t.backward_s, 0);
  EXPECT_DOUBLE_EQ(t.forward_s, 2 * reduce);
  EXPECT_DOUBLE_EQ(t.recompute_s, 2 * reduce);
}

}  // namespace
}  // namespace trainplan::cost
