// Stacks (stacks/*.json, schema in stacks/README.md): every shipped file
// loads with the behaviour its sources state, a bad file names the file and
// the JSON path, and stack_refusal names the stack that cannot run a plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <nlohmann/json.hpp>

#include "expect_spec_error.h"
#include "spec/error.h"
#include "spec/load.h"
#include "spec/stack.h"

using namespace trainplan::spec;
using nlohmann::json;

namespace {

// Errors from stack_from_json name "bad-stack.json" first.
template <typename F>
void expect_stack_error(F&& f, const std::string& path_part, const std::string& expected_part) {
  test_support::expect_spec_error(std::forward<F>(f), path_part, expected_part, "bad-stack.json");
}

json shipped_stack(const std::string& name) { return read_json_file(data_root() + "/stacks/" + name + ".json"); }

Stack from(const json& j) { return stack_from_json(j, "bad-stack.json"); }

}  // namespace

// ---- the shipped stacks ------------------------------------------------------

TEST(StackLoad, EveryShippedStackLoadsUnderItsOwnName) {
  const auto names = list_stack_names();
  EXPECT_GE(names.size(), 19u);  // 19 files in stacks/ at this commit
  for (const auto& name : names) {
    Stack s;
    ASSERT_NO_THROW(s = load_stack(name)) << name;
    EXPECT_EQ(s.name, name) << "the file's \"name\" must match its file name";
    EXPECT_FALSE(s.versions.empty()) << name;
    EXPECT_FALSE(s.capabilities.recompute_modes.empty()) << name;
    EXPECT_LT(s.memory.allocator_overhead_fraction, 1.0) << name;
    EXPECT_NE(s.source_file.find("stacks/" + name + ".json"), std::string::npos) << s.source_file;
  }
}

TEST(StackLoad, ShippedNamesIncludeTheStacksTheModelNames) {
  const auto names = list_stack_names();
  for (const char* expected : {"megatron-lm", "torchtitan", "megatron-deepspeed", "neuronx-distributed", "nemo"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(StackLoad, MegatronLmFusesWgradAccumulation) {
  const Stack s = load_stack("megatron-lm");
  EXPECT_EQ(s.compute.grad_accumulation, GradAccumulation::fused_wgrad);
  EXPECT_STREQ(to_string(s.compute.grad_accumulation), "fused-wgrad");
  EXPECT_EQ(s.compute.attention, AttentionKernel::flash);
  EXPECT_EQ(s.capabilities.selective, SelectiveRecompute::attention_core);
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 4);             // main_grad_dtype fp32
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 160e6);  // dp_bucket_mb 160 (40 M params x 4 bytes)
  EXPECT_DOUBLE_EQ(s.memory.optimizer_state_bytes, 8);       // two FP32 Adam moments
  EXPECT_DOUBLE_EQ(s.memory.master_weight_bytes, 4);
  EXPECT_TRUE(s.capabilities.overlap_tp_comm);
  EXPECT_TRUE(s.capabilities.sequence_parallel);
  EXPECT_TRUE(s.capabilities.pipeline_1f1b);
  EXPECT_TRUE(s.capabilities.pipeline_interleaved);
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(s.memory.runtime_reserve_bytes, 0.8 * 1073741824.0);  // the CUDA context, 0.8 GiB
  EXPECT_DOUBLE_EQ(s.memory.communicator_bytes, 0.6 * 1073741824.0);     // one NCCL communicator, 0.6 GiB
  EXPECT_DOUBLE_EQ(s.memory.allocator_overhead_fraction, 0.1);
}

TEST(StackLoad, TorchtitanUsesPerOpSelectiveRecompute) {
  const Stack s = load_stack("torchtitan");
  EXPECT_EQ(s.capabilities.selective, SelectiveRecompute::per_op);
  EXPECT_EQ(s.compute.grad_accumulation, GradAccumulation::separate_pass);
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{0, 2, 3}));  // FSDP2: no ZeRO-1
  EXPECT_FALSE(s.offers_zero(1));
  EXPECT_FALSE(s.memory.zero3_keeps_16bit_shard);        // FSDP keeps only the FP32 shard
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 0);  // one bucket per layer
  EXPECT_TRUE(s.offers_recompute(Recompute::selective));
}

// Full recompute: torchtitan's eager non-reentrant checkpoint stops at the last
// saved tensor; its compiled variants and stacks without the field (Megatron's
// and DeepSpeed's reentrant CheckpointFunction) re-run the whole layer.
TEST(StackLoad, FullRecomputeReachDefaultsToTheWholeLayer) {
  EXPECT_EQ(load_stack("torchtitan").capabilities.full, FullRecompute::until_last_saved);
  EXPECT_EQ(load_stack("torchtitan-fused-rmsnorm").capabilities.full, FullRecompute::until_last_saved);
  EXPECT_EQ(load_stack("torchtitan-compile").capabilities.full, FullRecompute::whole_layer);
  EXPECT_EQ(load_stack("torchtitan-compile-2025").capabilities.full, FullRecompute::whole_layer);
  EXPECT_EQ(load_stack("megatron-lm").capabilities.full, FullRecompute::whole_layer);
  EXPECT_EQ(load_stack("megatron-deepspeed").capabilities.full, FullRecompute::whole_layer);
}

TEST(StackLoad, MegatronDeepSpeedAttentionIsUnfused) {
  const Stack s = load_stack("megatron-deepspeed");
  EXPECT_EQ(s.compute.attention, AttentionKernel::unfused);
  EXPECT_STREQ(to_string(s.compute.attention), "unfused");
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{1}));  // BF16_Optimizer: ZeRO-1 only
  EXPECT_TRUE(s.capabilities.pipeline_1f1b);
  EXPECT_FALSE(s.capabilities.pipeline_interleaved);
  EXPECT_FALSE(s.capabilities.sequence_parallel);
  EXPECT_FALSE(s.offers_recompute(Recompute::selective));
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 2000e6);  // dp_bucket_mb 2000
}

// microsoft/Megatron-DeepSpeed@f4157bea with DeepSpeed 0.16.2: the BF16
// optimizer's memory and reduction as in BLOOM's stack, plus Megatron SP and
// selective recompute on the unfused attention path; no interleaving, no FP8.
TEST(StackLoad, MicrosoftMegatronDeepSpeedOffersSequenceParallelAndSelectiveRecompute) {
  const Stack s = load_stack("megatron-deepspeed-ms");
  EXPECT_TRUE(s.capabilities.sequence_parallel);
  EXPECT_TRUE(s.offers_recompute(Recompute::selective));
  EXPECT_TRUE(s.offers_recompute(Recompute::full));
  EXPECT_EQ(s.capabilities.selective, SelectiveRecompute::attention_core);
  EXPECT_EQ(s.compute.attention, AttentionKernel::unfused);
  EXPECT_TRUE(s.capabilities.pipeline_1f1b);
  EXPECT_FALSE(s.capabilities.pipeline_interleaved);
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{1}));
  EXPECT_FALSE(s.capabilities.fp8);
  EXPECT_FALSE(s.capabilities.overlap_tp_comm);
  EXPECT_EQ(s.communication.context_parallel, ContextParallel::none);
  EXPECT_EQ(s.compute.grad_accumulation, GradAccumulation::separate_pass);
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 4);  // FP32 accumulation buffer of the BF16 optimizer
  EXPECT_TRUE(s.memory.keeps_16bit_grads);
  EXPECT_FALSE(s.communication.overlap_dp_grad_reduce);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 2000e6);  // MEMORY_OPT_ALLREDUCE_SIZE: 5e8 FP32 elements
  // The buffered all-reduce flattens each such bucket first and casts the copy to BF16 for the
  // collective (engine.py@b344c04d:2418-2424, communication_data_type :871-882): 2000 + 1000 MB.
  EXPECT_DOUBLE_EQ(s.communication.dp_reduction_copy_bytes, 3000e6);
  EXPECT_DOUBLE_EQ(s.communication.dp_reduce_bytes, 2);
  // Forward peak: two kept 16-bit logit buffers and the out-of-place FP32 subtraction
  // beside its FP32 input (microsoft/Megatron-DeepSpeed@f4157bea cross_entropy.py:25).
  EXPECT_DOUBLE_EQ(s.memory.loss_bytes_per_logit, 2 + 2 + 4 + 4);
}

// The same BF16 optimizer under the pipeline engine with data_types.grad_accum_dtype "bf16"
// (stacks/megatron-deepspeed-ms-bf16-accum.json): a BF16 accumulator (bf16_optimizer.py@b344c04d:162)
// beside the model's BF16 gradients, all-reduced in BF16 through 5e8-element buffers (1000 MB, flattened
// once: no cast to the communication dtype), its partition cast to FP32 at the step (:297-301); the rest
// is megatron-deepspeed-ms's.
TEST(StackLoad, MicrosoftMegatronDeepSpeedBf16AccumulationKeepsABf16Accumulator) {
  const Stack s = load_stack("megatron-deepspeed-ms-bf16-accum"), base = load_stack("megatron-deepspeed-ms");
  EXPECT_EQ(s.bases, (std::vector<std::string>{"megatron-deepspeed-ms"}));
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{1}));
  EXPECT_FALSE(s.capabilities.half_is_fp16);
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 2);
  EXPECT_TRUE(s.memory.keeps_16bit_grads);
  EXPECT_EQ(s.compute.grad_accumulation, GradAccumulation::separate_pass);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 1000e6);
  EXPECT_DOUBLE_EQ(s.communication.dp_reduction_copy_bytes, 1000e6);
  EXPECT_EQ(s.memory.step_temporaries, StepTemporaries::fp32_grad_partition);
  EXPECT_EQ(at_zero_stage(s, 1).memory.step_temporaries, StepTemporaries::fp32_grad_partition);
  EXPECT_EQ(base.memory.step_temporaries, StepTemporaries::none);
  // The pipeline engine's and the fork's behaviour, inherited.
  EXPECT_TRUE(s.memory.pipeline_keeps_stage_outputs);
  EXPECT_TRUE(s.offers_pipeline(2, 1));
  EXPECT_FALSE(s.offers_pipeline(2, 2));
  EXPECT_FALSE(s.communication.overlap_dp_grad_reduce);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_buffer_bytes, 0);
  EXPECT_DOUBLE_EQ(s.memory.loss_bytes_per_logit, base.memory.loss_bytes_per_logit);
  EXPECT_DOUBLE_EQ(s.memory.master_weight_bytes, 4);
  EXPECT_DOUBLE_EQ(s.memory.optimizer_state_bytes, 8);
  EXPECT_EQ(s.compute.attention, AttentionKernel::unfused);
  EXPECT_TRUE(s.capabilities.sequence_parallel);
}

// The same fork at ZeRO-3 as examples_deepspeed/azure/run-175b.sh runs it
// (stacks/megatron-deepspeed-ms-zero3.json): GPTModel without the pipeline
// engine, FP16 partitions and gradients under DeepSpeed 0.16.2's stage-3
// optimizer, the script's 9e7-element bucket overlapped and kept, one 1e9
// sub-group stepped at a time; stage 3 only.
TEST(StackLoad, MicrosoftMegatronDeepSpeedZeroThreeIsStageThreeWithoutAPipeline) {
  const Stack s = load_stack("megatron-deepspeed-ms-zero3");
  EXPECT_EQ(s.bases, (std::vector<std::string>{"megatron-deepspeed-ms"}));
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{3}));
  EXPECT_FALSE(s.offers_pipeline(2, 1));
  EXPECT_TRUE(s.offers_pipeline(1, 1));
  EXPECT_TRUE(s.capabilities.half_is_fp16);
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 2);
  EXPECT_FALSE(s.memory.keeps_16bit_grads);
  EXPECT_TRUE(s.memory.zero3_keeps_16bit_shard);
  EXPECT_FALSE(s.memory.pipeline_keeps_stage_outputs);
  EXPECT_EQ(s.memory.step_temporaries, StepTemporaries::fp32_grad_shard);
  EXPECT_DOUBLE_EQ(s.memory.optimizer_sub_group_parameters, 1e9);
  EXPECT_DOUBLE_EQ(s.memory.loss_bytes_per_logit, 2 + 4 + 4);  // no pipe_buffers beside the loss
  EXPECT_TRUE(s.communication.overlap_dp_grad_reduce);
  EXPECT_TRUE(s.communication.overlap_dp_param_gather);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 90e6 * 2);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_buffer_bytes, 90e6 * 2);
  // reduce_scatter_coalesced's padded concatenation of one bucket, not the base's 2000 MB all-reduce copy.
  EXPECT_DOUBLE_EQ(s.communication.dp_reduction_copy_bytes, 90e6 * 2);
  // Inherited from the fork's stack: the unfused attention path, SP, no FP8.
  EXPECT_EQ(s.compute.attention, AttentionKernel::unfused);
  EXPECT_TRUE(s.capabilities.sequence_parallel);
  EXPECT_FALSE(s.capabilities.fp8);
  Plan p;
  p.zero = 1;
  EXPECT_NE(stack_refusal(s, p).find("ZeRO stage 1 is not offered by megatron-deepspeed-ms-zero3"), std::string::npos);
}

// The fork with --no-pipeline-parallel at ZeRO 0-2 (stacks/megatron-deepspeed-ms-nopipe.json):
// GPTModel under DeepSpeed 0.16.2's plain engine in FP16. ZeRO 0 is FP16_Optimizer (each gradient
// cast to FP32 and flattened at the step), ZeRO 1 the stage-1 optimizer (its 5e8-element FP16
// bucket kept from backward to the step, the rank's partition flattened and cast); gradients are
// the model's FP16 .grad, reduced after the last backward, unoverlapped, in 1000 MB buckets whose
// flat copy is made then; no pipe buffers, no pipeline. ZeRO 2 is the same optimizer partitioning
// gradients (stage_1_and_2.py@b344c04d): hooks reduce in every micro-batch's backward, each bucket
// flattened and all-reduced (allreduce_and_scatter), one 5e8-element bucket kept, and a fresh
// partition per micro-batch. With overlap_comm (the plan's DP overlap) stages 1 and 2 reduce on a
// side stream into two buckets (:1046-1047, 2046-2051); stage 0's FP16_Optimizer takes none.
TEST(StackLoad, MicrosoftMegatronDeepSpeedWithoutPipelinePartitionsGradientsAtZeroTwo) {
  const Stack s = load_stack("megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{0, 1, 2}));
  const Stack z2 = at_zero_stage(s, 2);
  EXPECT_TRUE(z2.communication.dp_grad_reduce_every_micro_batch);
  EXPECT_TRUE(z2.communication.overlap_dp_grad_reduce);
  EXPECT_EQ(z2.communication.dp_bucket_buffers_overlapped, 2);
  EXPECT_TRUE(at_zero_stage(s, 1).communication.overlap_dp_grad_reduce);
  EXPECT_EQ(at_zero_stage(s, 1).communication.dp_bucket_buffers_overlapped, 2);
  EXPECT_FALSE(at_zero_stage(s, 0).communication.overlap_dp_grad_reduce);
  EXPECT_EQ(at_zero_stage(s, 0).communication.dp_bucket_buffers_overlapped, 1);
  // Under the pipeline engine DeepSpeed turns overlap_comm off (engine.py:1569-1572).
  EXPECT_FALSE(at_zero_stage(load_stack("megatron-deepspeed-ms-fp16"), 1).communication.overlap_dp_grad_reduce);
  EXPECT_TRUE(z2.communication.zero_grad_reduce_all_reduce);
  EXPECT_DOUBLE_EQ(z2.communication.dp_bucket_bytes, 5e8 * 2);
  EXPECT_DOUBLE_EQ(z2.communication.dp_bucket_buffer_bytes, 5e8 * 2);
  EXPECT_DOUBLE_EQ(z2.communication.dp_reduction_copy_bytes, 5e8 * 2);
  EXPECT_TRUE(z2.memory.gradient_partition_per_micro_batch);
  EXPECT_TRUE(z2.memory.gradients_freed_at_step);
  EXPECT_EQ(z2.memory.step_temporaries, StepTemporaries::fp32_grad_shard);
  EXPECT_DOUBLE_EQ(z2.memory.main_grad_bytes, 2);
  // Only stage 2 partitions: stages 0 and 1 keep their single gradient buffer and one reduction per step.
  for (int zero : {0, 1}) {
    EXPECT_FALSE(at_zero_stage(s, zero).memory.gradient_partition_per_micro_batch) << zero;
    EXPECT_FALSE(at_zero_stage(s, zero).communication.dp_grad_reduce_every_micro_batch) << zero;
  }
  Plan p;
  p.zero = 2;
  EXPECT_TRUE(stack_refusal(s, p).empty());
  // Under the pipeline engine DeepSpeed rejects ZeRO-2 (pipe/engine.py:77-78): the pipeline stacks do not offer it.
  for (const char* piped : {"megatron-deepspeed-ms", "megatron-deepspeed-ms-fp16"})
    EXPECT_FALSE(load_stack(piped).offers_zero(2)) << piped;
}

// The same stack at ZeRO 0-1.
TEST(StackLoad, MicrosoftMegatronDeepSpeedWithoutPipelineRunsDeepSpeedsFp16Optimizers) {
  const Stack s = load_stack("megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(s.bases, (std::vector<std::string>{"megatron-deepspeed-ms"}));
  EXPECT_FALSE(s.offers_pipeline(2, 1));
  EXPECT_TRUE(s.capabilities.half_is_fp16);
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 2);
  EXPECT_FALSE(s.memory.keeps_16bit_grads);
  EXPECT_FALSE(s.memory.pipeline_keeps_stage_outputs);
  EXPECT_TRUE(at_zero_stage(s, 0).memory.gradients_freed_at_step);
  EXPECT_TRUE(at_zero_stage(s, 1).memory.gradients_freed_at_step);
  EXPECT_EQ(at_zero_stage(s, 0).memory.step_temporaries, StepTemporaries::fp32_grad_casts);
  EXPECT_EQ(at_zero_stage(s, 1).memory.step_temporaries, StepTemporaries::fp32_grad_shard);
  EXPECT_DOUBLE_EQ(s.memory.loss_bytes_per_logit, 2 + 4 + 4);
  EXPECT_FALSE(s.communication.overlap_dp_grad_reduce);
  EXPECT_FALSE(s.communication.overlap_dp_param_gather);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 5e8 * 2);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_buffer_bytes, 0);
  EXPECT_DOUBLE_EQ(at_zero_stage(s, 1).communication.dp_bucket_buffer_bytes, 5e8 * 2);
  EXPECT_DOUBLE_EQ(at_zero_stage(s, 0).communication.dp_bucket_buffer_bytes, 0);
  EXPECT_DOUBLE_EQ(s.communication.dp_reduction_copy_bytes, 5e8 * 2);
  EXPECT_EQ(s.compute.grad_accumulation, GradAccumulation::separate_pass);
  EXPECT_EQ(s.compute.attention, AttentionKernel::unfused);  // inherited: the fork's local layers
  Plan p;
  p.zero = 3;
  EXPECT_NE(stack_refusal(s, p).find("ZeRO stage 3 is not offered by megatron-deepspeed-ms-nopipe"), std::string::npos);
  p.zero = 1;
  p.pp = 2;
  EXPECT_FALSE(stack_refusal(s, p).empty());

  // In BF16, DeepSpeed's BF16 optimizer as stack megatron-deepspeed-ms prices it, less GPTModelPipe's
  // pipe buffers (the previous micro-batch's 16-bit logits); the all-reduce's 2000 MB flat copy said.
  const Stack bf16 = load_stack("megatron-deepspeed-ms-nopipe-bf16-optimizer"), pipe = load_stack("megatron-deepspeed-ms");
  EXPECT_EQ(bf16.capabilities.zero_stages, (std::vector<int>{1}));
  EXPECT_FALSE(bf16.capabilities.half_is_fp16);
  EXPECT_FALSE(bf16.offers_pipeline(2, 1));
  EXPECT_FALSE(bf16.memory.pipeline_keeps_stage_outputs);
  EXPECT_TRUE(pipe.memory.pipeline_keeps_stage_outputs);
  EXPECT_DOUBLE_EQ(bf16.memory.loss_bytes_per_logit, pipe.memory.loss_bytes_per_logit - 2);
  EXPECT_DOUBLE_EQ(bf16.memory.main_grad_bytes, pipe.memory.main_grad_bytes);
  EXPECT_EQ(bf16.memory.keeps_16bit_grads, pipe.memory.keeps_16bit_grads);
  EXPECT_DOUBLE_EQ(bf16.communication.dp_bucket_bytes, pipe.communication.dp_bucket_bytes);
  EXPECT_DOUBLE_EQ(bf16.communication.dp_reduction_copy_bytes, 5e8 * 4);
  EXPECT_EQ(at_zero_stage(bf16, 1).memory.step_temporaries, StepTemporaries::none);
}

// When ZeRO-2 reduces: DeepSpeed's stage-2 optimizer in every micro-batch's backward
// (stage_1_and_2.py's hooks reduce when partition_gradients), FSDP's SHARD_GRAD_OP under
// Composer in every backward and re-gathered for every forward; stage 1 and FULL_SHARD keep
// what they had (once per step; ZeRO-3 is priced per micro-batch by its own rule).
TEST(StackLoad, ZeroTwoReductionsRunEveryMicroBatchWhereTheClientsDoThat) {
  for (const char* name : {"optimum-habana", "hf-trainer-deepspeed", "deepspeed-habana", "megatron-deepspeed-fp16-2020"}) {
    const Stack s = load_stack(name);
    EXPECT_TRUE(at_zero_stage(s, 2).communication.dp_grad_reduce_every_micro_batch) << name;
    EXPECT_FALSE(at_zero_stage(s, 2).communication.dp_param_gather_every_micro_batch) << name;
    EXPECT_FALSE(at_zero_stage(s, 1).communication.dp_grad_reduce_every_micro_batch) << name;
  }
  const Stack composer = load_stack("composer-fsdp");
  EXPECT_TRUE(at_zero_stage(composer, 2).communication.dp_grad_reduce_every_micro_batch);
  EXPECT_TRUE(at_zero_stage(composer, 2).communication.dp_param_gather_every_micro_batch);
  EXPECT_FALSE(at_zero_stage(composer, 3).communication.dp_param_gather_every_micro_batch);
  EXPECT_FALSE(at_zero_stage(load_stack("megatron-lm"), 2).communication.dp_grad_reduce_every_micro_batch);
  json j = shipped_stack("megatron-lm");
  j["dp_grad_reduce_every_micro_batch"] = {{"value", "yes"}, {"source", "test"}};
  expect_stack_error([&] { from(j); }, "$.dp_grad_reduce_every_micro_batch.value", "");
}

// DeepSpeed from v0.12.4 (and HabanaAI's 1.21 fork) all-reduces each ZeRO-1/2 bucket by default
// (reduce_scatter and use_multi_rank_bucket_allreduce both true: allreduce_and_scatter ->
// dist.all_reduce); the HF Trainer stack's 2023 DeepSpeed predates it and reduces to each slice's owner.
TEST(StackLoad, DeepSpeedZeroOneAllReducesItsBucketsFromV0124) {
  for (const char* name : {"optimum-habana", "megatron-deepspeed-ms-nopipe", "megatron-deepspeed-ms-fp16"})
    EXPECT_TRUE(at_zero_stage(load_stack(name), 1).communication.zero_grad_reduce_all_reduce) << name;
  EXPECT_FALSE(at_zero_stage(load_stack("hf-trainer-deepspeed"), 1).communication.zero_grad_reduce_all_reduce);
  EXPECT_FALSE(at_zero_stage(load_stack("optimum-habana"), 0).communication.zero_grad_reduce_all_reduce);
}

// optimizer_step_temporaries varies by ZeRO stage through by_zero_stage (DeepSpeed's
// FP16_Optimizer with ZeRO off, its ZeRO optimizer from stage 1); a bad word is named where it is.
TEST(StackLoad, StepTemporariesPerZeroStageNameTheBadStage) {
  json j = shipped_stack("megatron-lm");
  j["by_zero_stage"] = {{"0", {{"optimizer_step_temporaries", {{"value", "fp32-grad-casts"}, {"source", "test"}}}}}};
  const Stack s = from(j);
  EXPECT_EQ(at_zero_stage(s, 0).memory.step_temporaries, StepTemporaries::fp32_grad_casts);
  EXPECT_EQ(at_zero_stage(s, 1).memory.step_temporaries, s.memory.step_temporaries);
  j["by_zero_stage"]["0"]["optimizer_step_temporaries"]["value"] = "casts";
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.0.optimizer_step_temporaries.value", "fp32-grad-casts");
}

// NeMo 2.0.0's model.fsdp (stacks/nemo-fsdp.json): O2 off, so FSDP keeps FP32
// parameter and gradient shards and no BF16 shard; no pipeline, FP8, EP or
// TP-communication overlap, and no fused accumulation.
TEST(StackLoad, NemoFsdpKeepsFp32ShardsAndOffersWhatNemosFsdpRuns) {
  const Stack s = load_stack("nemo-fsdp");
  EXPECT_EQ(s.bases, (std::vector<std::string>{"nemo"}));
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{3}));
  EXPECT_FALSE(s.memory.zero3_keeps_16bit_shard);
  EXPECT_DOUBLE_EQ(s.memory.master_weight_bytes, 4);
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 4);
  EXPECT_FALSE(s.capabilities.half_is_fp16);
  EXPECT_EQ(s.compute.grad_accumulation, GradAccumulation::separate_pass);
  EXPECT_FALSE(s.offers_pipeline(2, 1));
  EXPECT_FALSE(s.capabilities.fp8);
  EXPECT_FALSE(s.capabilities.expert_parallel);
  EXPECT_FALSE(s.capabilities.overlap_tp_comm);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 0);  // one FSDP unit per layer
  EXPECT_EQ(s.compute.attention, AttentionKernel::flash);  // Transformer Engine, as stacks/nemo.json
}

TEST(StackLoad, NeuronxDistributedDoesNotOverlapGradReduction) {
  const Stack s = load_stack("neuronx-distributed");
  EXPECT_FALSE(s.communication.overlap_dp_grad_reduce);
  EXPECT_FALSE(s.communication.overlap_dp_param_gather);
  EXPECT_FALSE(s.capabilities.overlap_tp_comm);
  EXPECT_DOUBLE_EQ(s.memory.master_weight_bytes, 0);           // master_weights_dtype none (BF16 + stochastic rounding)
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 2);               // main_grad_dtype bf16
  EXPECT_DOUBLE_EQ(s.memory.optimizer_state_bytes, 8);         // optimizer_state_dtype fp32: 2 x 4
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 136.3e6);  // dp_bucket_mb 136.3
  EXPECT_DOUBLE_EQ(s.memory.runtime_reserve_bytes, 0.09 * 1073741824.0);
  EXPECT_DOUBLE_EQ(s.memory.allocator_overhead_fraction, 0.05);
  EXPECT_EQ(s.capabilities.zero_stages, (std::vector<int>{0, 1}));
}

// DeepSpeed 0.5 FP16 ZeRO-1 (BLOOM's topology search): FP16 gradients reduced
// through a persistent 5e8-element FP16 buffer, the shard cast to FP32 at the step.
TEST(StackLoad, DeepSpeedFp16ZeroOneKeepsSixteenBitGradients) {
  const Stack s = load_stack("megatron-deepspeed-fp16");
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 2);                     // main_grad_dtype fp16
  EXPECT_FALSE(s.memory.keeps_16bit_grads);
  EXPECT_EQ(s.memory.step_temporaries, StepTemporaries::fp32_grad_shard);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 1000e6);         // dp_bucket_mb 1000
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_buffer_bytes, 1000e6);  // dp_bucket_buffer_mb 1000
  EXPECT_DOUBLE_EQ(load_stack("megatron-lm").communication.dp_bucket_buffer_bytes, 0);  // buckets are views of main_grad
  EXPECT_EQ(load_stack("torchtitan").memory.step_temporaries, StepTemporaries::foreach);
}

// Logit bytes at the loss's peak, per stack, read off each stack's cross-entropy code:
// DeepSpeed's pipeline engine keeps two 16-bit logit buffers on the last stage, the
// bigscience fork's vocab-parallel loss works in place on one FP32 copy, and the
// backward's copy-back of .float() adds the 16-bit gradient (2 + 2 + 4 + 2); the 2020
// DeepSpeedExamples Megatron-LM holds the 16-bit logits, the .float() copy, a clone and
// its exp at the end of the forward (2 + 4 + 4 + 4); Megatron-Core: one FP32 buffer and
// one 16-bit tensor at a time (6).
TEST(StackLoad, LossBytesPerLogitFollowEachStacksCrossEntropy) {
  EXPECT_DOUBLE_EQ(load_stack("megatron-deepspeed").memory.loss_bytes_per_logit, 2 + 2 + 4 + 2);
  EXPECT_DOUBLE_EQ(load_stack("megatron-deepspeed-fp16").memory.loss_bytes_per_logit, 2 + 2 + 4 + 2);
  EXPECT_DOUBLE_EQ(load_stack("megatron-deepspeed-fp16-2020").memory.loss_bytes_per_logit, 2 + 4 + 4 + 4);
  EXPECT_DOUBLE_EQ(load_stack("megatron-lm").memory.loss_bytes_per_logit, 2 + 4);
  EXPECT_DOUBLE_EQ(load_stack("megatron-lm").memory.loss_bytes_per_logit_tp, 0);  // the same path at any TP
  // torchtitan: eager cross entropy on .float() logits (the FP32 log-softmax kept,
  // its backward's two FP32 gradients beside it); with TP > 1 torch's loss_parallel
  // decomposition: the saved result, zeros_like, exp and their sum at once.
  EXPECT_DOUBLE_EQ(load_stack("torchtitan").memory.loss_bytes_per_logit, 4 + 4 + 4);
  EXPECT_DOUBLE_EQ(load_stack("torchtitan").memory.loss_bytes_per_logit_tp, 4 + 4 + 4 + 4);
}

// optimum-habana's loss, read off each release's model code: at d09f3ea13 (the
// CodeLlama baseline) modeling_llama.py upcasts the logits, copies the shifted
// FP32 logits and keeps log_softmax's FP32 output (4 + 4 + 4); at e394b0f92 (the
// BLOOM Gaudi1 baseline, stacks/optimum-habana-1.10.json) modeling_bloom.py does
// the same in BF16 (2 + 2 + 2).
TEST(StackLoad, OptimumHabanaLossFollowsTheModelCodeOfEachRelease) {
  EXPECT_DOUBLE_EQ(load_stack("optimum-habana").memory.loss_bytes_per_logit, 4 + 4 + 4);
  EXPECT_DOUBLE_EQ(load_stack("optimum-habana-1.10").memory.loss_bytes_per_logit, 2 + 2 + 2);
}

// DeepSpeed's ZeRO-1/2 optimizer frees the gradients at each step (stage_1_and_2.py
// zero_grad(set_to_none=True), averaged_gradients[i] = None); ZeRO-3's partition
// buffer and Megatron's main_grad persist. GaudiTrainer drops the model's output
// before backward. optimum-habana's CI DeepSpeed configs size the reduction
// buffer per stage (by_zero_stage): ZeRO-1 DeepSpeed's default, ZeRO-2 none
// (contiguous_gradients false), ZeRO-3 hidden^2 (reduce_bucket_size "auto").
TEST(StackLoad, OptimumHabanaGradientsLossAndBucketsByZeroStage) {
  for (const char* name : {"optimum-habana", "optimum-habana-1.10"}) {
    const Stack s = load_stack(name);
    EXPECT_FALSE(at_zero_stage(s, 0).memory.gradients_freed_at_step) << name;
    EXPECT_TRUE(at_zero_stage(s, 1).memory.gradients_freed_at_step) << name;
    EXPECT_TRUE(at_zero_stage(s, 2).memory.gradients_freed_at_step) << name;
    EXPECT_FALSE(at_zero_stage(s, 3).memory.gradients_freed_at_step) << name;
    EXPECT_TRUE(s.memory.loss_freed_before_recompute) << name;
    EXPECT_DOUBLE_EQ(s.communication.dp_bucket_buffer_bytes, 1000e6) << name;
    const Stack z1 = at_zero_stage(s, 1), z2 = at_zero_stage(s, 2), z3 = at_zero_stage(s, 3);
    EXPECT_DOUBLE_EQ(z1.communication.dp_bucket_buffer_bytes, 1000e6) << name;  // no entry: the file's field
    EXPECT_FALSE(z1.communication.dp_bucket_buffer_hidden_squared) << name;
    EXPECT_DOUBLE_EQ(z2.communication.dp_bucket_buffer_bytes, 0) << name;
    EXPECT_FALSE(z2.communication.dp_bucket_buffer_hidden_squared) << name;
    EXPECT_TRUE(z3.communication.dp_bucket_buffer_hidden_squared) << name;
  }
  EXPECT_TRUE(load_stack("optimum-habana-ddp").memory.loss_freed_before_recompute);
  const Stack megatron = load_stack("megatron-lm");
  for (int stage = 0; stage < 4; ++stage) EXPECT_FALSE(at_zero_stage(megatron, stage).memory.gradients_freed_at_step);
  EXPECT_FALSE(megatron.memory.loss_freed_before_recompute);
  EXPECT_FALSE(load_stack("megatron-deepspeed").memory.loss_freed_before_recompute);  // the pipe engine keeps the output
}

// optimum-habana's CI runs one DeepSpeed config per ZeRO stage (tests/configs/
// deepspeed_zero_{1,2,3_gaudi1}.json), stated in one file's by_zero_stage: ZeRO-2
// all-reduces each bucket (reduce_scatter false) without overlap (overlap_comm
// false); ZeRO-3 reduce-scatters on its own stream during backward (overlap_comm
// true) while stage3_max_live_parameters 1e5 leaves no parameter prefetch;
// ZeRO-1 keeps DeepSpeed's defaults: no overlap, and since v0.12.4 (HabanaAI's
// 1.21 fork too) each bucket all-reduced (use_multi_rank_bucket_allreduce).
TEST(StackLoad, OptimumHabanaStatesEachZeroStagesConfig) {
  const Stack s = load_stack("optimum-habana");
  EXPECT_TRUE(s.by_zero_stage[0].keys.empty());
  EXPECT_EQ(s.by_zero_stage[1].keys, (std::vector<std::string>{"gradients_freed_at_step", "zero_grad_reduce"}));
  const Stack z1 = at_zero_stage(s, 1), z2 = at_zero_stage(s, 2), z3 = at_zero_stage(s, 3);
  EXPECT_TRUE(z1.communication.zero_grad_reduce_all_reduce);
  EXPECT_FALSE(z1.communication.overlap_dp_grad_reduce);
  EXPECT_TRUE(z2.communication.zero_grad_reduce_all_reduce);
  EXPECT_FALSE(z2.communication.overlap_dp_grad_reduce);
  EXPECT_FALSE(z3.communication.zero_grad_reduce_all_reduce);
  EXPECT_TRUE(z3.communication.overlap_dp_grad_reduce);
  EXPECT_FALSE(z3.communication.overlap_dp_param_gather);
  EXPECT_FALSE(s.communication.overlap_dp_grad_reduce);  // the file's field: deepspeed-habana's ZeRO-1/2 default
  // What no entry states is the file's at every stage.
  for (const Stack* view : {&z1, &z2, &z3}) {
    EXPECT_EQ(view->name, "optimum-habana");
    EXPECT_DOUBLE_EQ(view->communication.dp_bucket_bytes, s.communication.dp_bucket_bytes);
    EXPECT_DOUBLE_EQ(view->memory.loss_bytes_per_logit, 12);
  }
  // The variant that extends it inherits the entries.
  EXPECT_TRUE(at_zero_stage(load_stack("optimum-habana-1.10"), 2).communication.zero_grad_reduce_all_reduce);
  // A stage outside 0..3 is the stack itself.
  EXPECT_FALSE(at_zero_stage(s, 7).communication.zero_grad_reduce_all_reduce);
}

// An entry's field is resolved from the stack it is applied to, so an edit to a
// loaded stack reaches every stage but the fields the entry states.
TEST(StackLoad, AtZeroStageTakesOnlyTheEntrysFields) {
  Stack s = load_stack("optimum-habana");
  s.memory.master_weight_bytes = 2;
  s.communication.dp_bucket_buffer_bytes = 7e6;
  const Stack z2 = at_zero_stage(s, 2);
  EXPECT_DOUBLE_EQ(z2.memory.master_weight_bytes, 2);
  EXPECT_DOUBLE_EQ(z2.communication.dp_bucket_buffer_bytes, 0);  // the entry's
  EXPECT_DOUBLE_EQ(at_zero_stage(s, 1).communication.dp_bucket_buffer_bytes, 7e6);
}

// A variant's by_zero_stage merges into its base's stage by stage (stacks/README.md):
// its entry for a stage replaces the base's entry for that stage whole, and the
// stages it does not name keep the base's entries.
TEST(StackLoad, ExtendsMergesByZeroStageStageByStage) {
  const Stack base = load_stack("megatron-deepspeed-ms-nopipe");  // entries for stages 0, 1 and 2
  const std::string path = ::testing::TempDir() + "/merged-stages-stack.json";
  std::ofstream(path) << R"({"extends": "megatron-deepspeed-ms-nopipe", "name": "merged-stages-stack",
      "by_zero_stage": {"1": {"dp_bucket_buffer_mb": {"value": 500, "source": "assumption: test"}}}})";
  const Stack s = load_stack(path);
  EXPECT_EQ(s.by_zero_stage[1].keys, std::vector<std::string>{"dp_bucket_buffer_mb"});
  const Stack z1 = at_zero_stage(s, 1);
  EXPECT_DOUBLE_EQ(z1.communication.dp_bucket_buffer_bytes, 500e6);
  // The base's stage-1 entry also stated zero_grad_reduce; replaced whole, the stage takes the file's.
  ASSERT_TRUE(at_zero_stage(base, 1).communication.zero_grad_reduce_all_reduce);
  EXPECT_FALSE(z1.communication.zero_grad_reduce_all_reduce);
  for (const int stage : {0, 2}) EXPECT_EQ(s.by_zero_stage[stage].keys, base.by_zero_stage[stage].keys) << stage;
  EXPECT_EQ(at_zero_stage(s, 0).memory.step_temporaries, StepTemporaries::fp32_grad_casts);
  EXPECT_DOUBLE_EQ(at_zero_stage(s, 2).communication.dp_reduction_copy_bytes, 1000e6);
  // The shipped variant under the pipeline engine states no stage 0 (the base's) and restates stage 1
  // with the engine's overlap off (engine.py:1569-1572).
  const Stack fp16 = load_stack("megatron-deepspeed-ms-fp16");
  EXPECT_EQ(fp16.by_zero_stage[0].keys, base.by_zero_stage[0].keys);
  EXPECT_EQ(fp16.by_zero_stage[1].keys, (std::vector<std::string>{"dp_bucket_buffer_mb", "overlap_dp_grad_reduce", "zero_grad_reduce"}));
  EXPECT_DOUBLE_EQ(at_zero_stage(fp16, 1).communication.dp_bucket_buffer_bytes, 1000e6);
  EXPECT_FALSE(at_zero_stage(fp16, 1).communication.overlap_dp_grad_reduce);
}

// A variant's by_zero_stage entry set to null drops the base's entry for that
// stage (the stage is then the file's top-level fields); in a file that extends
// nothing there is no entry to drop, and null is refused as any non-object entry.
TEST(StackLoad, ExtendsDropsAByZeroStageEntrySetToNull) {
  const std::string path = ::testing::TempDir() + "/dropped-stage-stack.json";
  std::ofstream(path) << R"({"extends": "megatron-deepspeed-ms-nopipe", "name": "dropped-stage-stack",
      "by_zero_stage": {"note": "stage 2 as the file's fields", "2": null}})";
  const Stack s = load_stack(path);
  EXPECT_TRUE(s.by_zero_stage[2].keys.empty());
  EXPECT_DOUBLE_EQ(at_zero_stage(s, 2).communication.dp_reduction_copy_bytes, s.communication.dp_reduction_copy_bytes);
  EXPECT_FALSE(s.by_zero_stage[0].keys.empty());  // the stages not named keep the base's
  EXPECT_FALSE(s.by_zero_stage[1].keys.empty());
  // Every stage dropped: no entry is left, and the file loads.
  std::ofstream(path) << R"({"extends": "megatron-deepspeed-ms-nopipe", "name": "dropped-stage-stack",
      "by_zero_stage": {"0": null, "1": null, "2": null}})";
  const Stack none = load_stack(path);
  for (const ZeroStageFields& entry : none.by_zero_stage) EXPECT_TRUE(entry.keys.empty());
  // The shipped plain-DDP variant drops deepspeed-habana's stage-2 entry: it offers ZeRO 0 alone.
  ASSERT_FALSE(load_stack("deepspeed-habana").by_zero_stage[2].keys.empty());
  for (const ZeroStageFields& entry : load_stack("optimum-habana-ddp").by_zero_stage) EXPECT_TRUE(entry.keys.empty());

  json j = shipped_stack("megatron-lm");
  j["by_zero_stage"]["0"] = nullptr;
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.0", "expected an object of stack fields");
}

// by_zero_stage (stacks/README.md): a stage outside 0..3 or not offered, a
// field that describes the stack at every stage, an empty or non-object
// entry, or a bad value inside one each names its place in the entry.
TEST(StackLoad, ByZeroStageRefusesWhatCannotVaryByStage) {
  json j = shipped_stack("megatron-lm");
  // Stated per stage through by_zero_stage, so the field itself is true or false.
  j["gradients_freed_at_step"] = {{"value", json::array({1, 4})}, {"source", "test"}};
  expect_stack_error([&] { from(j); }, "$.gradients_freed_at_step.value", "true or false");
  j["gradients_freed_at_step"]["value"] = false;
  EXPECT_NO_THROW(from(j));  // none freed
  const json overlap = {{"value", false}, {"source", "a test"}};
  j["by_zero_stage"] = {{"4", {{"overlap_dp_grad_reduce", overlap}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.4", "a ZeRO stage \"0\" to \"3\"");
  j["by_zero_stage"] = {{"two", {{"overlap_dp_grad_reduce", overlap}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.two", "a ZeRO stage");
  j["by_zero_stage"] = json::object();
  expect_stack_error([&] { from(j); }, "$.by_zero_stage", "expected an object of ZeRO stage");
  j["by_zero_stage"] = {{"2", true}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.2", "expected an object of stack fields");
  j["by_zero_stage"] = {{"2", {{"note", "nothing stated"}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.2", "at least one field");
  j["by_zero_stage"] = {{"2", {{"recompute_modes", {{"value", {"full"}}, {"source", "a test"}}}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.2.recompute_modes", "a field that may differ by ZeRO stage");
  j["by_zero_stage"] = {{"2", {{"overlap_dp_grad_reduce", {{"value", false}}}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.2.overlap_dp_grad_reduce.source", "missing field");
  j["by_zero_stage"] = {{"2", {{"zero_grad_reduce", {{"value", "reduce"}, {"source", "a test"}}}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.2.zero_grad_reduce.value", "reduce-scatter, all-reduce");
  j["by_zero_stage"] = {{"1", {{"dp_bucket_buffer_mb", {{"value", 2e5}, {"source", "a test"}}}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.1.dp_bucket_buffer_mb.value", "MB");
  j["by_zero_stage"] = {{"3", {{"dp_bucket_buffer_mb", {{"value", "hidden"}, {"source", "a test"}}}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.3.dp_bucket_buffer_mb.value", "hidden-squared");
  // Stage 3 is offered by megatron-lm only where zero_stages lists it.
  j["zero_stages"]["value"] = json::array({0, 1});
  j["by_zero_stage"] = {{"3", {{"overlap_dp_grad_reduce", overlap}}}};
  expect_stack_error([&] { from(j); }, "$.by_zero_stage.3", "a ZeRO stage the stack offers (zero_stages: 0, 1)");
  // The field this replaces tells a file written before where it went.
  j.erase("by_zero_stage");
  j["dp_bucket_buffer_by_zero_stage"] = {{"value", {{"3", "hidden-squared"}}}, {"source", "test"}};
  expect_stack_error([&] { from(j); }, "$.dp_bucket_buffer_by_zero_stage", "by_zero_stage");
  j.erase("dp_bucket_buffer_by_zero_stage");
  j["by_zero_stage"] = {{"note", "a test"},
                        {"1", {{"dp_bucket_buffer_mb", {{"value", 12.5}, {"source", "a test"}}}, {"note", "kept"}}}};
  const Stack s = from(j);
  ASSERT_EQ(s.by_zero_stage[1].keys, std::vector<std::string>{"dp_bucket_buffer_mb"});
  EXPECT_DOUBLE_EQ(at_zero_stage(s, 1).communication.dp_bucket_buffer_bytes, 12.5e6);
  EXPECT_DOUBLE_EQ(at_zero_stage(s, 0).communication.dp_bucket_buffer_bytes, s.communication.dp_bucket_buffer_bytes);
}

// torchtitan keeps an FSDP stage gathered through a pipeline step
// (parallelize_llama.py apply_fsdp, torch.distributed.pipelining); Megatron's
// distributed optimizer and DeepSpeed's engines never shard weights under PP.
TEST(StackLoad, OnlyTorchtitanKeepsFsdpGatheredUnderAPipeline) {
  EXPECT_TRUE(load_stack("torchtitan").memory.fsdp_gathered_under_pipeline);
  EXPECT_TRUE(load_stack("torchtitan-compile").memory.fsdp_gathered_under_pipeline);  // extends torchtitan
  EXPECT_FALSE(load_stack("megatron-lm").memory.fsdp_gathered_under_pipeline);
  EXPECT_FALSE(load_stack("megatron-deepspeed").memory.fsdp_gathered_under_pipeline);
}

TEST(StackLoad, Bf16OptimizerStateHalvesTheMoments) {
  // neuronx-nemo-megatron: optimizer_state_dtype bf16, so 2 moments x 2 bytes.
  EXPECT_DOUBLE_EQ(load_stack("neuronx-nemo-megatron").memory.optimizer_state_bytes, 4);
  // composer-fsdp: no pipeline schedules at all.
  const Stack composer = load_stack("composer-fsdp");
  EXPECT_FALSE(composer.capabilities.pipeline_1f1b);
  EXPECT_FALSE(composer.capabilities.pipeline_interleaved);
  EXPECT_TRUE(composer.offers_pipeline(1, 1));
  EXPECT_FALSE(composer.offers_pipeline(2, 1));
}

TEST(StackLoad, LoadsByPathToo) {
  const Stack s = load_stack(data_root() + "/stacks/nemo.json");
  EXPECT_EQ(s.name, "nemo");
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, 268.4e6);
  EXPECT_DOUBLE_EQ(s.memory.main_grad_bytes, 2);  // nemo: bf16 main grads
}

TEST(StackLoad, UnknownNameListsTheKnownStacks) {
  try {
    load_stack("no-such-stack");
    FAIL() << "loaded a stack that does not exist";
  } catch (const SpecError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("no-such-stack: ", 0), 0u) << what;
    EXPECT_NE(what.find("unknown stack"), std::string::npos) << what;
    for (const auto& name : list_stack_names()) EXPECT_NE(what.find(name), std::string::npos) << name << ": " << what;
  }
}

TEST(StackLoad, MissingFileByPathNamesThePath) {
  try {
    load_stack("/no/such/dir/stack.json");
    FAIL() << "loaded a missing file";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), "/no/such/dir/stack.json");
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos) << e.what();
  }
}

// ---- bad files -----------------------------------------------------------------

TEST(StackLoad, TheUneditedFileLoadsSoEachEditBelowIsTheCause) {
  EXPECT_NO_THROW(from(shipped_stack("megatron-lm")));
}

TEST(StackLoad, BehaviourWithoutSource) {
  json j = shipped_stack("megatron-lm");
  j["gradient_accumulation"].erase("source");
  expect_stack_error([&] { from(j); }, "$.gradient_accumulation.source", "missing field");

  j = shipped_stack("megatron-lm");
  j["overlap_dp_grad_reduce"]["source"] = "";
  expect_stack_error([&] { from(j); }, "$.overlap_dp_grad_reduce.source", "non-empty source");

  j = shipped_stack("megatron-lm");
  j["zero_stages"].erase("source");
  expect_stack_error([&] { from(j); }, "$.zero_stages.source", "missing field");
}

TEST(StackLoad, BehaviourAsBareValueNeedsItsObject) {
  json j = shipped_stack("megatron-lm");
  j["attention"] = "flash";  // not {"value": ..., "source": ...}
  expect_stack_error([&] { from(j); }, "$.attention", "expected an object");
}

TEST(StackLoad, WrongWord) {
  json j = shipped_stack("megatron-lm");
  j["attention"]["value"] = "fast";
  expect_stack_error([&] { from(j); }, "$.attention.value", "expected one of flash, unfused, got \"fast\"");

  j = shipped_stack("megatron-lm");
  j["gradient_accumulation"]["value"] = "fused";
  expect_stack_error([&] { from(j); }, "$.gradient_accumulation.value", "fused-wgrad, separate-pass");

  j = shipped_stack("megatron-lm");
  j["recompute_modes"]["value"] = json::array({"none", "partial"});
  expect_stack_error([&] { from(j); }, "$.recompute_modes.value[1]", "got \"partial\"");

  j = shipped_stack("megatron-lm");
  j["pipeline_schedules"]["value"] = json::array({"gpipe"});
  expect_stack_error([&] { from(j); }, "$.pipeline_schedules.value[0]", "1f1b, interleaved");
}

TEST(StackLoad, FlagMustBeBoolean) {
  json j = shipped_stack("megatron-lm");
  j["sequence_parallel"]["value"] = "yes";
  expect_stack_error([&] { from(j); }, "$.sequence_parallel.value", "true or false");
}

TEST(StackLoad, ZeroStageOutOfRange) {
  json j = shipped_stack("megatron-lm");
  j["zero_stages"]["value"] = json::array({0, 1, 4});
  expect_stack_error([&] { from(j); }, "$.zero_stages.value[2]", "ZeRO stage 0..3");

  j["zero_stages"]["value"] = json::array({-1});
  expect_stack_error([&] { from(j); }, "$.zero_stages.value[0]", "ZeRO stage 0..3");

  j["zero_stages"]["value"] = json::array();
  expect_stack_error([&] { from(j); }, "$.zero_stages.value", "non-empty array");

  j["zero_stages"]["value"] = json::array({1.5});
  expect_stack_error([&] { from(j); }, "$.zero_stages.value[0]", "ZeRO stage 0..3");
}

// 2^32 + 1 is no ZeRO stage, but it must not wrap to 1 when read as an int.
// BUG (stack_load.cpp): zero[i].get<int>() truncates before the 0..3 check, so
// 4294967297 is accepted as stage 1 and 4294967296 as stage 0.
TEST(StackLoad, ZeroStageDoesNotWrapAroundInt) {
  json j = shipped_stack("megatron-lm");
  j["zero_stages"]["value"] = json::array({4294967297LL});
  expect_stack_error([&] { from(j); }, "$.zero_stages.value[0]", "ZeRO stage 0..3");
}

TEST(StackLoad, AllocatorOverheadMustBeAPlausibleShare) {
  json j = shipped_stack("megatron-lm");
  j["allocator_overhead_fraction"]["value"] = 1;
  expect_stack_error([&] { from(j); }, "$.allocator_overhead_fraction.value", "a plausible figure from 0 to 0.9, got 1");
  j["allocator_overhead_fraction"]["value"] = 1.5;
  expect_stack_error([&] { from(j); }, "$.allocator_overhead_fraction.value", "got 1.5");
  j["allocator_overhead_fraction"]["value"] = -0.1;
  expect_stack_error([&] { from(j); }, "$.allocator_overhead_fraction.value", ">= 0");
  j["allocator_overhead_fraction"]["value"] = 0.9;  // the top of the range is a share
  EXPECT_DOUBLE_EQ(from(j).memory.allocator_overhead_fraction, 0.9);
  j["allocator_overhead_fraction"]["value"] = 0;
  EXPECT_DOUBLE_EQ(from(j).memory.allocator_overhead_fraction, 0);
}

// The fit counts only the part of the allocator's reserve that it cannot give
// back (issue 40): NeMo's performance scripts run with expandable segments
// (NVIDIA/NeMo@8cfedd72 scripts/performance/executors.py:91-94), whose free
// pages the allocator unmaps before failing, so 0.02 of the 0.1 reserve counts;
// NeMo 1.0's launcher sets no allocator configuration
// (NeMo-Framework-Launcher@8325688d launcher_scripts/conf/config.yaml:60-72), so
// nemo-24.07 keeps the whole 0.1. A stack without the field counts it all.
TEST(StackLoad, UnreleasableAllocatorShareIsAPartOfTheReserve) {
  const Stack nemo = load_stack("nemo");
  EXPECT_DOUBLE_EQ(nemo.memory.allocator_overhead_fraction, 0.1);
  EXPECT_DOUBLE_EQ(nemo.memory.allocator_unreleasable(), 0.02);
  const Stack launcher = load_stack("nemo-24.07");
  EXPECT_DOUBLE_EQ(launcher.memory.allocator_overhead_fraction, 0.1);
  EXPECT_DOUBLE_EQ(launcher.memory.allocator_unreleasable(), 0.1);
  const Stack bloom = load_stack("megatron-deepspeed-fp16");  // Megatron-DeepSpeed, 2022: no expandable segments
  EXPECT_DOUBLE_EQ(bloom.memory.allocator_unreleasable(), bloom.memory.allocator_overhead_fraction);
  EXPECT_DOUBLE_EQ(Stack{}.memory.allocator_unreleasable(), 0);

  json j = shipped_stack("megatron-lm");
  j["allocator_unreleasable_fraction"] = {{"value", 0.03}, {"source", "test"}};
  EXPECT_DOUBLE_EQ(from(j).memory.allocator_unreleasable(), 0.03);
  EXPECT_DOUBLE_EQ(from(j).memory.allocator_overhead_fraction, 0.1);
  j["allocator_unreleasable_fraction"]["value"] = 0.1;  // all of it: as without the field
  EXPECT_DOUBLE_EQ(from(j).memory.allocator_unreleasable(), 0.1);
  j["allocator_unreleasable_fraction"]["value"] = 0.2;  // more than the allocator reserves
  expect_stack_error([&] { from(j); }, "$.allocator_unreleasable_fraction.value", "a plausible figure from 0 to 0.1, got 0.2");
  j["allocator_unreleasable_fraction"]["value"] = -0.01;
  expect_stack_error([&] { from(j); }, "$.allocator_unreleasable_fraction.value", ">= 0");
}

// Positive but absurd figures are typos or unit slips (issue 13): refused with
// the file, the JSON path, the plausible range (stacks/README.md) and the value.
TEST(StackLoad, AbsurdFiguresAreRefusedWithRangeAndValue) {
  auto with = [](const char* key, double value) {
    json j = shipped_stack("megatron-lm");
    j[key]["value"] = value;
    return j;
  };
  expect_stack_error([&] { from(with("runtime_reserve_gib", 5000)); }, "$.runtime_reserve_gib.value",
                    "a plausible figure from 0 to 1024 GiB, got 5000");
  expect_stack_error([&] { from(with("runtime_reserve_gib", 1e300)); }, "$.runtime_reserve_gib.value",
                    "GiB, got a figure too large to represent");
  expect_stack_error([&] { from(with("host_overhead_s", 3600)); }, "$.host_overhead_s.value",
                    "a plausible figure from 0 to 60 s, got 3600");
  expect_stack_error([&] { from(with("dp_bucket_mb", 1e6)); }, "$.dp_bucket_mb.value",
                    "a plausible figure from 0 to 100000 MB, got 1e+06");
  expect_stack_error([&] { from(with("loss_bytes_per_logit", 0)); }, "$.loss_bytes_per_logit.value",
                    "a plausible figure from 1 to 64 bytes, got 0");
  expect_stack_error([&] { from(with("loss_bytes_per_logit", 128)); }, "$.loss_bytes_per_logit.value", "got 128");
  json titan = shipped_stack("torchtitan");
  titan["loss_bytes_per_logit_tp"]["value"] = 128;
  expect_stack_error([&] { from(titan); }, "$.loss_bytes_per_logit_tp.value", "got 128");
  expect_stack_error([&] { from(with("communicator_gib", 100)); }, "$.communicator_gib.value",
                    "a plausible figure from 0 to 64 GiB, got 100");
  EXPECT_DOUBLE_EQ(from(with("runtime_reserve_gib", 1024)).memory.runtime_reserve_bytes, 1024 * 1073741824.0);
  json copy = shipped_stack("megatron-deepspeed");
  copy["dp_reduction_copy_mb"]["value"] = 2e5;
  expect_stack_error([&] { from(copy); }, "$.dp_reduction_copy_mb.value", "a plausible figure from 0 to 100000 MB, got 200000");
}

// communicator_gib is optional: a stack file written before it keeps its
// runtime reserve whole, with no per-communicator term.
TEST(StackLoad, Fp8SavedInputsFollowTheFp8Library) {
  EXPECT_TRUE(load_stack("megatron-lm").memory.fp8_saves_gemm_inputs_in_fp8);  // Transformer Engine
  EXPECT_TRUE(load_stack("nemo").memory.fp8_saves_gemm_inputs_in_fp8);
  EXPECT_FALSE(load_stack("torchtitan").memory.fp8_saves_gemm_inputs_in_fp8);  // torchao: field absent
}

// The sub-group bound (DeepSpeed ZeRO-3's sub_group_size) only bounds the
// flat FP32 gradient copies of fp32-grad-shard; beside another kind it is an error.
TEST(StackLoad, OptimizerSubGroupBoundsOnlyFlatGradientCopies) {
  EXPECT_DOUBLE_EQ(load_stack("megatron-deepspeed-fp16").memory.optimizer_sub_group_parameters, 0);
  json j = shipped_stack("torchtitan");
  j["optimizer_sub_group_parameters"] = {{"value", 1e9}, {"source", "a test"}};
  expect_stack_error([&] { from(j); }, "$.optimizer_sub_group_parameters", "fp32-grad-shard");
}

// Neuron NeMo of 2.13-2.17 runs SwiGLU's gate and up as two layers
// (stacks/neuronx-nemo-megatron.json gate_up_projection); absent: fused.
TEST(StackLoad, GateUpProjectionIsOptionalAndOneOfTwoWords) {
  EXPECT_TRUE(load_stack("neuronx-nemo-megatron").communication.gate_up_separate_linears);
  EXPECT_FALSE(load_stack("neuronx-distributed").communication.gate_up_separate_linears);
  json j = shipped_stack("neuronx-nemo-megatron");
  j["gate_up_projection"]["value"] = "split";
  expect_stack_error([&] { from(j); }, "$.gate_up_projection.value", "expected one of fused, separate, got \"split\"");
}

// optimum-habana's CI ZeRO-2 config turns DeepSpeed's reduce_scatter off
// (stacks/optimum-habana.json by_zero_stage "2" zero_grad_reduce); absent: reduce-scatter.
TEST(StackLoad, ZeroGradReduceIsOptionalAndOneOfTwoWords) {
  EXPECT_TRUE(at_zero_stage(load_stack("optimum-habana"), 2).communication.zero_grad_reduce_all_reduce);
  EXPECT_FALSE(load_stack("optimum-habana").communication.zero_grad_reduce_all_reduce);  // absent
  json j = shipped_stack("megatron-lm");
  j["zero_grad_reduce"] = {{"value", "reduce"}, {"source", "a test"}};
  expect_stack_error([&] { from(j); }, "$.zero_grad_reduce.value",
                     "expected one of reduce-scatter, all-reduce, got \"reduce\"");
}

// Which column-parallel backward collectives run beside the layer's GEMMs
// (stacks/*.json tp_backward_overlap): Megatron-Core and NeMo always, the SC21
// code and the BigScience fork never, Microsoft's fork under SP only; absent: none.
TEST(StackLoad, TpBackwardOverlapIsOptionalAndOneOfThreeWords) {
  EXPECT_EQ(load_stack("megatron-lm").communication.tp_backward_overlap, TpBackwardOverlap::always);
  EXPECT_EQ(load_stack("nemo-24.07").communication.tp_backward_overlap, TpBackwardOverlap::always);  // through extends
  EXPECT_EQ(load_stack("megatron-lm-unfused-attn-ep").communication.tp_backward_overlap, TpBackwardOverlap::always);
  EXPECT_EQ(load_stack("megatron-lm-2021").communication.tp_backward_overlap, TpBackwardOverlap::none);
  EXPECT_EQ(load_stack("megatron-deepspeed").communication.tp_backward_overlap, TpBackwardOverlap::none);
  EXPECT_EQ(load_stack("megatron-deepspeed-ms").communication.tp_backward_overlap, TpBackwardOverlap::sequence_parallel);
  EXPECT_EQ(load_stack("torchtitan").communication.tp_backward_overlap, TpBackwardOverlap::none);  // absent
  json j = shipped_stack("megatron-lm");
  j["tp_backward_overlap"]["value"] = "partial";
  expect_stack_error([&] { from(j); }, "$.tp_backward_overlap.value", "expected one of none, sequence-parallel, always");
}

TEST(StackLoad, CommunicatorSizeIsOptional) {
  json j = shipped_stack("megatron-lm");
  j.erase("communicator_gib");
  EXPECT_DOUBLE_EQ(from(j).memory.communicator_bytes, 0);
}

// Transformer Engine stacks run cuDNN's fused attention on Hopper (TE v2.5
// get_attention_backend), 1.6x FlashAttention-2 forward plus backward at
// 1k-16k tokens (FlashAttention-3 paper's H100 kernel figures, stacks/nemo.json);
// the field is optional and checked per family.
TEST(StackLoad, AttentionSpeedupIsPerFamilyAndOptional) {
  EXPECT_DOUBLE_EQ(from(shipped_stack("nemo")).attention_speedup("h100"), 1.6);
  EXPECT_DOUBLE_EQ(from(shipped_stack("nemo")).attention_speedup("a100"), 1.0);
  EXPECT_DOUBLE_EQ(from(shipped_stack("torchtitan")).attention_speedup("h100"), 1.0);
  json j = shipped_stack("megatron-lm");
  j["attention_speedup"]["value"]["h100"] = 9;
  expect_stack_error([&] { from(j); }, "$.attention_speedup.value.h100", "");
  j["attention_speedup"]["value"] = 1.5;
  expect_stack_error([&] { from(j); }, "$.attention_speedup.value", "object");
}

// Whether the pipeline's p2p exchange holds the rank, per schedule: Megatron-LM's
// 1F1B blocks (batched send/recv, wait, torch.cuda.synchronize), its interleaved
// schedule overlaps by default (--no-overlap-p2p-communication); SC21-era
// Megatron-LM blocks in both; a file without the field overlaps.
TEST(StackLoad, PipelineP2pIsPerScheduleAndOptional) {
  const Stack megatron = from(shipped_stack("megatron-lm"));
  EXPECT_TRUE(megatron.communication.pipeline_p2p_blocking_1f1b);
  EXPECT_FALSE(megatron.communication.pipeline_p2p_blocking_interleaved);
  const Stack sc21 = from(shipped_stack("megatron-lm-2021"));
  EXPECT_TRUE(sc21.communication.pipeline_p2p_blocking_1f1b);
  EXPECT_TRUE(sc21.communication.pipeline_p2p_blocking_interleaved);
  json j = shipped_stack("megatron-lm");
  j.erase("pipeline_p2p");
  EXPECT_FALSE(from(j).communication.pipeline_p2p_blocking_1f1b);
  EXPECT_FALSE(from(j).communication.pipeline_p2p_blocking_interleaved);
  j = shipped_stack("megatron-lm");
  j["pipeline_p2p"]["value"]["1f1b"] = "sometimes";
  expect_stack_error([&] { from(j); }, "$.pipeline_p2p.value.1f1b", "blocking");
  j["pipeline_p2p"]["value"] = {{"zero-bubble", "blocking"}};
  expect_stack_error([&] { from(j); }, "$.pipeline_p2p.value", "");
  j["pipeline_p2p"]["value"] = "blocking";
  expect_stack_error([&] { from(j); }, "$.pipeline_p2p.value", "object");
}

// torchtitan's eager RMSNorm, SwiGLU and rotary embedding move 36, 10 and 20
// bytes per element (torchtitan@9dec370a norms.py and llama/model.py, counted
// kernel by kernel in the file's source); a variant that extends it states only
// what differs and keeps the rest.
TEST(StackLoad, ElementwiseBytesAndVariantsThatExtendAStack) {
  const Stack eager = load_stack("torchtitan");
  EXPECT_DOUBLE_EQ(eager.compute.norm_bytes_per_element, 36);
  EXPECT_DOUBLE_EQ(eager.compute.swiglu_bytes_per_element, 10);
  EXPECT_DOUBLE_EQ(eager.compute.rotary_bytes_per_element, 20);
  const Stack compiled = load_stack("torchtitan-compile");
  EXPECT_EQ(compiled.name, "torchtitan-compile");
  EXPECT_NE(compiled.source_file.find("torchtitan-compile.json"), std::string::npos);
  EXPECT_DOUBLE_EQ(compiled.compute.norm_bytes_per_element, 0);  // fused by Inductor
  EXPECT_DOUBLE_EQ(compiled.compute.rotary_bytes_per_element, 0);
  EXPECT_EQ(compiled.capabilities.selective, eager.capabilities.selective);  // inherited
  EXPECT_DOUBLE_EQ(compiled.memory.loss_bytes_per_logit, eager.memory.loss_bytes_per_logit);
  const Stack fused_norm = load_stack("torchtitan-fused-rmsnorm");
  EXPECT_DOUBLE_EQ(fused_norm.compute.norm_bytes_per_element, 0);
  EXPECT_DOUBLE_EQ(fused_norm.compute.swiglu_bytes_per_element, 10);
  EXPECT_FALSE(from(shipped_stack("megatron-lm")).compute.norm_bytes_per_element > 0);  // optional: fused

  json j = shipped_stack("torchtitan");
  j["elementwise_bytes"]["value"]["gelu"] = 8;
  expect_stack_error([&] { from(j); }, "$.elementwise_bytes.value", "gelu");
  j = shipped_stack("torchtitan");
  j["elementwise_bytes"]["value"]["norm"] = 1;
  expect_stack_error([&] { from(j); }, "$.elementwise_bytes.value.norm", "");
}

// eager_activations: what each torchtitan variant keeps follows its own file,
// an empty list in the compiled variant overriding the eager parent's.
TEST(StackLoad, EagerActivationsFollowEachVariant) {
  const Stack eager = load_stack("torchtitan");
  EXPECT_TRUE(eager.memory.eager_rmsnorm && eager.memory.eager_swiglu);
  EXPECT_FALSE(eager.memory.erf_expression_gelu);
  const Stack compiled = load_stack("torchtitan-compile");
  EXPECT_FALSE(compiled.memory.eager_rmsnorm || compiled.memory.eager_swiglu);
  const Stack fused_norm = load_stack("torchtitan-fused-rmsnorm");
  EXPECT_FALSE(fused_norm.memory.eager_rmsnorm);
  EXPECT_TRUE(fused_norm.memory.eager_swiglu);
  EXPECT_TRUE(load_stack("nvidia-bert-apex-o2").memory.erf_expression_gelu);
  EXPECT_FALSE(load_stack("megatron-lm").memory.eager_swiglu);  // optional: fused

  json j = shipped_stack("torchtune");
  j["eager_activations"]["value"] = json::array({"rotary"});
  expect_stack_error([&] { from(j); }, "$.eager_activations.value[0]", "rotary");
}

TEST(StackLoad, ExtendsNamesAStackThatExists) {
  const std::string path = ::testing::TempDir() + "/variant-stack.json";
  {
    std::ofstream out(path);
    out << R"({"extends": "no-such-stack", "name": "variant-stack"})";
  }
  try {
    load_stack(path);
    FAIL() << "loaded a variant of a missing stack";
  } catch (const SpecError& e) {  // the line names the variant's file and field, and the name it gave
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.json_path(), "$.extends");
    EXPECT_NE(e.expected().find("\"no-such-stack\": unknown stack"), std::string::npos) << e.what();
  }
  {
    std::ofstream out(path);
    out << R"({"extends": 7, "name": "variant-stack"})";
  }
  try {
    load_stack(path);
    FAIL() << "loaded a variant naming no stack";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find("$.extends"), std::string::npos) << e.what();
  }
  // Two variants that extend each other: refused, not followed for ever.
  const std::string other = ::testing::TempDir() + "/variant-other.json";
  {
    std::ofstream(path) << R"({"extends": ")" << other << R"(", "name": "variant-stack"})";
    std::ofstream(other) << R"({"extends": ")" << path << R"(", "name": "variant-other"})";
  }
  try {
    load_stack(path);
    FAIL() << "followed a cycle of extends";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("not a cycle"), std::string::npos) << e.what();
  }
}

// Megatron-Bridge's MoE recipes dispatch through DeepEP / HybridEP; the field
// is optional (a plain all-to-all) and takes two words.
TEST(StackLoad, ExpertDispatchIsOptional) {
  EXPECT_TRUE(from(shipped_stack("nemo")).communication.dispatch_once_per_instance);
  EXPECT_FALSE(from(shipped_stack("megatron-lm")).communication.dispatch_once_per_instance);
  json j = shipped_stack("nemo");
  j["expert_dispatch"]["value"] = "deepep";
  expect_stack_error([&] { from(j); }, "$.expert_dispatch.value", "once-per-instance");
}

// Megatron-Core's EP all-to-all overlap: a share of the all-to-all time, in
// [0, 1], absent (0) in every stack but the recipe that sets it.
TEST(StackLoad, EpAllToAllOverlapIsAShare) {
  EXPECT_DOUBLE_EQ(load_stack("nemo-alltoall-ep-overlap").communication.ep_a2a_hidden_share, 0.3655);
  EXPECT_DOUBLE_EQ(from(shipped_stack("nemo")).communication.ep_a2a_hidden_share, 0.0);
  json j = shipped_stack("nemo");
  j["ep_a2a_overlap"] = {{"value", 1.5}, {"source", "test"}};
  expect_stack_error([&] { from(j); }, "$.ep_a2a_overlap.value", "at most 1");
  j["ep_a2a_overlap"]["value"] = -0.1;
  expect_stack_error([&] { from(j); }, "$.ep_a2a_overlap.value", ">= 0");
}

TEST(StackLoad, NegativeAmount) {
  json j = shipped_stack("megatron-lm");
  j["dp_bucket_mb"]["value"] = -25;
  expect_stack_error([&] { from(j); }, "$.dp_bucket_mb.value", ">= 0");
}

TEST(StackLoad, MissingField) {
  json j = shipped_stack("megatron-lm");
  j.erase("overlap_dp_grad_reduce");
  expect_stack_error([&] { from(j); }, "$.overlap_dp_grad_reduce", "missing field");

  j = shipped_stack("megatron-lm");
  j.erase("host_overhead_s");
  expect_stack_error([&] { from(j); }, "$.host_overhead_s", "missing field");

  j = shipped_stack("megatron-lm");
  j["selective_recompute"].erase("value");
  expect_stack_error([&] { from(j); }, "$.selective_recompute.value", "missing field");

  j = shipped_stack("megatron-lm");
  j.erase("name");
  expect_stack_error([&] { from(j); }, "$.name", "missing field");
}

TEST(StackLoad, RecomputeModesMayNotBeEmpty) {
  json j = shipped_stack("megatron-lm");
  j["recompute_modes"]["value"] = json::array();
  expect_stack_error([&] { from(j); }, "$.recompute_modes.value", "at least one recompute mode");
}

// ---- stack_refusal -------------------------------------------------------------

TEST(StackRefusal, ZeroStageNotOffered) {
  const Stack s = load_stack("megatron-deepspeed");  // zero_stages [1]
  Plan p;
  p.zero = 3;
  EXPECT_EQ(stack_refusal(s, p), "ZeRO stage 3 is not offered by megatron-deepspeed");
  p.zero = 0;
  EXPECT_EQ(stack_refusal(s, p), "ZeRO stage 0 is not offered by megatron-deepspeed");
  p.zero = 1;
  EXPECT_EQ(stack_refusal(s, p), "");
}

TEST(StackRefusal, InterleavedScheduleNotOffered) {
  const Stack s = load_stack("megatron-deepspeed");  // pipeline_schedules [1f1b]
  Plan p;
  p.zero = 1;
  p.pp = 4;
  p.virtual_stages = 2;
  const std::string why = stack_refusal(s, p);
  EXPECT_NE(why.find("interleaved"), std::string::npos) << why;
  EXPECT_NE(why.find("megatron-deepspeed"), std::string::npos) << why;
  p.virtual_stages = 1;  // plain 1F1B is offered
  EXPECT_EQ(stack_refusal(s, p), "");
}

// Megatron-Core offers edge slots from 0.11 (NVIDIA/Megatron-LM ef490839), so
// the megatron-lm stack (core_r0.13.0) runs them and NeMo 24.07 (core_r0.8.0)
// does not; the microsoft fork hard-codes partition_method='type:transformer';
// torchtitan takes any split by layer name (pipeline_parallel_split_points,
// config_manager.py@9dec370a:302-315).
TEST(StackRefusal, EdgeLayerSlotsWhereTheStackOffersThem) {
  Plan p;
  p.zero = 1;
  p.pp = 8;
  p.edge_layer_slots = true;
  EXPECT_EQ(stack_refusal(load_stack("megatron-lm"), p), "");
  EXPECT_EQ(stack_refusal(load_stack("nemo"), p), "");
  EXPECT_EQ(stack_refusal(load_stack("megatron-deepspeed"), p), "");
  Plan fsdp = p;
  fsdp.zero = 3;  // torchtitan shards with FSDP2
  EXPECT_EQ(stack_refusal(load_stack("torchtitan"), fsdp), "");
  for (const char* name : {"nemo-24.07", "megatron-deepspeed-ms"}) {
    Plan q = p;
    q.zero = load_stack(name).capabilities.zero_stages.front();
    const std::string why = stack_refusal(load_stack(name), q);
    EXPECT_NE(why.find("edge layer slots"), std::string::npos) << name << ": " << why;
  }
  p.pp = 1;  // no pipeline: the slots are inert
  EXPECT_EQ(stack_refusal(load_stack("nemo-24.07"), p), "");
}

TEST(StackRefusal, PipelineNotOfferedAtAll) {
  const Stack s = load_stack("composer-fsdp");  // pipeline_schedules []
  Plan p;
  p.pp = 2;
  const std::string why = stack_refusal(s, p);
  EXPECT_NE(why.find("pipeline parallelism"), std::string::npos) << why;
  EXPECT_NE(why.find("composer-fsdp"), std::string::npos) << why;
}

TEST(StackRefusal, SequenceParallelNotOffered) {
  const Stack s = load_stack("composer-fsdp");  // sequence_parallel false
  Plan p;
  p.tp = 2;
  p.sp = true;
  const std::string why = stack_refusal(s, p);
  EXPECT_NE(why.find("sequence parallelism"), std::string::npos) << why;
  EXPECT_NE(why.find("composer-fsdp"), std::string::npos) << why;
  p.sp = false;
  EXPECT_EQ(stack_refusal(s, p), "");
}

TEST(StackRefusal, AsyncTpNotOffered) {
  const Stack s = load_stack("neuronx-distributed");  // overlap_tp_comm false
  Plan p;
  p.tp = 8;
  p.sp = true;
  p.overlap_tp_comm = true;
  const std::string why = stack_refusal(s, p);
  EXPECT_NE(why.find("TP communication overlap"), std::string::npos) << why;
  EXPECT_NE(why.find("neuronx-distributed"), std::string::npos) << why;
  p.overlap_tp_comm = false;
  EXPECT_EQ(stack_refusal(s, p), "");
}

TEST(StackRefusal, RecomputeModeNotOffered) {
  const Stack s = load_stack("composer-fsdp");  // recompute_modes [none, full]
  Plan p;
  p.recompute = Recompute::selective;
  const std::string why = stack_refusal(s, p);
  EXPECT_NE(why.find("selective"), std::string::npos) << why;
  EXPECT_NE(why.find("composer-fsdp"), std::string::npos) << why;
  p.recompute = Recompute::full;
  EXPECT_EQ(stack_refusal(s, p), "");
}

TEST(StackRefusal, OfferedPlanIsNotRefused) {
  // Megatron-LM offers every feature at once: TP 8 with SP and async TP,
  // interleaved PP 4 x 2, distributed optimizer, selective recompute.
  const Stack s = load_stack("megatron-lm");
  Plan p;
  p.tp = 8;
  p.sp = true;
  p.overlap_tp_comm = true;
  p.pp = 4;
  p.virtual_stages = 2;
  p.zero = 1;
  p.recompute = Recompute::selective;
  EXPECT_EQ(stack_refusal(s, p), "");
  // The same plan is refused by a stack without async TP, naming it.
  const std::string why = stack_refusal(load_stack("megatron-lm-2021"), p);
  EXPECT_NE(why.find("megatron-lm-2021"), std::string::npos) << why;
}

// ---- release lines (--stack LINE@RELEASE) ------------------------------------

// A bound holds every release below it in depth: "2.24" holds 2.24.1, "2.20"
// starts at 2.20.0; numbers compare as numbers (2.9 < 2.10).
TEST(StackReleases, RangesHoldReleasesToTheirOwnDepth) {
  const ReleaseRange r{"line", "Neuron SDK", "2.20", "2.24"};
  EXPECT_TRUE(release_holds(r, "2.20"));
  EXPECT_TRUE(release_holds(r, "2.20.0"));
  EXPECT_TRUE(release_holds(r, "2.24.1"));
  EXPECT_FALSE(release_holds(r, "2.19.9"));
  EXPECT_FALSE(release_holds(r, "2.25"));
  EXPECT_FALSE(release_holds(r, "2.3"));
  EXPECT_FALSE(release_holds(r, "x"));
  EXPECT_TRUE(release_holds({"l", "s", "2.5", "2.28"}, "2.10"));
}

// NeuronX Distributed's two shipped generations: the release picks the file,
// and a release outside both is refused naming the file, the field and the ranges.
TEST(StackReleases, ALinesReleasePicksItsStackOrIsRefused) {
  EXPECT_EQ(load_stack("neuronx-distributed@2.18").name, "neuronx-distributed");
  EXPECT_EQ(load_stack("neuronx-distributed@2.16.0").name, "neuronx-distributed");  // the table's 2.15-2.17 rows
  EXPECT_EQ(load_stack("neuronx-distributed@2.21.0").name, "neuronx-distributed-2.20");
  EXPECT_EQ(load_stack("megatron-deepspeed-habana@1.18.0").name, "megatron-deepspeed-habana");
  test_support::expect_spec_error([] { load_stack("neuronx-distributed@2.30"); }, "$.releases",
                                  "2.15-2.19 (neuronx-distributed), 2.20-2.24 (neuronx-distributed-2.20)");
  test_support::expect_spec_error([] { load_stack("neuronx-distributed@two"); }, "", "a release number after '@'");
  test_support::expect_spec_error([] { load_stack("neuronx-distributd@2.21"); }, "", "did you mean neuronx-distributed?");
  test_support::expect_spec_error([] { load_stack("neuronx-distributd@2.21"); }, "", "no stack is named neuronx-distributd");
  // A shipped stack outside every line: the refusal says so rather than "no stack".
  test_support::expect_spec_error([] { load_stack("optimum-habana@1.18"); }, "", "stack optimum-habana lists no releases");
}

// A stack that extends one with a release range is no release of that line:
// the range names its own file alone.
TEST(StackReleases, ARangeIsNotInherited) {
  EXPECT_FALSE(load_stack("neuronx-distributed-2.20").releases.line.empty());
  EXPECT_TRUE(load_stack("neuronx-distributed-2.20-unfused-attn").releases.line.empty());
  EXPECT_FALSE(load_stack("torch-neuronx-hf-2.20").releases.line.empty());
  EXPECT_TRUE(load_stack("nemo-alltoall").releases.line.empty());
}

// The hf-bert tutorial's three generations, each a release of line
// torch-neuronx-hf: 2.20 changed which parameter buffers torch-neuronx marks
// static (aws-neuron/aws-neuron-sdk@72825d50 release-notes/torch/torch-neuronx/index.rst:45-48),
// 2.21 emptied that list and the script moved to model.to(torch.bfloat16)
// (aws-neuron/aws-neuron-samples@b14af0b).
TEST(StackReleases, HfBertGenerationsAreReleasesOfOneLine) {
  EXPECT_EQ(load_stack("torch-neuronx-hf@2.5").name, "torch-neuronx-hf");
  EXPECT_EQ(load_stack("torch-neuronx-hf@2.18.0").name, "torch-neuronx-hf");
  EXPECT_EQ(load_stack("torch-neuronx-hf@2.20.0").name, "torch-neuronx-hf-2.20");
  EXPECT_EQ(load_stack("torch-neuronx-hf@2.21").name, "torch-neuronx-hf-2.21");
  EXPECT_EQ(load_stack("torch-neuronx-hf@2.28.0").name, "torch-neuronx-hf-2.21");
  // The generations differ in what is fitted, not in what the stack offers.
  EXPECT_EQ(load_stack("torch-neuronx-hf-2.21").capabilities.zero_stages,
            load_stack("torch-neuronx-hf").capabilities.zero_stages);
  EXPECT_EQ(load_stack("torch-neuronx-hf-2.21").bases,
            (std::vector<std::string>{"torch-neuronx-hf-2.20", "torch-neuronx-hf", "neuronx-distributed"}));
  test_support::expect_spec_error([] { load_stack("torch-neuronx-hf@2.4"); }, "$.releases",
                                  "2.5-2.19 (torch-neuronx-hf), 2.20-2.20 (torch-neuronx-hf-2.20), 2.21-2.28 "
                                  "(torch-neuronx-hf-2.21)");
}

TEST(StackReleases, ABadRangeNamesTheField) {
  json j = shipped_stack("neuronx-distributed");
  j["releases"]["value"]["to"] = "2.1";  // before from
  expect_stack_error([&] { from(j); }, "$.releases.value.to", "at or after from");
  j["releases"]["value"]["to"] = "2.x";
  expect_stack_error([&] { from(j); }, "$.releases.value.to", "dotted version");
  j["releases"]["value"]["line"] = "a@b";
  expect_stack_error([&] { from(j); }, "$.releases.value.line", "without '@'");
}

// The overlap keys' older spelling (before one spelling per idea) still loads,
// in a variant file too; a file giving both spellings of one key is refused.
TEST(StackLoad, OlderOverlapKeysStillLoad) {
  const std::string path = ::testing::TempDir() + "/older-keys-stack.json";
  {
    std::ofstream out(path);
    out << R"({"extends": "megatron-lm", "name": "older-keys-stack",
              "tp_comm_overlap": {"value": false, "source": "assumption: test"},
              "dp_overlap_grad_reduce": {"value": false, "source": "assumption: test"}})";
  }
  ASSERT_TRUE(load_stack("megatron-lm").capabilities.overlap_tp_comm);
  const Stack older = load_stack(path);
  EXPECT_FALSE(older.capabilities.overlap_tp_comm);
  EXPECT_FALSE(older.communication.overlap_dp_grad_reduce);
  {
    std::ofstream out(path);
    out << R"({"extends": "megatron-lm", "name": "older-keys-stack",
              "tp_comm_overlap": {"value": false, "source": "assumption: test"},
              "overlap_tp_comm": {"value": true, "source": "assumption: test"}})";
  }
  try {
    load_stack(path);
    FAIL() << "loaded a file giving one key under both names";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find("$.tp_comm_overlap"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not both"), std::string::npos) << e.what();
  }
}

// DeepSpeed-Ulysses in the microsoft fork: the all-to-all exchange, flash attention (the fork's unfused
// path does not run under it), no selective recompute; the pipeline-engine stack offers no CP.
TEST(StackLoad, MicrosoftForkUlyssesIsAllToAllContextParallel) {
  const Stack s = load_stack("megatron-deepspeed-ms-nopipe-ulysses"), nopipe = load_stack("megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(s.communication.context_parallel, ContextParallel::all_to_all);
  EXPECT_STREQ(to_string(s.communication.context_parallel), "all-to-all");
  EXPECT_EQ(s.compute.attention, AttentionKernel::flash);
  EXPECT_FALSE(s.offers_recompute(Recompute::selective));
  EXPECT_TRUE(s.offers_recompute(Recompute::full));
  // The optimizer and DP reduction are megatron-deepspeed-ms-nopipe's.
  EXPECT_EQ(s.capabilities.zero_stages, nopipe.capabilities.zero_stages);
  EXPECT_DOUBLE_EQ(s.communication.dp_bucket_bytes, nopipe.communication.dp_bucket_bytes);
  EXPECT_EQ(nopipe.communication.context_parallel, ContextParallel::none);
  EXPECT_EQ(load_stack("megatron-deepspeed-ms").communication.context_parallel, ContextParallel::none);
  Plan p;
  p.zero = 1;
  p.cp = 4;
  EXPECT_EQ(stack_refusal(s, p), "");
  EXPECT_NE(stack_refusal(nopipe, p).find("context parallelism (CP 4) is not offered"), std::string::npos);
}

// A loop that blocks on the device every micro-step (HabanaAI/Model-References@6450b9cb
// PyTorch/nlp/bert/pretraining/run_pretraining.py:731-732, 779) is a flag of its
// stack; the stack it extends does not wait, and a value that is no flag is refused.
TEST(StackLoad, HostWaitingEveryMicroBatchIsAFlag) {
  const Stack pytorch = load_stack("pytorch-habana-0.13");
  EXPECT_TRUE(pytorch.compute.host_waits_every_micro_batch);
  EXPECT_TRUE(pytorch.compute.lazy_tracing);
  EXPECT_EQ(pytorch.capabilities.zero_stages, std::vector<int>{0});
  EXPECT_FALSE(load_stack("deepspeed-habana").compute.host_waits_every_micro_batch);
  json j = shipped_stack("deepspeed-habana");
  j["host_waits_every_micro_batch"] = {{"value", "yes"}, {"source", "test"}};
  expect_stack_error([&] { from(j); }, "$.host_waits_every_micro_batch.value", "true or false");
}

// Full recompute of the first N layers of each chunk is Megatron-Core's block
// method: the Megatron-Core stacks (and those extending them) run it, NxD and
// torchtitan do not, and their refusal names the stack.
TEST(Stack, BlockRecomputeIsOfferedWhereMegatronCoreRunsIt) {
  Plan p;
  p.zero = 1;
  p.recompute = Recompute::full;
  p.recompute_layers = 5;
  for (const char* name : {"megatron-lm", "megatron-lm-bf16-grads", "nemo", "nemo-24.07", "megatron-lm-unfused-attn"})
    EXPECT_TRUE(stack_refusal(load_stack(name), p).empty()) << name;
  for (const char* name : {"neuronx-distributed", "torchtitan", "megatron-deepspeed", "optimum-habana"}) {
    const Stack s = load_stack(name);
    p.zero = s.capabilities.zero_stages.front();  // a stage it offers: the refusal is the recompute's
    const std::string why = stack_refusal(s, p);
    EXPECT_NE(why.find("first 5 layers of each chunk"), std::string::npos) << name << ": " << why;
    EXPECT_NE(why.find(name), std::string::npos) << why;
  }
  p.recompute_layers = 0;  // every layer: offered wherever full recompute is
  p.zero = 1;
  EXPECT_TRUE(stack_refusal(load_stack("neuronx-distributed"), p).empty());
}
