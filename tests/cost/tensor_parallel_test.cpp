// Tensor-parallel collectives per layer: two pairs (attention, MLP), all-reduce
// without SP, all-gather + reduce-scatter with it; under FP8 a Transformer
// Engine stack gathers the FP8 norm output forward (one byte per element).
#include <gtest/gtest.h>

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
// collective moves 4096 x 4096 elements; forward is two all-gathers and two
// reduce-scatters, at 1 and 2 bytes per element under FP8 with TE, at 2 under BF16.
TEST(TensorParallel, Fp8SequenceParallelGathersOneByteForward) {
  testing::StepFixture f("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::fp8, tp8_sp());
  f.stack = spec::load_stack("megatron-lm");
  ASSERT_TRUE(f.stack.memory.fp8_saves_gemm_inputs_in_fp8);
  const StepContext ctx = f.context();
  const TensorParallelTime t = tensor_parallel(ctx, layer_compute(ctx));
  const net::GroupLayout group{8, 1};
  const double elements = 4096.0 * 4096;
  auto s = [&](net::Collective c, double bytes) { return f.cluster.seconds(c, bytes, group, 1, f.calibration.collective); };
  const double gather_fp8 = s(net::Collective::all_gather, elements), gather = s(net::Collective::all_gather, 2 * elements);
  const double scatter = s(net::Collective::reduce_scatter, 2 * elements);
  EXPECT_DOUBLE_EQ(t.forward_s, 2 * (gather_fp8 + scatter));
  EXPECT_DOUBLE_EQ(t.backward_s, 2 * (gather + scatter));
  EXPECT_LT(t.forward_s, t.backward_s);

  testing::StepFixture bf16("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::mixed_bf16, tp8_sp());
  bf16.stack = f.stack;
  const StepContext bctx = bf16.context();
  const TensorParallelTime b = tensor_parallel(bctx, layer_compute(bctx));
  EXPECT_DOUBLE_EQ(b.forward_s, b.backward_s);
  EXPECT_DOUBLE_EQ(b.forward_s, 2 * (gather + scatter));
}

}  // namespace
}  // namespace trainplan::cost
