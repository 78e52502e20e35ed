// The habana format (src/export/habana_config.h): HL_* settings for Intel Gaudi's
// Megatron-DeepSpeed run_llama.sh (HabanaAI/Megatron-DeepSpeed@891d6db, the 1.19.0
// branch). Written from a job, read back to the same plan; every name it writes is
// one run_llama.sh reads; what the script cannot run, or trainplan does not price,
// is refused naming the setting; its README's recipes read as the script runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "../spec/expect_spec_error.h"
#include "export/habana_config.h"
#include "export/launch_config.h"
#include "export/shell_args.h"
#include "spec/load.h"
#include "spec/text_file.h"

namespace trainplan::exporting {
namespace {

using spec::test_support::expect_spec_error;
namespace fs = std::filesystem;

// Llama 2 13B on 2 x HLS-Gaudi2 as the README's FP8 recipe runs it: TP 2, PP 2, DP 4,
// micro-batch 2, ZeRO-1 with BF16 accumulation (stack megatron-deepspeed-habana).
LaunchJob llama2_13b_on_gaudi2() {
  LaunchJob job;
  job.model = spec::load_model("llama2-13b");
  job.model_name = "llama2-13b";
  job.hardware_name = "hls-gaudi2";
  job.hardware_family = "gaudi2";
  job.stack_name = "megatron-deepspeed-habana";
  job.instances = job.plan.instances = 2;
  job.devices_per_instance = 8;
  job.plan.tp = 2;
  job.plan.pp = 2;
  job.plan.sp = true;
  job.plan.micro_batch = 2;
  job.plan.zero = 1;
  job.plan.recompute = spec::Recompute::selective;
  job.workload.seq_len = 4096;
  job.workload.global_batch_seqs = 1024;
  job.workload.precision = spec::Precision::fp8;
  job.bf16_grad_reduce = true;
  return job;
}

std::string write_habana_to(const fs::path& path, const LaunchJob& job) {
  const std::string text = launch_files(LaunchFormat::habana, job, path.string()).front().text;
  spec::write_text_file(path.string(), text, "test");
  return text;
}

// The settings `export NAME=value` lines give, in order.
std::vector<std::pair<std::string, std::string>> hl_exports(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("export ", 0) == 0) {
      const std::size_t eq = line.find('=');
      out.push_back({line.substr(7, eq - 7), line.substr(eq + 1)});
    }
  return out;
}

std::string hl_setting(const std::string& text, const std::string& name) {
  for (const auto& [n, v] : hl_exports(text))
    if (n == name) return v;
  return "(absent)";
}

TEST(HabanaConfig, WritesTheRecipeRunLlamaReads) {
  const std::string text = launch_files(LaunchFormat::habana, llama2_13b_on_gaudi2(), "x.sh").front().text;
  // The README's 'Run LLaMA 2 13B on 16 HPUs with FP8 precision' settings (README.md@891d6db:296-315).
  EXPECT_EQ(hl_setting(text, "HL_LLAMA_VER"), "2");
  EXPECT_EQ(hl_setting(text, "HL_LLAMA_MODEL_SIZE"), "13");
  EXPECT_EQ(hl_setting(text, "HL_NUM_NODES"), "2");
  EXPECT_EQ(hl_setting(text, "HL_DP"), "4");
  EXPECT_EQ(hl_setting(text, "HL_TP"), "2");
  EXPECT_EQ(hl_setting(text, "HL_PP"), "2");
  EXPECT_EQ(hl_setting(text, "HL_MICRO_BATCH"), "2");
  EXPECT_EQ(hl_setting(text, "HL_SEQ_LEN"), "4096");
  EXPECT_EQ(hl_setting(text, "HL_ZERO_STAGE"), "1");
  EXPECT_EQ(hl_setting(text, "HL_GRAD_ACCUM_DTYPE"), "bf16");
  EXPECT_EQ(hl_setting(text, "HL_CKP_ACT"), "2");
  EXPECT_EQ(hl_setting(text, "HL_USE_TRANSFORMER_ENGINE"), "1");
  EXPECT_EQ(hl_setting(text, "HL_USE_CACHE_FP8_WEIGHT"), "1");
  EXPECT_EQ(hl_setting(text, "HL_SEQ_PARALLEL"), "1");
  EXPECT_EQ(hl_setting(text, "HL_NUM_LAYERS"), "(absent)");  // the table's 40
  EXPECT_NE(text.find("\n\"$MEGATRON_DEEPSPEED_ROOT\"/scripts/run_llama.sh\n"), std::string::npos);
  EXPECT_NE(text.find("HL_HOSTSFILE"), std::string::npos);  // two nodes: the user's host list

  // The BF16 optimizer at stage 0 (stack megatron-deepspeed-habana-bf16-optimizer, the Llama 2
  // 70B FP8 recipe) accumulates in FP32: no HL_GRAD_ACCUM_DTYPE.
  LaunchJob fp32_accumulation = llama2_13b_on_gaudi2();
  fp32_accumulation.stack_name = "megatron-deepspeed-habana-bf16-optimizer";
  fp32_accumulation.bf16_grad_reduce = false;
  const std::string stage0 = launch_files(LaunchFormat::habana, fp32_accumulation, "x.sh").front().text;
  EXPECT_EQ(hl_setting(stage0, "HL_ZERO_STAGE"), "0");
  EXPECT_EQ(hl_setting(stage0, "HL_GRAD_ACCUM_DTYPE"), "(absent)");
}

// Every name written is one run_llama.sh reads: HabanaAI/Megatron-DeepSpeed@891d6db
// scripts/run_llama.sh, every HL_* it mentions (grep -o 'HL_[A-Z0-9_]*').
TEST(HabanaConfig, EverySettingWrittenIsOneRunLlamaReads) {
  const std::set<std::string> kRunLlama = {
      "HL_BATCH_SCHED_SAMPLES", "HL_CHECKPOINTS_DIR", "HL_CHECK_TP_NORM", "HL_CHECK_TP_NORM_TYPE", "HL_CKP_ACT",
      "HL_COMPILED_AUTOGRAD_FALLBACK_MODE", "HL_DATA_CACHE_DIR", "HL_DATA_DIR_ROOT", "HL_DATA_FILE_PREFIX",
      "HL_DEVICES_PER_NODE", "HL_DP", "HL_DROPOUT", "HL_END_CHECK_TP_NORM_ITER", "HL_EVAL_INTERVAL", "HL_EVAL_ITERS",
      "HL_EXIT_INTERVAL", "HL_FP8_AMAX_HISTORY_LEN", "HL_FP8_AMAX_RECOMPUTE_ALGO", "HL_FP8_AMAX_REDUCE", "HL_FP8_FORMAT",
      "HL_FP8_MANUAL_MODE", "HL_FP8_MARGIN", "HL_FP8_MEASURE_INTERVAL", "HL_GBS", "HL_GRAD_ACCUM_DTYPE", "HL_HOSTSFILE",
      "HL_IMMEDIATE_GRAD_UPDATE", "HL_KILL_SWITCH", "HL_LATEST_CHECKPOINT", "HL_LLAMA_MODEL_SIZE", "HL_LLAMA_VER",
      "HL_LOG_INTERVAL", "HL_MICRO_BATCH", "HL_NO_PIPELINE_PARALLEL", "HL_NUM_LAYERS", "HL_NUM_NODES", "HL_OPTIMIZER",
      "HL_POSITION_EMBEDDING_TYPE", "HL_PP", "HL_PROFILE", "HL_PROFILE_STEPS", "HL_QNPU_DIR", "HL_RESULTS_DIR",
      "HL_RESULTS_DIR_PREFIX", "HL_SAVE", "HL_SAVE_INTERVAL", "HL_SCHEDULER_BATCH_SIZE", "HL_SEQ_LEN", "HL_SEQ_PARALLEL",
      "HL_START_CHECK_TP_NORM_ITER", "HL_STOP_AFTER_NUM_SAMPLES", "HL_TENSORBOARD_DIR", "HL_TENSOR_LOGGER",
      "HL_TENSOR_LOGGER_DIR", "HL_TENSOR_LOGGER_END_ITER", "HL_TENSOR_LOGGER_START_ITER", "HL_TOKENIZER_MODEL",
      "HL_TOKENIZER_TYPE", "HL_TP", "HL_TRAIN_ITERS", "HL_TRUST_REMOTE_CODE", "HL_UNIV_CP", "HL_USE_CACHE_FP8_WEIGHT",
      "HL_USE_CACHE_FP8_WEIGHT_FWD", "HL_USE_FAST_SOFTMAX", "HL_USE_FUSED_RMSNORM", "HL_USE_FUSED_SDPA",
      "HL_USE_FUSED_SDPA_WITH_RECOMPUTE", "HL_USE_LAZY_MODE", "HL_USE_TORCH_COMPILE", "HL_USE_TORCH_COMPILED_AUTOGRAD",
      "HL_USE_TRANSFORMER_ENGINE", "HL_ZERO_STAGE"};
  LaunchJob job = llama2_13b_on_gaudi2();
  job.model = spec::load_model("llama3.1-8b");
  job.model.layers = 16;  // written as HL_NUM_LAYERS
  job.plan.pp = 2;
  const std::string text = launch_files(LaunchFormat::habana, job, "x.sh").front().text;
  EXPECT_EQ(hl_setting(text, "HL_NUM_LAYERS"), "16");
  EXPECT_EQ(hl_setting(text, "HL_LLAMA_VER"), "3.1");
  for (const auto& [name, value] : hl_exports(text)) EXPECT_TRUE(kRunLlama.count(name)) << name;
}

TEST(HabanaConfig, RoundTripKeepsThePlanAndTheText) {
  const fs::path dir = fs::temp_directory_path() / "trainplan_habana_round_trip";
  fs::create_directories(dir);
  for (const bool bf16_accumulation : {true, false}) {
    LaunchJob job = llama2_13b_on_gaudi2();
    if (!bf16_accumulation) {
      job.stack_name = "megatron-deepspeed-habana-bf16-optimizer";
      job.bf16_grad_reduce = false;
      job.workload.precision = spec::Precision::mixed_bf16;
      job.plan.recompute = spec::Recompute::full;
    }
    const fs::path path = dir / (bf16_accumulation ? "a.sh" : "b.sh");
    const std::string text = write_habana_to(path, job);
    const ReadLaunch read = read_launch_config(path.string());
    ASSERT_EQ(read.format, LaunchFormat::habana);
    const LaunchJob& back = read.job;
    EXPECT_EQ(back.model_name, "llama2-13b");
    EXPECT_EQ(back.stack_name, job.stack_name);
    EXPECT_EQ(back.instances, 2);
    EXPECT_EQ(back.plan.tp, 2);
    EXPECT_EQ(back.plan.pp, 2);
    EXPECT_EQ(back.plan.micro_batch, 2);
    EXPECT_EQ(back.plan.zero, 1);
    EXPECT_EQ(back.plan.sp, true);
    EXPECT_EQ(back.plan.recompute, job.plan.recompute);
    EXPECT_EQ(back.workload.precision, job.workload.precision);
    EXPECT_EQ(back.workload.global_batch_seqs, 1024);
    EXPECT_EQ(back.bf16_grad_reduce, bf16_accumulation);
    EXPECT_EQ(back.model.layers, 40);
    EXPECT_EQ(back.model.hidden, 5120);
    EXPECT_EQ(back.model.vocab, 32000);
    LaunchJob again = back;
    again.model = job.model;
    again.hardware_name = job.hardware_name;
    again.hardware_family = job.hardware_family;
    EXPECT_EQ(launch_files(LaunchFormat::habana, again, path.string()).front().text, text);
  }
}

TEST(HabanaConfig, WhatRunLlamaCannotRunIsRefusedNamingTheOption) {
  auto refused = [](LaunchJob job, const std::string& option, const std::string& why) {
    expect_spec_error([&] { launch_files(LaunchFormat::habana, job, "x.sh"); }, option, why, "habana format");
  };
  LaunchJob job = llama2_13b_on_gaudi2();
  job.model = spec::load_model("gpt3-175b");
  refused(job, "--model", "a Llama run_llama.sh builds");
  job = llama2_13b_on_gaudi2();
  job.model = spec::load_model("mixtral-8x7b");
  refused(job, "--model", "a Llama run_llama.sh builds");
  job = llama2_13b_on_gaudi2();
  job.model.rope_theta = 500000;  // Llama 2 13B's shape with Llama 3's base: no row of the table
  refused(job, "--model", "Llama 3.1 8B");
  job = llama2_13b_on_gaudi2();
  job.plan.virtual_stages = 2;
  refused(job, "--virtual-stages", "no interleaved schedule");
  job = llama2_13b_on_gaudi2();
  job.plan.cp = 2;
  refused(job, "--cp", "no context parallelism");
  job = llama2_13b_on_gaudi2();
  job.plan.zero = 2;
  refused(job, "--zero", "refuses ZeRO-2 and ZeRO-3");
  job.plan.zero = 0;
  refused(job, "--zero", "BF16 optimizer always shards");
  job = llama2_13b_on_gaudi2();
  job.plan.overlap_tp_comm = true;
  refused(job, "--overlap-tp", "no TP communication overlap");
  job = llama2_13b_on_gaudi2();
  job.workload.precision = spec::Precision::bf16_sr;
  refused(job, "--precision", "mixed-bf16 or fp8");
  job = llama2_13b_on_gaudi2();
  job.plan.edge_layer_slots = true;
  refused(job, "--edge-layer-slots", "type:transformer");
  job = llama2_13b_on_gaudi2();
  job.model.layers = 39;  // written as HL_NUM_LAYERS, which run_llama.sh wants divisible by PP
  refused(job, "--pp", "must be divisible by PP");
  job = llama2_13b_on_gaudi2();
  job.model.dropout = true;
  refused(job, "--model", "HL_DROPOUT");
  job = llama2_13b_on_gaudi2();
  job.model = spec::load_model("llama3.1-8b");
  job.plan.tp = 16;
  job.instances = job.plan.instances = 4;
  refused(job, "--tp", "8 KV heads");
  // Its launcher runs on Gaudi 2 and 3 only; Intel's fork is the habana format's, not the deepspeed format's.
  job = llama2_13b_on_gaudi2();
  job.hardware_name = "dl1.24xlarge";
  job.hardware_family = "gaudi1";
  refused(job, "--hardware", "is gaudi1 (no format trainplan writes runs there)");
  job.hardware_name = "p5.48xlarge";
  job.hardware_family = "h100";
  refused(job, "--hardware", "use format megatron, nemo, deepspeed");
  job = llama2_13b_on_gaudi2();
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, job, "x.sh"); }, "--hardware", "use format habana");
  job.hardware_name = "p5.48xlarge";
  job.hardware_family = "h100";
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, job, "x.sh"); }, "--stack", "use format habana");
}

fs::path habana_fixture(const std::string& name) { return fs::path(TRAINPLAN_SOURCE_DIR) / "tests/export/fixtures" / name; }

// The fork's README recipes (tests/export/fixtures/habana-*.sh, transcribed with their lines).
// HabanaAI/DeepSpeed's BF16 optimizer steps FP32 master partitions with FP32 moments
// (stacks/megatron-deepspeed-habana.json): a stack pricing BF16 moments without masters is refused.
TEST(HabanaConfig, OptimizerStatesTheForkDoesNotKeepAreRefused) {
  LaunchJob job = llama2_13b_on_gaudi2();
  job.optimizer = spec::kBf16Optimizer;
  expect_spec_error([&] { launch_files(LaunchFormat::habana, job, "x.sh"); }, "HL_ZERO_STAGE",
                    "Intel Gaudi DeepSpeed 1.19.0's BF16 optimizer keeps FP32 master weights and FP32 Adam moments",
                    "habana format");
}

TEST(HabanaConfig, ReadmeRecipesReadAsRunLlamaRunsThem) {
  {
    const ReadLaunch r = read_launch_config(habana_fixture("habana-llama2-13b-16hpu-fp8.sh").string());
    ASSERT_EQ(r.format, LaunchFormat::habana);
    EXPECT_EQ(r.job.instances, 2);
    EXPECT_EQ(r.job.plan.tp, 2);
    EXPECT_EQ(r.job.plan.pp, 2);
    EXPECT_EQ(r.job.plan.micro_batch, 2);
    EXPECT_EQ(r.job.workload.global_batch_seqs, 1024);  // Llama 2's HL_GBS default
    EXPECT_EQ(r.job.workload.precision, spec::Precision::fp8);
    EXPECT_EQ(r.job.plan.recompute, spec::Recompute::selective);
    EXPECT_EQ(r.job.stack_name, "megatron-deepspeed-habana");
    EXPECT_EQ(r.job.model.layers, 40);
  }
  {  // no HL_ZERO_STAGE: stage 0, DeepSpeed's BF16 optimizer with FP32 accumulation
    const ReadLaunch r = read_launch_config(habana_fixture("habana-llama2-70b-32hpu-fp8.sh").string());
    EXPECT_EQ(r.job.stack_name, "megatron-deepspeed-habana-bf16-optimizer");
    EXPECT_EQ(r.job.plan.zero, 1);
    EXPECT_FALSE(r.job.bf16_grad_reduce);
    EXPECT_EQ(r.job.plan.tp, 8);
    EXPECT_EQ(r.job.plan.pp, 4);
    EXPECT_EQ(r.job.plan.recompute, spec::Recompute::none);
    EXPECT_EQ(r.job.model.kv_heads, 8);
  }
  {  // the FP8 lines end in a blank line: shell variables that never reach run_llama.sh
    const ReadLaunch r = read_launch_config(habana_fixture("habana-llama3.1-8b-8hpu.sh").string());
    EXPECT_EQ(r.job.workload.precision, spec::Precision::mixed_bf16);
    EXPECT_EQ(r.job.workload.seq_len, 8192);  // Llama 3.1's defaults
    EXPECT_EQ(r.job.workload.global_batch_seqs, 2048);
    EXPECT_EQ(r.job.model.vocab, 128256);
    EXPECT_EQ(r.job.model.rope_theta, 500000);
    bool said = false;
    for (const std::string& n : r.job.notes) said = said || n.find("HL_USE_TRANSFORMER_ENGINE") != std::string::npos;
    EXPECT_TRUE(said);
  }
  {  // TP 1: the fork switches sequence parallelism off
    const ReadLaunch r = read_launch_config(habana_fixture("habana-llama2-7b-8hpu-fp8.sh").string());
    EXPECT_EQ(r.job.plan.tp, 1);
    EXPECT_FALSE(r.job.plan.sp);
    EXPECT_EQ(r.job.plan.micro_batch, 1);
  }
}

TEST(HabanaConfig, SettingsRunLlamaRefusesAreRefusedNamingThem) {
  const fs::path dir = fs::temp_directory_path() / "trainplan_habana_bad";
  fs::create_directories(dir);
  auto refused = [&](const std::string& settings, const std::string& name, const std::string& why) {
    const fs::path path = dir / "job.sh";
    spec::write_text_file(path.string(), settings + " scripts/run_llama.sh\n", "test");
    expect_spec_error([&] { read_launch_config(path.string()); }, name, why, path.string());
  };
  refused("HL_NUM_NODES=1 HL_DP=2 HL_TP=2 HL_PP=1", "HL_DP", "as run_llama.sh checks");
  refused("HL_DP=4 HL_TP=2 HL_PP=1 HL_ZERO_STAGE=2", "HL_ZERO_STAGE", "refuses ZeRO-2");
  refused("HL_CKP_ACT=4", "HL_CKP_ACT", "HL_CKP_ACT 4");
  refused("HL_LLAMA_VER=2 HL_LLAMA_MODEL_SIZE=30", "HL_LLAMA_MODEL_SIZE", "Llama 2 30B");
  refused("HL_DP=8 HL_TP=1 HL_PP=1 HL_NO_PIPELINE_PARALLEL=1", "HL_NO_PIPELINE_PARALLEL", "pipeline model");
  refused("HL_ZERO_STAGE=1 HL_GRAD_ACCUM_DTYPE=fp32", "HL_GRAD_ACCUM_DTYPE", "bf16 or unset at HL_ZERO_STAGE 1");
  refused("HL_NUM_LAYERS=31", "HL_NUM_LAYERS", "a multiple of HL_PP 2");
  refused("HL_TP=two", "HL_TP", "");
  refused("HL_POSITION_EMBEDDING_TYPE=alibi", "HL_POSITION_EMBEDDING_TYPE", "rotary");
  refused("HL_NUM_NODES=2 HL_DP=1 HL_TP=16 HL_PP=1", "HL_TP", "8 KV heads");
}

// What a command sees: the exported variables and its own NAME=value prefixes, not a plain assignment.
TEST(ShellArgs, ACommandSeesExportedVariablesAndItsPrefixes) {
  const ShellArgs s = parse_shell_args(
      "A=1\nexport B=2\nC=3\nexport C\nD=4 E=5 ./run.sh --x\nF=6 \\\n  ./other.sh; G=7\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 2u);
  EXPECT_EQ(s.commands[0].name, "./run.sh");
  const auto env = s.environment_of(s.commands[0]);
  EXPECT_EQ(env.count("A"), 0u);
  EXPECT_EQ(env.at("B"), "2");
  EXPECT_EQ(env.at("C"), "3");
  EXPECT_EQ(env.at("D"), "4");
  EXPECT_EQ(env.at("E"), "5");
  EXPECT_EQ(env.count("F"), 0u);
  EXPECT_EQ(s.environment_of(s.commands[1]).at("F"), "6");
  EXPECT_EQ(s.variables.at("G"), "7");
}

}  // namespace
}  // namespace trainplan::exporting
