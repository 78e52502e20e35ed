// A launcher config's own statement of FP8 parameters is priced (issues 38.4, 40.1):
// NVIDIA's Llama 3 8B FP8 example passes --fp8-param-gather, the megatron-lm stacks
// price BF16 weights beside cached FP8 copies; the scenario read from the file prices
// FP8 parameters instead, and writes them back.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/estimate.h"
#include "app/launch.h"
#include "export/launch_config.h"
#include "spec/error.h"

namespace trainplan::app {
namespace {

namespace fs = std::filesystem;

const std::string kNvidiaLlama3 =
    std::string(TRAINPLAN_SOURCE_DIR) + "/tests/export/fixtures/clients/megatron-lm_train_llama3_8b_h100_fp8.sh";

bool any_has(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

// Llama 3 8B as the script builds it: per layer 4096 x (4096 + 2 x 1024) QKV, 4096 x 4096
// output, 3 x 4096 x 14336 SwiGLU = 218,103,808 GEMM parameters, and (no --normalization:
// Megatron's LayerNorm) two norms of weight and bias, 16,384, which cost's layer count
// carries with them. TP 1, PP 1, ZeRO 1: one device holds all 32 layers unsharded, so the
// weights line drops by 2 bytes (BF16 weight gone; the FP8 data and transpose stay) x
// 32 x 218,120,192 = 13,959,692,288 bytes, and nothing else the optimizer keeps moves.
TEST(Launch, FileStatedFp8ParametersArePricedOverTheStacks) {
  ScenarioOptions s;
  s.hardware = "p5.48xlarge";
  PlanOptions p;
  apply_launch_config(kNvidiaLlama3, {"--hardware"}, s, p);
  ASSERT_EQ(s.stack, "megatron-lm-bf16-grads");
  ASSERT_TRUE(s.fp8_param_gather.has_value());
  EXPECT_TRUE(*s.fp8_param_gather);
  EXPECT_TRUE(any_has(s.config_notes, "--fp8-param-gather: priced as the file runs it"));
  EXPECT_FALSE(any_has(s.config_notes, "2 bytes per layer parameter more"));

  const EstimateOutcome with = estimate_plan(s, p, cost::PipelineMethod::dag, "");
  ScenarioOptions stack_only = s;
  stack_only.fp8_param_gather.reset();
  const EstimateOutcome without = estimate_plan(stack_only, p, cost::PipelineMethod::dag, "");
  ASSERT_TRUE(with.refusal.empty() && without.refusal.empty()) << with.refusal << without.refusal;
  EXPECT_TRUE(with.scenario.stack.memory.fp8_param_gather);
  EXPECT_FALSE(without.scenario.stack.memory.fp8_param_gather);
  EXPECT_EQ(with.scenario.model.layer_parameters(), 218'103'808 + 16'384);
  const cost::MemoryBreakdown& a = with.evaluation.estimate.memory;
  const cost::MemoryBreakdown& b = without.evaluation.estimate.memory;
  EXPECT_DOUBLE_EQ(b.weights_bytes - a.weights_bytes, 13'959'692'288.0);
  EXPECT_DOUBLE_EQ(a.master_weights_bytes, b.master_weights_bytes);  // Megatron's FP32 masters either way
  EXPECT_DOUBLE_EQ(a.gradients_bytes, b.gradients_bytes);
  EXPECT_DOUBLE_EQ(a.optimizer_states_bytes, b.optimizer_states_bytes);
  EXPECT_DOUBLE_EQ(a.activations_bytes, b.activations_bytes);

  // Written back: the job the export formats write keeps --fp8-param-gather.
  const exporting::LaunchJob job = launch_job(with.scenario, with.evaluation.plan);
  EXPECT_TRUE(job.fp8_param_gather);
  const std::string script = exporting::launch_files(exporting::LaunchFormat::megatron, job, "x.sh").front().text;
  EXPECT_NE(script.find("--fp8-param-gather"), std::string::npos);
}

// The same file's job at ZeRO 0, as `search --like` offers it: Megatron-LM refuses
// --fp8-param-gather without the distributed optimizer or FSDP (NVIDIA/Megatron-LM@73a28a10
// megatron/training/arguments.py:642-644; stacks/megatron-lm.json by_zero_stage "0"), so it is
// priced with BF16 weights and their cached FP8 copies, the weights line of the stack's own
// pricing, and the job written back has no --fp8-param-gather.
TEST(Launch, FileStatedFp8ParametersNeedTheShardedOptimizer) {
  ScenarioOptions s;
  s.hardware = "p5.48xlarge";
  PlanOptions p;
  apply_launch_config(kNvidiaLlama3, {"--hardware"}, s, p);
  ASSERT_TRUE(s.fp8_param_gather.value_or(false));
  p.zero = 0;
  ScenarioOptions stack_only = s;
  stack_only.fp8_param_gather.reset();
  const EstimateOutcome with = estimate_plan(s, p, cost::PipelineMethod::dag, "");
  const EstimateOutcome without = estimate_plan(stack_only, p, cost::PipelineMethod::dag, "");
  ASSERT_EQ(with.evaluation.plan.zero, 0);
  EXPECT_DOUBLE_EQ(with.evaluation.estimate.memory.weights_bytes, without.evaluation.estimate.memory.weights_bytes);
  EXPECT_DOUBLE_EQ(with.evaluation.estimate.seqs_per_s, without.evaluation.estimate.seqs_per_s);
  const exporting::LaunchJob job = launch_job(with.scenario, with.evaluation.plan);
  EXPECT_FALSE(job.fp8_param_gather);
}

// A stack keeping Apex's FP32 remainders (nemo-24.07) keeps whole FP32 masters under FP8
// parameters (NeMo@e938df32 megatron_base_model.py:804-805): 2 bytes per parameter more,
// over the data-parallel shards; the stack's own FP8 parameters are switched off the same way.
TEST(Launch, Fp8ParametersOverRemaindersKeepWholeMasters) {
  ScenarioOptions s;
  s.model = "llama3-8b";
  s.hardware = "p5.48xlarge";
  s.stack = "nemo-24.07";
  s.precision = "fp8";
  s.seq_len = 4096;
  s.global_batch = 256;
  PlanOptions p;
  p.instances = 4;
  p.tp = 2;
  p.sp = true;
  p.recompute = "selective";
  const EstimateOutcome bf16_weights = estimate_plan(s, p, cost::PipelineMethod::dag, "");
  s.fp8_param_gather = true;
  const EstimateOutcome fp8_params = estimate_plan(s, p, cost::PipelineMethod::dag, "");
  ASSERT_TRUE(bf16_weights.refusal.empty() && fp8_params.refusal.empty());
  EXPECT_EQ(fp8_params.scenario.stack.memory.master_weight_bytes, 4);
  EXPECT_DOUBLE_EQ(fp8_params.evaluation.estimate.memory.master_weights_bytes,
                   2 * bf16_weights.evaluation.estimate.memory.master_weights_bytes);  // 4 bytes a parameter, not 2
  s.stack = "nemo";
  s.fp8_param_gather = false;
  EXPECT_FALSE(load_scenario(s, "p5.48xlarge").stack.memory.fp8_param_gather);
  s.fp8_param_gather.reset();
  EXPECT_TRUE(load_scenario(s, "p5.48xlarge").stack.memory.fp8_param_gather);
}

// A NeMo file's optimizer keeps the states it runs, priced over the stack's (issue 40.1: a run
// refused for states it does not keep): distributed_fused_adam with optim.dtype bf16 (as
// NeMo-Framework-Launcher@8325688d nemotron_340b.yaml:162 runs it) keeps BF16 Adam moments and no
// master copy (NeMo@e938df32 megatron_base_model.py:790-812). Nemotron-3 8B at TP 2 on one
// DGX-H100, ZeRO 1 over DP 4, written under the nemo stack (FP32 masters and moments:
// mcore_distributed_optim), then read with the dtype set: the moments halve (8 -> 4 bytes a
// parameter) and the masters (4 bytes) go; weights, gradients and activations stay. The job
// written back keeps the optimizer.
TEST(Launch, FileStatedOptimizerStatesArePricedOverTheStacks) {
  ScenarioOptions s;
  s.model = "nemotron3-8b";
  s.hardware = "dgx-h100";
  s.stack = "nemo";
  s.seq_len = 4096;
  s.global_batch = 32;
  PlanOptions p;
  p.instances = 1;
  p.tp = 2;
  p.sp = true;
  p.zero = 1;
  p.recompute = "none";
  const EstimateOutcome planned = estimate_plan(s, p, cost::PipelineMethod::dag, "");
  ASSERT_TRUE(planned.refusal.empty()) << planned.refusal;
  const fs::path path = fs::temp_directory_path() / "trainplan_launch_test_optimizer_states.yaml";
  const exporting::LaunchJob job = launch_job(planned.scenario, planned.evaluation.plan);
  const std::string text = exporting::launch_files(exporting::LaunchFormat::nemo, job, path.string()).front().text;
  ASSERT_NE(text.find("name: mcore_distributed_optim"), std::string::npos) << text;
  std::ofstream(path) << text;

  ScenarioOptions read_s = s;
  PlanOptions read_p;
  apply_launch_config(path.string(), {"--stack", "--hardware"}, read_s, read_p, LaunchUse::job,
                      {"model.optim.name=distributed_fused_adam", "+model.optim.dtype=bf16"});
  ASSERT_TRUE(read_s.optimizer_states.has_value());
  EXPECT_EQ(read_s.optimizer_states->moment_bytes, 4);
  EXPECT_EQ(read_s.optimizer_states->master_bytes, 0);
  EXPECT_TRUE(any_has(read_s.config_notes, "model.optim: priced as the file runs it, no master weights and BF16 Adam moments"));
  const EstimateOutcome bf16 = estimate_plan(read_s, read_p, cost::PipelineMethod::dag, "");
  ASSERT_TRUE(bf16.refusal.empty()) << bf16.refusal;
  ASSERT_EQ(bf16.evaluation.plan.zero, 1);
  const cost::MemoryBreakdown& a = bf16.evaluation.estimate.memory;
  const cost::MemoryBreakdown& b = planned.evaluation.estimate.memory;
  EXPECT_GT(b.master_weights_bytes, 0);
  EXPECT_DOUBLE_EQ(a.master_weights_bytes, 0);
  EXPECT_DOUBLE_EQ(a.optimizer_states_bytes, b.optimizer_states_bytes / 2);
  EXPECT_DOUBLE_EQ(a.weights_bytes, b.weights_bytes);
  EXPECT_DOUBLE_EQ(a.gradients_bytes, b.gradients_bytes);
  EXPECT_DOUBLE_EQ(a.activations_bytes, b.activations_bytes);
  const exporting::LaunchJob back = launch_job(bf16.scenario, bf16.evaluation.plan);
  EXPECT_TRUE(back.optimizer == spec::kBf16Optimizer);
  EXPECT_NE(exporting::launch_files(exporting::LaunchFormat::nemo, back, path.string()).front().text.find("+model.optim.dtype=bf16"),
            std::string::npos);

  // The same file with FP32 states keeps its masters as remainders (store_param_remainders, :808-810): 2 bytes, not 4.
  read_s = s;
  apply_launch_config(path.string(), {"--stack", "--hardware"}, read_s, read_p, LaunchUse::job,
                      {"model.optim.name=distributed_fused_adam"});
  ASSERT_TRUE(read_s.optimizer_states.has_value());
  EXPECT_EQ(read_s.optimizer_states->moment_bytes, 8);
  EXPECT_EQ(read_s.optimizer_states->master_bytes, 2);
  fs::remove(path);
}

// The job written back says whether its EP all-to-alls were priced overlapped:
// under nemo-alltoall-ep-overlap at EP 8 without full recompute they were, and
// both GPU formats refuse (their clients lack the option); under full recompute
// Megatron-Core refuses the overlap, the plan is priced exposed and is written.
TEST(Launch, EpOverlapPricedOnlyWhereTheClientRunsIt) {
  ScenarioOptions s;
  s.model = "mixtral-8x7b";
  s.hardware = "dgx-h100";
  s.stack = "nemo-alltoall-ep-overlap";
  s.seq_len = 4096;
  s.global_batch = 256;
  PlanOptions p;
  p.instances = 4;
  p.ep = 8;
  p.recompute = "selective";
  const EstimateOutcome overlapped = estimate_plan(s, p, cost::PipelineMethod::dag, "");
  ASSERT_TRUE(overlapped.refusal.empty()) << overlapped.refusal;
  const exporting::LaunchJob job = launch_job(overlapped.scenario, overlapped.evaluation.plan);
  EXPECT_TRUE(job.ep_a2a_overlap);
  EXPECT_THROW(exporting::launch_files(exporting::LaunchFormat::megatron, job, "x.sh"), spec::SpecError);
  p.recompute = "full";
  const EstimateOutcome full = estimate_plan(s, p, cost::PipelineMethod::dag, "");
  ASSERT_TRUE(full.refusal.empty()) << full.refusal;
  const exporting::LaunchJob exposed = launch_job(full.scenario, full.evaluation.plan);
  EXPECT_FALSE(exposed.ep_a2a_overlap);
  EXPECT_NE(exporting::launch_files(exporting::LaunchFormat::megatron, exposed, "x.sh").front().text.find("--expert-model-parallel-size 8"),
            std::string::npos);
}

}  // namespace
}  // namespace trainplan::app
