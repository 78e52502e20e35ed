#include "cost/layer_compute.h"

#include <gtest/gtest.h>

#include "step_fixture.h"

namespace trainplan::cost {
namespace {

testing::StepFixture llama(int seq, spec::AttentionKernel kernel) {
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  p.micro_batch = 1;
  testing::StepFixture f("llama2-7b", "p5.48xlarge", seq, 8, spec::Precision::mixed_bf16, p);
  f.stack.compute.attention = kernel;
  return f;
}

// A flash kernel skips the masked half of causal attention; backward re-forms
// the scores (five GEMMs against the forward's two: Dao et al. 2022, sec. 3.1).
TEST(LayerCompute, FlashAttentionIsCausalAndRecomputesInBackward) {
  auto f = llama(4096, spec::AttentionKernel::flash);
  const LayerCompute l = layer_compute(f.context());
  EXPECT_DOUBLE_EQ(l.attention_backward_s, 2.5 * l.attention_forward_s);
  // 4 heads per TP rank, 2 x 4 x 4096^2 x 128 x (4097 / 8192) FLOPs per GEMM at
  // 989 TFLOP/s x 0.8 (attention) x 0.7 x (4096/4112)^2 x (128/144) (shape).
  const double eff = 0.8 * 0.7 * (4096.0 / 4112) * (4096.0 / 4112) * (128.0 / 144);
  const double gemm = 2.0 * 4 * 4096.0 * 4096 * 128 * (4097.0 / 8192) / (989e12 * eff);
  EXPECT_NEAR(l.attention_forward_s, 2 * gemm, 2 * gemm * 1e-9);
  // A calibration that measured the backward apart (calibrate kernels) runs it at its own
  // efficiency: at half the forward's, twice the time; the forward is unchanged.
  f.calibration.attention_backward_factor = 0.5;
  const LayerCompute slow = layer_compute(f.context());
  EXPECT_DOUBLE_EQ(slow.attention_forward_s, l.attention_forward_s);
  EXPECT_NEAR(slow.attention_backward_s, 5.0 * l.attention_forward_s, l.attention_forward_s * 1e-12);
}

// A stack's attention speedup on the hardware's family divides the flash time
// (Transformer Engine's cuDNN attention on Hopper: 1.6x FA2 forward plus
// backward in the kernel figures of arXiv:2407.08608); another family's entry
// leaves it alone.
TEST(LayerCompute, StackAttentionSpeedupAppliesOnItsFamilyOnly) {
  auto base = llama(4096, spec::AttentionKernel::flash);
  auto hopper = llama(4096, spec::AttentionKernel::flash);
  hopper.stack.compute.attention_speedup_by_family = {{"h100", 1.6}};
  auto other = llama(4096, spec::AttentionKernel::flash);
  other.stack.compute.attention_speedup_by_family = {{"a100", 1.6}};
  const LayerCompute a = layer_compute(base.context());
  const LayerCompute h = layer_compute(hopper.context());
  EXPECT_NEAR(h.attention_forward_s, a.attention_forward_s / 1.6, a.attention_forward_s * 1e-12);
  EXPECT_NEAR(h.attention_backward_s, a.attention_backward_s / 1.6, a.attention_backward_s * 1e-12);
  EXPECT_DOUBLE_EQ(h.gemm_forward_s, a.gemm_forward_s);
  EXPECT_DOUBLE_EQ(layer_compute(other.context()).attention_forward_s, a.attention_forward_s);
}

// Full recompute re-runs the whole layer where the stack's checkpoint is a
// reentrant autograd.Function (Megatron, DeepSpeed); torch's non-reentrant
// checkpoint stops at the last saved tensor, the inputs of the MLP's closing
// GEMM, so that GEMM and the residual add after it are not re-run. Llama 2 7B,
// TP 8 without SP, 4096 tokens: the down projection is 4096 x 4096 x 1376
// (11008 / 8), 2 x 4096 x 4096 x 1376 FLOPs at 989 TFLOP/s x 0.7 x (4096/4112)^2
// x (1376/1392) (shape); the residual add moves 4096 x 4096 x (2 + 2 x 2) bytes
// at 3350 GB/s x 0.7.
TEST(LayerCompute, FullRecomputeStopsAtTheLastSavedTensorUnderNonReentrantCheckpoint) {
  auto whole = llama(4096, spec::AttentionKernel::flash);
  whole.plan.recompute = spec::Recompute::full;
  auto early = whole;
  early.stack.capabilities.full = spec::FullRecompute::until_last_saved;
  const LayerCompute w = layer_compute(whole.context());
  const LayerCompute e = layer_compute(early.context());
  EXPECT_DOUBLE_EQ(w.recompute_s, w.forward_s());
  EXPECT_DOUBLE_EQ(w.gemm_not_recomputed_s, 0);
  const double eff = 0.7 * (4096.0 / 4112) * (4096.0 / 4112) * (1376.0 / 1392);
  const double down_s = 2.0 * 4096 * 4096 * 1376 / (989e12 * eff);
  EXPECT_NEAR(e.gemm_not_recomputed_s, down_s, down_s * 1e-9);
  const double residual_s = 4096.0 * 4096 * 6 / (3350e9 * 0.7);
  EXPECT_NEAR(w.recompute_s - e.recompute_s, down_s + residual_s, (down_s + residual_s) * 1e-9);
  // Forward and backward are the same either way.
  EXPECT_DOUBLE_EQ(e.forward_s(), w.forward_s());
  EXPECT_DOUBLE_EQ(e.gemm_backward_s, w.gemm_backward_s);
}

// Unfused attention computes the whole score matrix (no causal saving) and
// writes it to HBM; at 4096 tokens and head dim 128 its bytes outweigh its FLOPs.
TEST(LayerCompute, UnfusedAttentionIsBoundByTheScoreBytes) {
  auto flash = llama(4096, spec::AttentionKernel::flash);
  auto unfused = llama(4096, spec::AttentionKernel::unfused);
  const LayerCompute a = layer_compute(flash.context());
  const LayerCompute b = layer_compute(unfused.context());
  // Forward: S written and P read, 2 x 4 heads x 4096^2 x 2 bytes at 3350 GB/s x 0.7.
  const double bytes_s = 2 * 4 * 4096.0 * 4096 * 2 / (3350e9 * 0.7);
  EXPECT_NEAR(b.attention_forward_s, bytes_s, bytes_s * 1e-9);
  EXPECT_GT(b.attention_forward_s, a.attention_forward_s);
  EXPECT_GT(b.memory_forward_s, a.memory_forward_s);  // the softmax streams through HBM too
}

// Packed documents with attention masked to each (torchtune's FlexAttention
// block mask): a query attends to half a document on average plus one 128-token
// tile. 4096 tokens in documents of 256: (128 + 128) / 4096 = 1/16 of the score
// matrix, against the causal 4097 / 8192; unfused attention computes all of it.
TEST(LayerCompute, DocumentMaskingShrinksFlashAttentionOnly) {
  spec::ModelSpec decoder;
  decoder.kind = spec::ModelKind::decoder;
  spec::Workload w;
  w.seq_len = 4096;
  EXPECT_DOUBLE_EQ(attention_score_fraction(decoder, w, spec::AttentionKernel::flash), 4097.0 / 8192);
  w.document_tokens = 256;
  EXPECT_DOUBLE_EQ(attention_score_fraction(decoder, w, spec::AttentionKernel::flash), 1.0 / 16);
  EXPECT_DOUBLE_EQ(attention_score_fraction(decoder, w, spec::AttentionKernel::unfused), 1.0);
  w.document_tokens = 4000;  // long documents: never above plain causal attention
  EXPECT_DOUBLE_EQ(attention_score_fraction(decoder, w, spec::AttentionKernel::flash), 4097.0 / 8192);

  auto whole = llama(4096, spec::AttentionKernel::flash);
  auto packed = llama(4096, spec::AttentionKernel::flash);
  packed.workload.document_tokens = 256;
  const LayerCompute a = layer_compute(whole.context());
  const LayerCompute b = layer_compute(packed.context());
  const double ratio = (1.0 / 16) / (4097.0 / 8192);
  EXPECT_NEAR(b.attention_forward_s, a.attention_forward_s * ratio, a.attention_forward_s * 1e-12);
  EXPECT_DOUBLE_EQ(b.gemm_forward_s, a.gemm_forward_s);
}

// A sliding window of W (Gemma 2: 4096 on every other layer) leaves a causal
// query (W(W + 1)/2 + (s - W)W)/s keys on average, plus the partly masked tile:
// at s = 8192, (8390656 + 16777216) / 8192 + 128 = 3200.25 of 8192; the other
// half of the layers stay causal (4097 / 8192). A window past the sequence
// changes nothing, and unfused attention computes the whole matrix regardless.
TEST(LayerCompute, SlidingWindowShrinksItsLayersScores) {
  spec::ModelSpec gemma2;
  gemma2.kind = spec::ModelKind::decoder;
  gemma2.sliding_window_tokens = 4096;
  gemma2.sliding_window_layer_share = 0.5;
  spec::Workload w;
  w.seq_len = 8192;
  EXPECT_DOUBLE_EQ(attention_score_fraction(gemma2, w, spec::AttentionKernel::flash),
                   0.5 * 8193.0 / 16384 + 0.5 * 3200.25 / 8192);
  EXPECT_DOUBLE_EQ(attention_score_fraction(gemma2, w, spec::AttentionKernel::unfused), 1.0);
  w.seq_len = 4096;
  EXPECT_DOUBLE_EQ(attention_score_fraction(gemma2, w, spec::AttentionKernel::flash), 4097.0 / 8192);
  // Documents shorter than the window: the window's layers skip no more than the document mask does.
  w.seq_len = 8192;
  w.document_tokens = 256;
  EXPECT_DOUBLE_EQ(attention_score_fraction(gemma2, w, spec::AttentionKernel::flash), 256.0 / 8192);
}

// Unfused attention's softmax over the scores streams at its own efficiency
// where the calibration has one (memory_by_op attention_softmax), else at the
// softmax's: halving it doubles the byte-bound forward of the test above.
TEST(LayerCompute, UnfusedSoftmaxUsesItsOwnEfficiency) {
  auto base = llama(4096, spec::AttentionKernel::unfused);
  auto slow = llama(4096, spec::AttentionKernel::unfused);
  slow.ops.attention_softmax.ceiling = 0.35;
  const LayerCompute a = layer_compute(base.context());
  const LayerCompute b = layer_compute(slow.context());
  EXPECT_NEAR(b.attention_forward_s, 2 * a.attention_forward_s, a.attention_forward_s * 1e-9);
  EXPECT_DOUBLE_EQ(b.gemm_forward_s, a.gemm_forward_s);

  spec::Calibration c;
  c.memory_by_op["softmax"].ceiling = 0.5;
  EXPECT_DOUBLE_EQ(c.memory_for("attention_softmax", "softmax").ceiling, 0.5);
  c.memory_by_op["attention_softmax"].ceiling = 0.6;
  EXPECT_DOUBLE_EQ(c.memory_for("attention_softmax", "softmax").ceiling, 0.6);
}

// Dropout (Megatron's default 0.1, which SC21's and BLOOM's runs kept): unfused
// attention drops the probabilities in a kernel of its own, reading and
// writing them (2 + 2 bytes) and writing a one-byte mask; backward moves as
// much; the hidden dropouts add a mask byte per element to the two
// bias-dropout-adds. Llama 2 7B at TP 8 (4 heads), micro-batch 1, 4096 tokens:
// 4 x 4096^2 x 5 = 335,544,320 score bytes and 2 x 4096 x 4096 = 33,554,432 mask
// bytes each way, at 3350 GB/s x 0.7. Megatron's selective recompute re-runs
// the attention dropout with the core; a flash kernel drops on chip.
TEST(LayerCompute, DropoutStreamsItsMasksAndUnfusedAttentionsProbabilities) {
  const double bandwidth = 3350e9 * 0.7, scores = 335544320.0, masks = 33554432.0;
  for (auto kernel : {spec::AttentionKernel::unfused, spec::AttentionKernel::flash}) {
    auto plain = llama(4096, kernel), dropped = llama(4096, kernel);
    plain.plan.recompute = dropped.plan.recompute = spec::Recompute::selective;
    dropped.model.dropout = true;
    const LayerCompute a = layer_compute(plain.context()), b = layer_compute(dropped.context());
    const double extra_s = ((kernel == spec::AttentionKernel::unfused ? scores : 0.0) + masks) / bandwidth;
    EXPECT_NEAR(b.memory_forward_s - a.memory_forward_s, extra_s, extra_s * 1e-9);
    EXPECT_NEAR(b.memory_backward_s - a.memory_backward_s, extra_s, extra_s * 1e-9);
    const double recomputed_s = kernel == spec::AttentionKernel::unfused ? scores / bandwidth : 0.0;
    EXPECT_NEAR(b.recompute_s - a.recompute_s, recomputed_s, 1e-15 + recomputed_s * 1e-9);
    EXPECT_DOUBLE_EQ(b.gemm_forward_s, a.gemm_forward_s);
  }
}

// Eager element-wise kernels (torchtitan's stated bytes: RMSNorm 36, SwiGLU 10,
// rotary 20 per element) against the fused defaults (4, 6, 4 at BF16). Llama 2
// 7B at TP 8, 4096 tokens: two norms over 4096 x 4096, SwiGLU over 4096 x 1376
// intermediates, rotary over 4096 x (4 + 4) x 128 query and key elements:
// 2 x 16.78M x 32 + 5.64M x 4 + 4.19M x 16 = 1,163,395,072 more bytes at
// 3350 GB/s x 0.7 = 0.4961 ms more forward.
TEST(LayerCompute, EagerElementwiseKernelsMoveTheBytesTheStackStates) {
  auto fused = llama(4096, spec::AttentionKernel::flash);
  auto eager = llama(4096, spec::AttentionKernel::flash);
  eager.stack.compute.norm_bytes_per_element = 36;
  eager.stack.compute.swiglu_bytes_per_element = 10;
  eager.stack.compute.rotary_bytes_per_element = 20;
  const LayerCompute a = layer_compute(fused.context());
  const LayerCompute b = layer_compute(eager.context());
  const double extra_s = 1163395072.0 / (3350e9 * 0.7);
  EXPECT_NEAR(b.memory_forward_s - a.memory_forward_s, extra_s, extra_s * 1e-9);
  EXPECT_NEAR(b.memory_backward_s - a.memory_backward_s, 2 * extra_s, extra_s * 1e-9);
  EXPECT_DOUBLE_EQ(b.gemm_forward_s, a.gemm_forward_s);
}

// QK-norm (Megatron-Core attention.py@73a28a10:961-964): one fused norm over
// each head's query and key, read 2 and write 2 bytes per element in BF16.
// Llama 2 7B's shapes at TP 8, 4096 tokens: 4096 x (4 + 4) x 128 elements x 4
// bytes = 16,777,216 bytes at 3350 GB/s x 0.7 = 7.154 us more forward, twice
// that backward, no GEMM time.
TEST(LayerCompute, QkNormStreamsEachHeadsQueryAndKeyOnce) {
  auto plain = llama(4096, spec::AttentionKernel::flash);
  auto normed = llama(4096, spec::AttentionKernel::flash);
  normed.model.qk_norm = true;
  const LayerCompute a = layer_compute(plain.context());
  const LayerCompute b = layer_compute(normed.context());
  const double extra_s = 16777216.0 / (3350e9 * 0.7);
  EXPECT_NEAR(b.memory_forward_s - a.memory_forward_s, extra_s, extra_s * 1e-9);
  EXPECT_NEAR(b.memory_backward_s - a.memory_backward_s, 2 * extra_s, extra_s * 1e-9);
  EXPECT_DOUBLE_EQ(b.gemm_forward_s, a.gemm_forward_s);
}

// BLOOM's 200B candidate (hidden 14400, 96 heads: head dimension 150, 300
// bytes in FP16) on A100s without flash attention: the score and context
// batched GEMMs read rows that miss the tensor cores' 16-byte alignment
// (NVIDIA/cutlass#75), so they run at the 19.5 TFLOP/s FP32 peak (A100 data
// sheet), not the 312 of BF16. 12 heads per TP rank at TP 8, 2048 tokens:
// 2 x 12 x 2 x 2048^2 x 150 FLOPs at 19.5 TFLOP/s x 0.7 x (2048/2064)^2 x
// (150/166) (the assumed shape curve) = 2.487 ms forward. The chronicle measured
// this model 38% slower per step than hidden 13824 (head dimension 144) at the
// same layout (bigscience@9e64edec chronicles-prequel.md, 'tile and wave quantization').
TEST(LayerCompute, MisalignedHeadDimensionLeavesTheTensorCores) {
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  p.micro_batch = 1;
  testing::StepFixture f("bloom-l80-h14400-a96", "jean-zay-a100-80gb", 2048, 8, spec::Precision::mixed_bf16, p);
  f.stack.compute.attention = spec::AttentionKernel::unfused;
  const StepContext ctx = f.context();
  EXPECT_DOUBLE_EQ(matrix_peak(ctx, 312e12, 2048, 150), 19.5e12);
  EXPECT_DOUBLE_EQ(matrix_peak(ctx, 312e12, 2048, 144), 312e12);
  EXPECT_DOUBLE_EQ(matrix_peak(ctx, 312e12, 1800, 5400), 312e12);  // the layer's own GEMMs at TP 8 stay aligned
  const double eff = 0.7 * (2048.0 / 2064) * (2048.0 / 2064) * (150.0 / 166);
  const double forward_s = 2.0 * 12 * 2 * 2048.0 * 2048 * 150 / (19.5e12 * eff);
  EXPECT_NEAR(layer_compute(ctx).attention_forward_s, forward_s, forward_s * 1e-9);

  // A flash kernel pads the head dimension on chip: the BF16 peak holds.
  f.stack.compute.attention = spec::AttentionKernel::flash;
  EXPECT_LT(layer_compute(f.context()).attention_forward_s, forward_s / 10);
}

// Hardware that states no alignment rule (Trainium) keeps its peak for any shape.
TEST(LayerCompute, NoAlignmentRuleKeepsThePeak) {
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  testing::StepFixture f("llama2-7b", "trn1.32xlarge", 4096, 8, spec::Precision::mixed_bf16, p);
  EXPECT_DOUBLE_EQ(matrix_peak(f.context(), 1e14, 4096, 150), 1e14);
}
}  // namespace
}  // namespace trainplan::cost

namespace trainplan::cost {
namespace {

// FP8 (Transformer Engine's hybrid recipe): the four linear GEMMs of a layer
// run at the FP8 peak, 1,979 against 989 TFLOP/s dense on H100 SXM (NVIDIA
// H100 data sheet), so their time halves less the rounding of the peaks; the
// attention core stays at the BF16 peak, and the attention output is cast
// (3 bytes per element) before the output projection.
TEST(LayerCompute, Fp8RunsTheLinearGemmsAtTheFp8Peak) {
  spec::Plan p;
  p.instances = 1;
  p.tp = 8;
  testing::StepFixture bf16("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::mixed_bf16, p);
  testing::StepFixture fp8("llama2-7b", "p5.48xlarge", 4096, 8, spec::Precision::fp8, p);
  const LayerCompute a = layer_compute(bf16.context()), b = layer_compute(fp8.context());
  EXPECT_NEAR(b.gemm_forward_s, a.gemm_forward_s * 989.0 / 1979.0, a.gemm_forward_s * 1e-12);
  EXPECT_NEAR(b.gemm_backward_s, a.gemm_backward_s * 989.0 / 1979.0, a.gemm_backward_s * 1e-12);
  EXPECT_DOUBLE_EQ(b.attention_forward_s, a.attention_forward_s);
  // 4096 tokens x 4 heads x 128 x 3 bytes at 3.35 TB/s x 0.7 (the assumed memory efficiency).
  const double cast_s = 4096.0 * 4 * 128 * 3 / (fp8.hardware.hbm_bytes_per_s * 0.7);
  EXPECT_NEAR(b.memory_forward_s - a.memory_forward_s, cast_s, cast_s * 1e-9);
}

// An FP32 model whose matmuls neuronx-cc casts to BF16 (--auto-cast matmult,
// aws-neuron-sdk neuronx-cc-training-mixed-precision.rst: "the remaining
// operations are performed in the data type specified by the model"): its
// GEMMs take BF16's time, its norms, residuals and activations FP32's bytes.
// BERT-Large on one trn1 NeuronCore, s 128, micro-batch 16.
TEST(LayerCompute, Fp32ModelWithBf16MatmulsPaysFp32BytesAtBf16GemmSpeed) {
  spec::Plan p;
  p.instances = 1;
  p.micro_batch = 16;
  const auto at = [&](spec::Precision precision) {
    testing::StepFixture f("bert-large-hf", "trn1.32xlarge", 128, 512, precision, p);
    return layer_compute(f.context());
  };
  const LayerCompute bf16 = at(spec::Precision::mixed_bf16), cast = at(spec::Precision::fp32_bf16_matmul),
                     fp32 = at(spec::Precision::fp32);
  EXPECT_DOUBLE_EQ(cast.gemm_forward_s, bf16.gemm_forward_s);
  EXPECT_DOUBLE_EQ(cast.gemm_backward_s, bf16.gemm_backward_s);
  // Twice the bytes, less the dropout masks, which stay one byte an element.
  EXPECT_GT(cast.memory_forward_s, 1.9 * bf16.memory_forward_s);
  EXPECT_LT(cast.memory_forward_s, 2 * bf16.memory_forward_s);
  EXPECT_DOUBLE_EQ(cast.memory_forward_s, fp32.memory_forward_s);
  // trn1's FP32 peak is a quarter of BF16's (hardware/trn1.32xlarge.json).
  EXPECT_NEAR(fp32.gemm_forward_s, 4 * cast.gemm_forward_s, cast.gemm_forward_s * 1e-9);
}

// torch.autocast over an FP32 model (the Neuron BERT tutorial's AMP rows): the
// residual stream, the norms and the attention probabilities stay FP32.
// BERT-Large on one trn1 NeuronCore, s 128, micro-batch 16 (2048 tokens x 1024,
// 16 x 16 heads x 128^2 = 4,194,304 score elements), forward bytes over plain
// mixed BF16: two norms read and write 4 bytes, not 2 (2 x 2048 x 1024 x 4);
// two residual adds write and read the stream at 4 (2 x 2048 x 1024 x 4); two
// norm outputs cast to BF16 (2 x 2048 x 1024 x 6); the softmax writes 4-byte
// probabilities and casts them back (4,194,304 x 8); dropout reads and writes
// them at 4 (4,194,304 x 4): 109,051,904 bytes. Backward moves twice the
// non-dropout bytes plus dropout's once. The GEMMs, and bf16-sr, do not change.
TEST(LayerCompute, AutocastKeepsTheStreamNormsAndProbabilitiesInFp32) {
  spec::Plan p;
  p.instances = 1;
  p.micro_batch = 16;
  const auto at = [&](spec::Precision precision, bool autocast) {
    testing::StepFixture f("bert-large-hf", "trn1.32xlarge", 128, 512, precision, p);
    EXPECT_TRUE(f.model.dropout);
    f.stack.compute.attention = spec::AttentionKernel::unfused;
    f.stack.compute.mixed_precision_autocast = autocast;
    const StepContext ctx = f.context();
    return std::pair{layer_compute(ctx), ctx.stream_s(ctx.ops.residual, 1e9) / 1e9};
  };
  const auto [plain, per_byte_s] = at(spec::Precision::mixed_bf16, false);
  const LayerCompute autocast = at(spec::Precision::mixed_bf16, true).first;
  const double dropout = 16777216.0, rest = 109051904.0 - dropout;
  EXPECT_NEAR(autocast.memory_forward_s - plain.memory_forward_s, (rest + dropout) * per_byte_s, 1e-12);
  EXPECT_NEAR(autocast.memory_backward_s - plain.memory_backward_s, (2 * rest + dropout) * per_byte_s, 1e-12);
  EXPECT_DOUBLE_EQ(autocast.gemm_forward_s, plain.gemm_forward_s);
  EXPECT_DOUBLE_EQ(at(spec::Precision::bf16_sr, true).first.memory_forward_s,
                   at(spec::Precision::bf16_sr, false).first.memory_forward_s);
}

// NxD's selective recompute wraps modules (aws-neuron/neuronx-distributed@4f95471
// examples/training/llama): its CoreAttention module, which the NKI flash kernel
// bypasses (modeling_llama_nxd.py:413-415), and the SwiGLU activation it
// checkpoints itself (:205-206); at 8,192 tokens the TP/PP example wraps the
// whole LlamaMLP too (tp_pp_llama_hf_pretrain/run_llama_nxd.py:116-117).
TEST(LayerCompute, NxdSelectiveRecomputeReRunsTheModulesItWraps) {
  auto recompute = [](spec::AttentionKernel kernel, spec::SelectiveRecompute scheme) {
    auto f = llama(4096, kernel);
    f.plan.recompute = spec::Recompute::selective;
    f.stack.capabilities.selective = scheme;
    return layer_compute(f.context());
  };
  using S = spec::SelectiveRecompute;
  const auto flash = spec::AttentionKernel::flash, unfused = spec::AttentionKernel::unfused;
  const LayerCompute megatron = recompute(flash, S::attention_core);
  EXPECT_DOUBLE_EQ(megatron.recompute_s, megatron.attention_forward_s);
  // Under flash the module re-runs the activation alone: less than Megatron's
  // attention re-run, and the same activation the unfused core adds to its own.
  const double activation_s = recompute(flash, S::core_attention_module).recompute_s;
  EXPECT_GT(activation_s, 0);
  EXPECT_LT(activation_s, megatron.recompute_s);
  EXPECT_NEAR(recompute(unfused, S::core_attention_module).recompute_s - recompute(unfused, S::attention_core).recompute_s,
              activation_s, activation_s * 1e-9);
  // The MLP module adds its GEMMs' forward: for Llama 2 7B, 3hf of the layer's
  // 3hf + 4h^2 GEMM FLOPs (h 4096, f 11008, full KV heads), 0.668 of its GEMM time
  // give or take the shapes' efficiencies.
  const LayerCompute mlp = recompute(flash, S::core_attention_and_mlp_modules);
  const double mlp_gemm_share = (mlp.recompute_s - activation_s) / mlp.gemm_forward_s;
  EXPECT_NEAR(mlp_gemm_share, 3.0 * 11008 / (3.0 * 11008 + 4 * 4096), 0.02);
}

}  // namespace
}  // namespace trainplan::cost
