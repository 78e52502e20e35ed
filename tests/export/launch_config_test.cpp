// Launcher configs (src/export): each format written from a job reads back to
// the same plan, workload and cluster; every option written exists in the
// release named (lists below, read from that release's source at the commit
// given); plans a stack cannot express are refused naming the option.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "../spec/expect_spec_error.h"
#include "export/launch_config.h"
#include "export/megatron_config.h"
#include "export/nemo_config.h"
#include "export/nxd_config.h"
#include "export/shell_args.h"
#include "spec/load.h"
#include "spec/text_file.h"

namespace trainplan::exporting {
namespace {

using spec::test_support::expect_spec_error;
namespace fs = std::filesystem;

LaunchJob llama2_70b_on_p5() {
  LaunchJob job;
  job.model = spec::load_model("llama2-70b");
  job.model_name = "llama2-70b";
  job.hardware_name = "p5.48xlarge";
  job.hardware_family = "h100";
  job.stack_name = "megatron-lm";
  job.instances = 16;
  job.devices_per_instance = 8;
  job.plan.instances = 16;
  job.plan.tp = 8;
  job.plan.pp = 4;
  job.plan.virtual_stages = 2;
  job.plan.sp = true;
  job.plan.micro_batch = 1;
  job.plan.zero = 1;
  job.plan.recompute = spec::Recompute::selective;
  job.plan.overlap_dp_comm = true;
  job.workload.seq_len = 4096;
  job.workload.global_batch_seqs = 1024;
  job.workload.precision = spec::Precision::mixed_bf16;
  return job;
}

// The same job on trn1.32xlarge under NxD, where NxD Training runs.
LaunchJob on_trn1(LaunchJob job) {
  job.stack_name = "neuronx-distributed";  // unfused attention, as that stack prices it
  job.flash_attention = false;
  job.hardware_name = "trn1.32xlarge";
  job.hardware_family = "trainium1";
  job.devices_per_instance = 32;
  return job;
}

// BLOOM-176B under the bigscience fork at TP 4: BF16, full recompute,
// micro-batch 2, global batch 2048 (ZeRO 1 is written as stage 0: DeepSpeed's
// BF16 optimizer shards with pipeline parallelism).
LaunchJob bloom_176b_on(int instances, int pp) {
  LaunchJob job;
  job.model = spec::load_model("bloom-176b");
  job.model_name = "bloom-176b";
  job.hardware_name = "jean-zay-a100-80gb";
  job.hardware_family = "a100";
  job.stack_name = "megatron-deepspeed";
  job.instances = job.plan.instances = instances;
  job.devices_per_instance = 8;
  job.plan.tp = 4;
  job.plan.pp = pp;
  job.plan.micro_batch = 2;
  job.plan.zero = 1;
  job.plan.recompute = spec::Recompute::full;
  job.workload = {2048, 2048, 0, spec::Precision::mixed_bf16};
  return job;
}

LaunchJob bloom_176b_with_layers(int layers) {
  LaunchJob job = bloom_176b_on(35, 7);
  job.plan.recompute_layers = layers;
  return job;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "trainplan_export_test";
  fs::create_directories(dir);
  return dir / name;
}

ReadLaunch round_trip(LaunchFormat format, const LaunchJob& job, const std::string& name) {
  const fs::path path = scratch(name);
  for (const LaunchFile& f : launch_files(format, job, path.string())) std::ofstream(f.path) << f.text;
  return read_launch_config(path.string());
}

void expect_same_job(const LaunchJob& a, const LaunchJob& b, bool dp_overlap_written = true) {
  EXPECT_EQ(a.instances, b.instances);
  EXPECT_EQ(a.devices_per_instance, b.devices_per_instance);
  EXPECT_EQ(a.plan.tp, b.plan.tp);
  EXPECT_EQ(a.plan.pp, b.plan.pp);
  EXPECT_EQ(a.plan.virtual_stages, b.plan.virtual_stages);
  EXPECT_EQ(a.fp8_param_gather, b.fp8_param_gather);
  EXPECT_EQ(a.bf16_grad_reduce, b.bf16_grad_reduce);
  EXPECT_EQ(a.plan.sp, b.plan.sp);
  EXPECT_EQ(a.plan.micro_batch, b.plan.micro_batch);
  EXPECT_EQ(a.plan.zero, b.plan.zero);
  EXPECT_EQ(a.plan.recompute, b.plan.recompute);
  EXPECT_EQ(a.plan.recompute_layers, b.plan.recompute_layers);
  if (dp_overlap_written) EXPECT_EQ(a.plan.overlap_dp_comm, b.plan.overlap_dp_comm);
  EXPECT_EQ(a.plan.overlap_tp_comm, b.plan.overlap_tp_comm);
  EXPECT_EQ(a.workload.seq_len, b.workload.seq_len);
  EXPECT_EQ(a.workload.global_batch_seqs, b.workload.global_batch_seqs);
  EXPECT_EQ(a.workload.precision, b.workload.precision);
  EXPECT_EQ(a.model_name, b.model_name);
  EXPECT_EQ(a.hardware_name, b.hardware_name);
  EXPECT_EQ(a.stack_name, b.stack_name);
}

TEST(LaunchConfig, MegatronRoundTripKeepsPlanAndArchitecture) {
  const LaunchJob job = llama2_70b_on_p5();
  const ReadLaunch back = round_trip(LaunchFormat::megatron, job, "megatron.sh");
  EXPECT_EQ(back.format, LaunchFormat::megatron);
  expect_same_job(job, back.job);
  ASSERT_TRUE(back.job.has_architecture);
  // The architecture read from the arguments alone has Llama 2 70B's parameter count.
  EXPECT_EQ(back.job.model.total_parameters(), job.model.total_parameters());
  EXPECT_EQ(back.job.model.kv_heads, 8);
  EXPECT_FALSE(back.job.model.dropout);
}

// Full recompute of the first N layers of each chunk is Megatron-Core's block method
// (megatron/core/recompute.py@d98e8a64:167-181; NeMo's megatron_gpt_config.yaml@e938df32:200:
// "when using 'block' this this will checkpoint the first activations_checkpoint_num_layers per
// pipeline stage"): megatron and nemo write and read it, uniform groups of N > 1 layers are refused
// on reading, and the formats whose launchers checkpoint every layer or none refuse the plan.
TEST(LaunchConfig, PartialFullRecomputeIsTheBlockMethod) {
  LaunchJob job = llama2_70b_on_p5();  // 80 layers over PP 4 x v2: chunks of 10
  job.plan.recompute = spec::Recompute::full;
  job.plan.recompute_layers = 3;
  const std::string script = launch_files(LaunchFormat::megatron, job, "x.sh").front().text;
  const ShellArgs args = parse_shell_args(script, "x.sh");
  EXPECT_EQ(args.value("--recompute-granularity"), "full");
  EXPECT_EQ(args.value("--recompute-method"), "block");
  EXPECT_EQ(args.value("--recompute-num-layers"), "3");
  expect_same_job(job, round_trip(LaunchFormat::megatron, job, "block.sh").job);

  LaunchJob nemo = job;
  nemo.stack_name = "nemo";
  nemo.plan.zero = 0;
  nemo.plan.overlap_dp_comm = false;
  const std::string yaml = launch_files(LaunchFormat::nemo, nemo, "x.yaml").front().text;
  EXPECT_NE(yaml.find("activations_checkpoint_method: block"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("activations_checkpoint_num_layers: 3"), std::string::npos) << yaml;
  expect_same_job(nemo, round_trip(LaunchFormat::nemo, nemo, "block.yaml").job);

  // Every layer: uniform, one layer a checkpoint, as before.
  job.plan.recompute_layers = 0;
  const ShellArgs every = parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh");
  EXPECT_EQ(every.value("--recompute-method"), "uniform");
  EXPECT_EQ(every.value("--recompute-num-layers"), "1");

  // Uniform groups of several layers keep one input a group: not modelled, refused on reading.
  const fs::path grouped = scratch("grouped.sh");
  std::string text = launch_files(LaunchFormat::megatron, job, grouped.string()).front().text;
  text.replace(text.find("--recompute-num-layers 1"), 24, "--recompute-num-layers 2");
  std::ofstream(grouped) << text;
  expect_spec_error([&] { read_launch_config(grouped.string()); }, "--recompute-method", "uniform groups");

  job.plan.recompute_layers = 3;
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, bloom_176b_with_layers(3), "x.sh"); },
                    "--checkpoint-activations", "--recompute-method block");
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, on_trn1(job), "x.yaml"); },
                    "model.activations_checkpoint_granularity", "first 3 layers");
}

// A stack priced with unfused attention and a separate accumulation pass (megatron-lm-unfused-attn,
// as NVIDIA's CI runs Megatron-Core) is written so: Megatron-LM's --attention-backend unfused
// (language_module.py@73a28a10:63-66) and --no-gradient-accumulation-fusion (arguments.py:1941-1945),
// both read back; NeMo 2.0.0 writes gradient_accumulation_fusion false and refuses the unfused
// kernel, which its config cannot select.
TEST(LaunchConfig, TheAttentionKernelAndAccumulationPricedAreWritten) {
  LaunchJob job = llama2_70b_on_p5();
  std::string script = launch_files(LaunchFormat::megatron, job, "x.sh").front().text;
  EXPECT_EQ(script.find("--attention-backend"), std::string::npos);
  EXPECT_EQ(script.find("--no-gradient-accumulation-fusion"), std::string::npos);
  job.stack_name = "megatron-lm-unfused-attn";
  job.flash_attention = false;
  job.fused_grad_accumulation = false;
  const ReadLaunch back = round_trip(LaunchFormat::megatron, job, "unfused.sh");
  script = launch_files(LaunchFormat::megatron, job, "x.sh").front().text;
  EXPECT_NE(script.find("--attention-backend unfused"), std::string::npos);
  EXPECT_NE(script.find("--no-gradient-accumulation-fusion"), std::string::npos);
  EXPECT_FALSE(back.job.flash_attention);
  EXPECT_FALSE(back.job.fused_grad_accumulation);
  // Without trainplan's header, a script asking for the unfused kernel is priced as the stack that prices it.
  std::string headless = script;
  headless.erase(headless.find("# trainplan:"), headless.find('\n', headless.find("# trainplan:")) + 1 - headless.find("# trainplan:"));
  const fs::path path = scratch("headless-unfused.sh");
  std::ofstream(path) << headless;
  EXPECT_EQ(read_launch_config(path.string()).job.stack_name, "megatron-lm-unfused-attn");
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, job, "x.yaml"); }, "model.transformer_engine", "unfused attention");
  job.flash_attention = true;
  const YAML::Node nemo = YAML::Load(launch_files(LaunchFormat::nemo, job, "x.yaml").front().text);
  EXPECT_FALSE(nemo["model"]["gradient_accumulation_fusion"].as<bool>());
  job.fused_grad_accumulation = true;
  EXPECT_TRUE(YAML::Load(launch_files(LaunchFormat::nemo, job, "x.yaml").front().text)["model"]["gradient_accumulation_fusion"].as<bool>());
}

// MoE dispatch as priced: DeepEP's once-per-instance dispatch (the nemo stack) is Megatron-LM's flex
// dispatcher with --moe-enable-deepep (arguments.py@73a28a10:2791-2795, transformer_config.py:719-721),
// the plain all-to-all otherwise; a script on the client's all-gather default, or without grouped GEMMs,
// is read with a note saying so.
TEST(LaunchConfig, MegatronMoeDispatcherIsWrittenAsPricedAndReadBack) {
  LaunchJob job = llama2_70b_on_p5();
  job.model = spec::load_model("mixtral-8x7b");
  job.model_name = "mixtral-8x7b";
  job.plan.pp = 1;
  job.plan.virtual_stages = 1;
  job.plan.ep = 8;
  job.plan.tp = 2;
  std::string script = launch_files(LaunchFormat::megatron, job, "x.sh").front().text;
  EXPECT_NE(script.find("--moe-token-dispatcher-type alltoall"), std::string::npos);
  EXPECT_EQ(script.find("--moe-enable-deepep"), std::string::npos);
  job.stack_name = "nemo";
  job.dispatch_once_per_instance = true;
  const ReadLaunch back = round_trip(LaunchFormat::megatron, job, "flex.sh");
  EXPECT_TRUE(back.job.dispatch_once_per_instance);
  script = launch_files(LaunchFormat::megatron, job, "x.sh").front().text;
  EXPECT_NE(script.find("--moe-token-dispatcher-type flex"), std::string::npos);
  EXPECT_NE(script.find("--moe-enable-deepep"), std::string::npos);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"--moe-token-dispatcher-type flex", "--moe-token-dispatcher-type allgather"}, {"--moe-grouped-gemm", "--bf16"}}) {
    std::string edited = script;
    edited.replace(edited.find(from), from.size(), to);
    const fs::path path = scratch("dispatch-edited.sh");
    std::ofstream(path) << edited;
    const std::vector<std::string> notes = read_launch_config(path.string()).job.notes;
    const std::string expect = from == "--moe-grouped-gemm" ? "no --moe-grouped-gemm" : "dispatches tokens by allgather";
    EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(expect) != std::string::npos; }))
        << expect;
  }
}

// Heads wider than hidden / heads travel as Megatron's --kv-channels (NeMo's
// kv_channels); NxD has no such option and refuses.
TEST(LaunchConfig, ExplicitHeadDimRoundTripsThroughKvChannels) {
  LaunchJob job = llama2_70b_on_p5();
  job.model = spec::load_model("qwen3-30b-a3b");
  job.model_name = "qwen3-30b-a3b";
  job.plan.tp = 1;
  job.plan.pp = 1;
  job.plan.virtual_stages = 1;
  job.plan.sp = false;
  job.plan.ep = 8;
  const ReadLaunch back = round_trip(LaunchFormat::megatron, job, "qwen3.sh");
  ASSERT_TRUE(back.job.has_architecture);
  EXPECT_EQ(back.job.model.explicit_head_dim, 128);
  EXPECT_EQ(back.job.model.total_parameters(), job.model.total_parameters());

  LaunchJob dense = llama2_70b_on_p5();
  dense.model.explicit_head_dim = 160;
  const std::string yaml = launch_files(LaunchFormat::nemo, dense, "x.yaml").front().text;
  EXPECT_EQ(YAML::Load(yaml)["model"]["kv_channels"].as<int>(), 160);
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, on_trn1(dense), "x.yaml"); }, "model.num_attention_heads", "head_dim");
}

TEST(LaunchConfig, NemoNxdAndDeepSpeedRoundTrip) {
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "nemo";
  expect_same_job(job, round_trip(LaunchFormat::nemo, job, "nemo.yaml").job);
  job.plan.recompute = spec::Recompute::full;
  job.plan.zero = 0;
  // Under fused_adam NeMo overlaps the all-reduce only with PP 1 and no SP
  // (megatron_base_model.py@e938df32:834-843): a plan priced otherwise is refused (it would run
  // otherwise, and read back as another plan).
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, job, "x.yaml"); }, "model.optim.name", "--no-overlap-dp");
  job.plan.overlap_dp_comm = false;
  expect_same_job(job, round_trip(LaunchFormat::nemo, job, "nemo-full.yaml").job);
  job.plan.overlap_dp_comm = true;

  job.stack_name = "neuronx-distributed";
  job.plan.zero = 1;
  job.hardware_name = "trn1.32xlarge";
  job.hardware_family = "trainium1";
  job.devices_per_instance = 32;
  const ReadLaunch nxd = round_trip(LaunchFormat::nxd, job, "nxd.yaml");
  EXPECT_EQ(nxd.format, LaunchFormat::nxd);
  expect_same_job(job, nxd.job);

  LaunchJob bloom = bloom_176b_on(35, 7);
  bloom.workload.global_batch_seqs = 2040;
  const ReadLaunch ds = round_trip(LaunchFormat::deepspeed, bloom, "bloom.sh");
  EXPECT_EQ(ds.format, LaunchFormat::deepspeed);
  // DeepSpeed applies overlap_comm at ZeRO-2 and -3 alone: at BF16's stage 0 it is written, and read, off.
  expect_same_job(bloom, ds.job, /*dp_overlap_written=*/false);
  EXPECT_FALSE(ds.job.plan.overlap_dp_comm);
  EXPECT_EQ(ds.job.model.total_parameters(), bloom.model.total_parameters());
  // The ds_config alone is a job too (TP and PP 1: the arguments that state them are in the script).
  const ReadLaunch config_only = read_launch_config(scratch("bloom.ds_config.json").string());
  EXPECT_EQ(config_only.job.plan.micro_batch, 2);
  EXPECT_EQ(config_only.job.workload.global_batch_seqs, 2040);
}

// Every option trainplan writes exists in the release it names. Megatron-LM
// core_r0.13.0: NVIDIA/Megatron-LM@73a28a10 megatron/training/arguments.py, the
// add_argument line of each; torchrun's own options besides.
TEST(LaunchConfig, MegatronOptionsExistInCoreR013) {
  const std::set<std::string> known = {
      "--tensor-model-parallel-size" /*2243*/, "--pipeline-model-parallel-size" /*2248*/,
      "--num-virtual-stages-per-pipeline-rank" /*2279*/, "--sequence-parallel" /*1939*/, "--micro-batch-size" /*1697*/,
      "--global-batch-size" /*1704*/, "--seq-length" /*2517*/, "--max-position-embeddings" /*1387*/, "--bf16" /*2202*/,
      "--use-distributed-optimizer" /*2348*/, "--use-custom-fsdp" /*2356*/, "--data-parallel-sharding-strategy" /*2359*/,
      "--recompute-granularity" /*1733*/, "--recompute-method" /*1754*/, "--recompute-num-layers" /*1763*/,
      "--overlap-grad-reduce" /*2295*/, "--overlap-param-gather" /*2319*/, "--tp-comm-overlap" /*1811*/,
      "--num-layers" /*1364*/, "--hidden-size" /*1370*/, "--ffn-hidden-size" /*1372*/, "--num-attention-heads" /*1375*/,
      "--group-query-attention" /*1383*/, "--num-query-groups" /*1385*/, "--position-embedding-type" /*1390*/,
      "--rotary-percent" /*1402*/, "--swiglu" /*1448*/, "--normalization" /*1430*/,
      "--untie-embeddings-and-output-weights" /*1456*/, "--disable-bias-linear" /*1906*/, "--attention-dropout" /*1665*/,
      "--hidden-dropout" /*1667*/, "--vocab-size" /*2438*/, "--make-vocab-size-divisible-by" /*1427*/, "--fp8-format" /*1179*/, "--fp8-param-gather" /*1208*/,
      "--grad-reduce-in-bf16" /*2204*/,
      "--context-parallel-size" /*2384*/, "--num-experts" /*2704*/, "--moe-router-topk" /*2753*/,
      "--moe-ffn-hidden-size" /*2714*/, "--moe-shared-expert-intermediate-size" /*2717*/,
      "--expert-model-parallel-size" /*2700*/, "--expert-tensor-parallel-size" /*2702*/, "--kv-channels" /*1378*/,
      "--account-for-embedding-in-pipeline-split" /*2342*/, "--account-for-loss-in-pipeline-split" /*2345*/,
      "--no-gradient-accumulation-fusion" /*1941*/, "--rotary-base" /*1400*/, "--moe-token-dispatcher-type" /*2790*/,
      "--moe-grouped-gemm" /*2725*/, "--add-qkv-bias" /*1909*/, "--qk-layernorm" /*2690*/,
      "--attention-backend" /*1377*/, "--moe-enable-deepep" /*2794*/,
      // torchrun (torch.distributed.run)
      "--nnodes", "--nproc_per_node", "--node_rank", "--master_addr", "--master_port"};
  LaunchJob job = llama2_70b_on_p5();
  for (int zero : {0, 1, 2, 3})
    for (auto recompute : {spec::Recompute::none, spec::Recompute::selective, spec::Recompute::full}) {
      job.plan.zero = zero;
      job.plan.recompute = recompute;
      job.plan.overlap_tp_comm = zero == 2;
      const ShellArgs args = parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh");
      for (const auto& [option, value] : args.options) EXPECT_TRUE(known.count(option)) << option << " is not a Megatron-LM option";
    }
  // CP and a MoE model with EP and its own expert TP.
  job.plan.cp = 2;
  job.model = spec::load_model("mixtral-8x7b");
  job.plan.ep = 8;
  job.plan.etp = 1;
  const ShellArgs moe = parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh");
  for (const auto& [option, value] : moe.options) EXPECT_TRUE(known.count(option)) << option << " is not a Megatron-LM option";
  EXPECT_EQ(moe.value("--context-parallel-size"), "2");
  EXPECT_EQ(moe.value("--num-experts"), "8");
  EXPECT_EQ(moe.value("--expert-model-parallel-size"), "8");
  EXPECT_EQ(moe.value("--expert-tensor-parallel-size"), "1");
  // The unfused kernel, a separate accumulation pass and DeepEP's dispatch, as stacks price them.
  job.flash_attention = false;
  job.fused_grad_accumulation = false;
  job.dispatch_once_per_instance = true;
  const ShellArgs priced = parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh");
  for (const auto& [option, value] : priced.options) EXPECT_TRUE(known.count(option)) << option << " is not a Megatron-LM option";
  EXPECT_EQ(priced.value("--attention-backend"), "unfused");
  EXPECT_EQ(priced.value("--moe-token-dispatcher-type"), "flex");
}

// NeMo 2.0.0's megatron_gpt_config.yaml (NVIDIA/NeMo@e938df32) holds every key
// written under trainer and model (line of each): Hydra merges the file onto it
// in struct mode. Keys NeMo reads that the base lacks travel as `+` overrides:
// optim.overlap_* (megatron_gpt_model.py 554, 561, 695), rotary_base (462, 531),
// qkv_bias (megatron_base_model.py 487). NxD Training's megatron_llama_7B_config.yaml
// (aws-neuron/neuronx-distributed-training@ff83d7bd) holds every key it writes.
TEST(LaunchConfig, YamlKeysExistInTheNamedReleases) {
  const std::set<std::string> nemo = {
      "trainer.num_nodes", "trainer.devices", "trainer.precision", "model.micro_batch_size", "model.global_batch_size",
      "model.tensor_model_parallel_size", "model.pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size",
      "model.sequence_parallel", "model.encoder_seq_length", "model.max_position_embeddings", "model.num_layers",
      "model.hidden_size", "model.ffn_hidden_size", "model.num_attention_heads", "model.num_query_groups",
      "model.normalization", "model.activation", "model.position_embedding_type", "model.rotary_percentage",
      "model.share_embeddings_and_output_weights", "model.bias", "model.hidden_dropout", "model.attention_dropout",
      "model.make_vocab_size_divisible_by", "model.megatron_amp_O2", "model.activations_checkpoint_granularity",
      "model.activations_checkpoint_method", "model.activations_checkpoint_num_layers", "model.ub_tp_comm_overlap",
      "model.fsdp", "model.fsdp_sharding_strategy", "model.fsdp_grad_reduce_dtype" /*174*/, "model.fp8" /*223*/, "model.fp8_hybrid" /*225*/, "model.kv_channels", "model.optim.name",
      "model.transformer_engine" /*222*/, "model.gradient_accumulation_fusion" /*152*/};
  const std::set<std::string> nxd = {
      "name", "model_source", "trainer.devices", "trainer.num_nodes", "distributed_strategy.tensor_model_parallel_size",
      "distributed_strategy.pipeline_model_parallel_size", "distributed_strategy.virtual_pipeline_model_parallel_size",
      "distributed_strategy.zero1", "distributed_strategy.sequence_parallel", "data.micro_batch_size",
      "data.global_batch_size", "model.encoder_seq_length", "model.max_position_embeddings", "model.num_layers",
      "model.hidden_size", "model.ffn_hidden_size", "model.num_attention_heads", "model.num_kv_heads",
      "model.hidden_dropout", "model.attention_dropout", "model.normalization", "model.make_vocab_size_divisible_by",
      "model.share_embeddings_and_output_weights", "model.position_embedding_type", "model.rotary_percentage",
      "model.activation", "model.has_bias", "model.activations_checkpoint_granularity", "precision.type",
      "model.position_freq_base" /*read by megatron_gpt_model.py:129*/, "model.fusions.flash_attention" /*126*/,
      // megatron_llama_7B_config.yaml@ff83d7bd lines 3, 9, 16, 68-70, 151-156: read without a default
      // (training_orchestrator.py:17-23, data_module.py:113-117) or read as off when absent (base.py:133).
      "seed", "trainer.max_steps", "trainer.gradient_clip_val", "data.data_impl", "data.splits_string",
      "data.seq_length", "compiler_flags", "compiler_cache_url", "aync_exec_max_inflight_requests",
      "bucket_size_collectives", "neuron_rt_exec_timeout", "neuron_experimental_compress_rg"};
  auto keys = [](const YAML::Node& node, const std::string& prefix, auto& self, std::set<std::string>& out) -> void {
    for (const auto& kv : node) {
      const std::string key = prefix + kv.first.as<std::string>();
      if (kv.second.IsMap()) self(kv.second, key + ".", self, out);
      else out.insert(key);
    }
  };
  LaunchJob job = llama2_70b_on_p5();
  const std::set<std::string> overrides = {"+model.optim.overlap_grad_sync", "+model.optim.overlap_param_gather",
                                           "+model.optim.overlap_param_sync", "+model.rotary_base", "+model.qkv_bias"};
  job.model = spec::load_model("qwen2.5-14b");  // RoPE base 1e6 and biases on Q, K and V alone
  job.model.name = "qwen2.5-14b";
  for (int zero : {0, 1, 3}) {  // 2 is refused (NemoWritesTheOptimizerWhoseStatesWerePriced)
    job.plan.zero = zero;
    job.plan.recompute = zero == 3 ? spec::Recompute::full : spec::Recompute::selective;
    // FSDP as NeMo runs it (stack nemo-fsdp: O2 off, FP32 shards), without a pipeline (nlp_overrides.py:809).
    job.fsdp_fp32_shards = zero == 3;
    if (zero == 3) job.plan.pp = 1, job.plan.virtual_stages = 1;
    job.plan.overlap_dp_comm = zero != 0;  // fused_adam at PP 4 with SP: NeMo does not overlap (refused otherwise)
    const std::string text = launch_files(LaunchFormat::nemo, job, "x.yaml").front().text;
    std::set<std::string> written;
    keys(YAML::Load(text), "", keys, written);
    for (const auto& k : written) EXPECT_TRUE(nemo.count(k)) << k << " is not a key of megatron_gpt_config.yaml";
    EXPECT_EQ(YAML::Load(text)["model"]["transformer_engine"].as<bool>(), true);
    std::smatch m;
    for (std::string rest = text; std::regex_search(rest, m, std::regex(R"((\+[a-z_.]+)=)")); rest = m.suffix())
      EXPECT_TRUE(overrides.count(m[1].str())) << m[1] << " is not a key NeMo reads";
    EXPECT_NE(text.find("+model.rotary_base=1000000"), std::string::npos) << text;
    EXPECT_NE(text.find("+model.qkv_bias=true"), std::string::npos) << text;
    // apex fused_adam (ZeRO 0) and FSDP (3) take no overlap keys: fused_adam(overlap_grad_sync=...) is a TypeError.
    EXPECT_EQ(text.find("overlap_grad_sync") != std::string::npos, zero == 1) << zero;
    const ReadLaunch back = [&] {
      const fs::path path = scratch("overrides.yaml");
      std::ofstream(path) << text;
      return read_launch_config(path.string());
    }();
    EXPECT_EQ(back.job.plan.zero, zero);
  }
  job = llama2_70b_on_p5();
  job.plan.zero = 1;
  std::set<std::string> written;
  keys(YAML::Load(launch_files(LaunchFormat::nxd, on_trn1(job), "x.yaml").front().text), "", keys, written);
  // exp_manager and model.optim are the example's own sections, written whole (megatron_llama_7B_config.yaml 20-43, 128-140).
  for (const auto& k : written)
    EXPECT_TRUE(nxd.count(k) || k.rfind("exp_manager.", 0) == 0 || k.rfind("model.optim.", 0) == 0 || k == "model.fusions.softmax")
        << k << " is not an NxD Training key";
  EXPECT_TRUE(written.count("exp_manager.resume_if_exists"));
  // A file NxD Training's Hydra entry point gets alone (struct mode): every key its code reads without a default.
  for (const char* k : {"seed", "data.data_impl", "data.splits_string", "data.seq_length", "exp_manager.resume_from_checkpoint",
                        "compiler_flags", "aync_exec_max_inflight_requests", "neuron_experimental_compress_rg",
                        "trainer.gradient_clip_val"})
    EXPECT_TRUE(written.count(k)) << k;
  EXPECT_TRUE(written.count("model.optim.name"));
}

TEST(LaunchConfig, PlansAStackCannotExpressAreRefusedNamingTheOption) {
  LaunchJob job = llama2_70b_on_p5();
  job.workload.precision = spec::Precision::bf16_sr;
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, job, "x.sh"); }, "--bf16", "stochastic rounding", "megatron format");
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, job, "x.yaml"); }, "trainer.precision", "stochastic rounding");
  job = llama2_70b_on_p5();
  job.plan.zero = 2;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, on_trn1(job), "x.yaml"); }, "zero1", "ZeRO-2", "nxd format");
  {
    LaunchJob trn2 = on_trn1(job);
    trn2.plan.zero = 1;
    trn2.hardware_family = "trainium2";  // NxD Training at Neuron SDK 2.20 has no trn2 configuration
    expect_spec_error([&] { launch_files(LaunchFormat::nxd, trn2, "x.yaml"); }, "trainer.devices", "trn2");
  }
  job = llama2_70b_on_p5();
  job.stack_name = "megatron-deepspeed";
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, job, "x.sh"); }, "--sequence-parallel", "no sequence");
  job.plan.sp = false;
  job.plan.virtual_stages = 1;
  job.plan.recompute = spec::Recompute::full;
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, job, "x.sh"); }, "--normalization", "RMSNorm");
  job.plan.sp = true;
  job.plan.tp = 1;
  job.stack_name = "megatron-lm";
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, job, "x.sh"); }, "--sequence-parallel", "TP > 1");
}

// A sliding window or norms other than one before each sublayer are written
// in no format: the job would build another layer than the one priced.
TEST(LaunchConfig, LayersNoFormatBuildsAreRefused) {
  LaunchJob job = llama2_70b_on_p5();
  job.model.sliding_window_tokens = 1024;
  job.model.sliding_window_layer_share = 0.5;
  for (LaunchFormat f : {LaunchFormat::megatron, LaunchFormat::nemo, LaunchFormat::deepspeed})
    expect_spec_error([&] { launch_files(f, job, "x.sh"); }, "--model", "sliding-window attention");
  job.model.sliding_window_tokens = job.workload.seq_len;  // a window the sequence never exceeds changes nothing
  EXPECT_FALSE(launch_files(LaunchFormat::megatron, job, "x.sh").empty());
  job.model.post_norms = 2;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, job, "x.yaml"); }, "--model", "2 after its sublayers");
}

// Megatron-LM, NeMo and DeepSpeed's GPT scripts start CUDA processes; NxD Training runs on Trainium alone.
TEST(LaunchConfig, ALauncherThatDoesNotRunOnTheHardwareIsRefused) {
  LaunchJob job = llama2_70b_on_p5();
  job.hardware_name = "trn1.32xlarge";
  job.hardware_family = "trainium1";
  job.devices_per_instance = 32;
  for (LaunchFormat f : {LaunchFormat::megatron, LaunchFormat::nemo, LaunchFormat::deepspeed})
    expect_spec_error([&] { launch_files(f, job, "x.sh"); }, "--hardware", "is trainium1 (use format nxd)");
  job.hardware_name = "dl1.24xlarge";
  job.hardware_family = "gaudi1";
  job.devices_per_instance = 8;
  for (LaunchFormat f : {LaunchFormat::megatron, LaunchFormat::nxd})
    expect_spec_error([&] { launch_files(f, job, "x.sh"); }, "--hardware", "no format trainplan writes runs there");
  job = llama2_70b_on_p5();
  job.plan.zero = 1;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, job, "x.yaml"); }, "--hardware", "runs on Trainium", "nxd format");
}

// A format writes jobs for the software it launches: an HF Trainer or
// torchtitan plan is not a Megatron job; a stack trainplan does not ship passes.
TEST(LaunchConfig, AStackTheLauncherDoesNotRunIsRefused) {
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "hf-trainer-deepspeed";
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, job, "x.sh"); }, "--stack",
                    "no format trainplan writes runs it", "deepspeed format");
  job.stack_name = "torchtitan-compile";
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, job, "x.sh"); }, "--stack", "torchtitan-compile");
  job.stack_name = "megatron-deepspeed";
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, job, "x.sh"); }, "--stack", "use format deepspeed");
  job.stack_name = "nemo";  // Megatron-Core under both
  EXPECT_NO_THROW(launch_files(LaunchFormat::megatron, job, "x.sh"));
  job.stack_name = "my-own-megatron-fork";
  EXPECT_NO_THROW(launch_files(LaunchFormat::megatron, job, "x.sh"));
}

// NxD Training's megatron model (aws-neuron/neuronx-distributed-training@ff83d7bd)
// raises without zero1 and divides the KV heads over TP.
TEST(LaunchConfig, NxdRefusesWhatItsMegatronModelRaisesOn) {
  LaunchJob job = on_trn1(llama2_70b_on_p5());
  job.workload.precision = spec::Precision::bf16_sr;
  job.plan.zero = 0;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, job, "x.yaml"); }, "distributed_strategy.zero1", "raises without zero1");
  job.plan.zero = 1;
  job.plan.tp = 32;  // Llama 2 70B has 8 KV heads: the megatron model refuses; launch_files takes the HF path
  expect_spec_error([&] { write_nxd(job); }, "tensor_model_parallel_size", "KV heads");
  job.plan.tp = 8;
  const std::string yaml = launch_files(LaunchFormat::nxd, job, "x.yaml").front().text;
  EXPECT_EQ(YAML::Load(yaml)["model"]["position_freq_base"].as<double>(), 10000.0);
  EXPECT_EQ(YAML::Load(yaml)["model"]["fusions"]["flash_attention"].as<bool>(), false);
  EXPECT_EQ(yaml.find("no flash-attention path"), std::string::npos);
  // The path follows the attention kernel priced, not a stack's name: NxD Training and NxD 2.20
  // both price NKI flash attention, which only the HF Llama model runs (modeling_llama.py@ff83d7bd:411-413;
  // the megatron model has no flash path), so a dense Llama priced with it goes there, flash on.
  job.stack_name = "neuronx-distributed-training";
  EXPECT_EQ(YAML::Load(launch_files(LaunchFormat::nxd, job, "x.yaml").front().text)["model_source"].as<std::string>(),
            "megatron");
  job.flash_attention = true;
  for (const char* stack : {"neuronx-distributed-training", "neuronx-distributed-2.20"}) {
    job.stack_name = stack;
    const std::vector<LaunchFile> files = launch_files(LaunchFormat::nxd, job, "x.yaml");
    ASSERT_EQ(files.size(), 2u) << stack;  // the YAML and its config.json
    const YAML::Node y = YAML::Load(files.front().text);
    EXPECT_EQ(y["model_source"].as<std::string>(), "hf") << stack;
    EXPECT_TRUE(y["model"]["fusions"]["flash_attention"].as<bool>()) << stack;
    EXPECT_EQ(y["distributed_strategy"]["kv_replicator"].as<int>(), 1) << stack;
  }
  // A dense model the HF Llama layer does not build cannot run flash attention there: refused.
  job.model = spec::load_model("gpt3-5b");
  job.model_name = "gpt3-5b";
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, job, "x.yaml"); }, "model.fusions.flash_attention",
                    "neuronx-distributed-2.20-unfused-attn");
  job.flash_attention = false;
  EXPECT_NO_THROW(launch_files(LaunchFormat::nxd, job, "x.yaml"));
  // transformer.py@ff83d7bd builds every linear layer with bias=has_bias: Q/K/V-only biases
  // (Qwen2.5) and QK-norm (Qwen3) would be dropped, so they are refused on the megatron path.
  job.model = spec::load_model("qwen2.5-14b");
  job.model_name = "qwen2.5-14b";
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, job, "x.yaml"); }, "model.has_bias", "Q, K and V biases alone");
  job.model.qkv_bias = false;
  job.model.qk_norm = true;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, job, "x.yaml"); }, "model.normalization", "QK-norm");
}

// NeMo 2.0.0 runs Megatron-Core 0.9: Mixtral's routed experts go through as
// the keys megatron_gpt_model reads (Hydra + overrides) with the all-to-all
// dispatcher and grouped GEMMs priced, and read back to the same job; what
// Megatron-Core 0.9 lacks (expert FFN width, shared experts, leading dense
// layers, the flex dispatcher) and what it raises on (EP with TP, no SP) is refused.
TEST(LaunchConfig, NemoWritesMoeAsMegatronCore09RunsIt) {
  LaunchJob job = llama2_70b_on_p5();
  job.model = spec::load_model("mixtral-8x7b");
  job.model_name = "mixtral-8x7b";
  job.stack_name = "nemo-alltoall";
  job.instances = job.plan.instances = 4;
  job.plan.tp = 2;
  job.plan.pp = 1;
  job.plan.virtual_stages = 1;
  job.plan.ep = 8;
  const std::string yaml = launch_files(LaunchFormat::nemo, job, "x.yaml").front().text;
  for (const char* key : {"+model.num_moe_experts=8", "+model.moe_router_topk=2", "+model.moe_token_dispatcher_type=alltoall",
                          "+model.moe_grouped_gemm=true"})
    EXPECT_NE(yaml.find(key), std::string::npos) << key << "\n" << yaml;
  EXPECT_EQ(YAML::Load(yaml)["model"]["expert_model_parallel_size"].as<int>(), 8);
  const ReadLaunch back = round_trip(LaunchFormat::nemo, job, "mixtral.yaml");
  expect_same_job(job, back.job);
  EXPECT_EQ(back.job.plan.ep, 8);
  EXPECT_EQ(back.job.model.experts, 8);

  LaunchJob flex = job;
  flex.stack_name = "nemo";
  flex.dispatch_once_per_instance = true;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, flex, "x.yaml"); }, "moe_token_dispatcher_type", "nemo-alltoall");
  // Priced with the EP all-to-all overlapped (Megatron-Core's overlap_moe_expert_parallel_comm,
  // after 0.9): neither NeMo 2.0.0 nor Megatron-LM core_r0.13.0 can run it.
  LaunchJob overlapped = job;
  overlapped.stack_name = "nemo-alltoall-ep-overlap";
  overlapped.ep_a2a_overlap = true;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, overlapped, "x.yaml"); }, "model.overlap_moe_expert_parallel_comm",
                    "nemo-alltoall");
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, overlapped, "x.sh"); }, "--overlap-moe-expert-parallel-comm",
                    "core_r0.13.0");
  LaunchJob no_sp = job;
  no_sp.plan.sp = false;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, no_sp, "x.yaml"); }, "model.sequence_parallel", "expert");
  LaunchJob narrow = job;
  narrow.model.expert_ffn_hidden = 1024;  // as Qwen3 MoE's experts, narrower than the dense FFN
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, narrow, "x.yaml"); }, "model.ffn_hidden_size", "moe_ffn_hidden_size");
  LaunchJob shared = job;
  shared.model.shared_expert_ffn_hidden = 1024;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, shared, "x.yaml"); }, "num_moe_experts", "shared");
  LaunchJob leading = job;
  leading.model.first_dense_layers = 1;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, leading, "x.yaml"); }, "num_moe_experts", "moe_layer_freq");
  LaunchJob etp = job;
  etp.plan.etp = 1;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, etp, "x.yaml"); }, "expert_model_parallel_size", "expert tensor");
}

// NxD Training's mixed_precision turns on FP32 master weights and FP32 gradient
// accumulation (base.py@ff83d7bd:118-119); NxD 2.18's stack prices neither, so
// its plans are written as 'manual' with mixed_precision's environment, the
// settings quoted for os.environ, and read back the same.
TEST(LaunchConfig, NxdWritesManualPrecisionForAStackWithoutFp32Masters) {
  LaunchJob job = on_trn1(llama2_70b_on_p5());
  job.model = spec::load_model("llama2-7b");
  job.model_name = "llama2-7b";
  job.plan.pp = 1;
  job.plan.virtual_stages = 1;
  job.stack_name = "neuronx-distributed";
  EXPECT_EQ(YAML::Load(launch_files(LaunchFormat::nxd, job, "x.yaml").front().text)["precision"]["type"].as<std::string>(),
            "mixed_precision");
  job.optimizer = spec::kNoMastersFp32Moments;
  job.bf16_grad_reduce = true;
  const std::string yaml = launch_files(LaunchFormat::nxd, job, "x.yaml").front().text;
  const YAML::Node precision = YAML::Load(yaml)["precision"];
  EXPECT_EQ(precision["type"].as<std::string>(), "manual");
  EXPECT_FALSE(precision["master_weights"].as<bool>());
  EXPECT_FALSE(precision["fp32_grad_acc"].as<bool>());
  EXPECT_NE(yaml.find("xla_downcast_bf16: '1'"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("xla_use_bf16: '0'"), std::string::npos) << yaml;
  const ReadLaunch back = round_trip(LaunchFormat::nxd, job, "nxd-manual.yaml");
  expect_same_job(job, back.job);
  EXPECT_TRUE(back.job.optimizer == spec::kNoMastersFp32Moments);
  EXPECT_TRUE(back.job.bf16_grad_reduce);
  EXPECT_EQ(back.job.workload.precision, spec::Precision::mixed_bf16);
}

// NeMo 2.0.0 reads context_parallel_size by cfg.get (not in the base config):
// written as an override, read back as the same job.
TEST(LaunchConfig, NemoWritesContextParallelAsAnOverride) {
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "nemo";
  job.plan.cp = 2;
  job.plan.pp = 2;
  job.plan.virtual_stages = 1;
  job.workload.seq_len = 16384;
  const std::string yaml = launch_files(LaunchFormat::nemo, job, "x.yaml").front().text;
  EXPECT_NE(yaml.find("+model.context_parallel_size=2"), std::string::npos) << yaml;
  const ReadLaunch back = round_trip(LaunchFormat::nemo, job, "nemo-cp.yaml");
  expect_same_job(job, back.job);
  EXPECT_EQ(back.job.plan.cp, 2);
}

// NeMo 2.0.0's optimizers (megatron_base_model.py@e938df32:781-812, modelPT.py@e938df32:608-621):
// Megatron-Core's distributed optimizer keeps FP32 masters and moments; Apex's
// distributed_fused_adam keeps FP32 masters as 16-bit remainders (optim.dtype fp32) or BF16
// moments and no masters (bf16), and under O2 a contiguous buffer of every gradient
// (apex@6424da3b distributed_fused_adam.py:1156-1190): ZeRO 1 in memory. A job is written with
// the optimizer whose states its stack priced and reads back to the same job; ZeRO 2, which no
// NeMo 2.0.0 optimizer runs, is refused, as is a remainder or BF16 optimizer at ZeRO 0, and a
// dtype Apex does not take.
TEST(LaunchConfig, NemoWritesTheOptimizerWhoseStatesWerePriced) {
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "nemo";
  EXPECT_NE(launch_files(LaunchFormat::nemo, job, "x.yaml").front().text.find("name: mcore_distributed_optim"),
            std::string::npos);

  job.stack_name = "nemo-24.07";
  job.optimizer = spec::kMasterRemainders;
  std::string yaml = launch_files(LaunchFormat::nemo, job, "x.yaml").front().text;
  EXPECT_NE(yaml.find("name: distributed_fused_adam"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("+model.optim.overlap_param_sync=true"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("optim.dtype"), std::string::npos) << yaml;
  ReadLaunch back = round_trip(LaunchFormat::nemo, job, "nemo-remainders.yaml");
  expect_same_job(job, back.job);
  EXPECT_TRUE(back.job.optimizer == spec::kMasterRemainders);

  job.stack_name = "nemo-24.07-bf16-optimizer";
  job.optimizer = spec::kBf16Optimizer;
  yaml = launch_files(LaunchFormat::nemo, job, "x.yaml").front().text;
  EXPECT_NE(yaml.find("+model.optim.dtype=bf16"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("name: distributed_fused_adam"), std::string::npos) << yaml;
  back = round_trip(LaunchFormat::nemo, job, "nemo-bf16-optim.yaml");
  expect_same_job(job, back.job);
  EXPECT_TRUE(back.job.optimizer == spec::kBf16Optimizer);

  // Megatron-LM keeps master parameters whatever its options: both are refused there.
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, job, "x.sh"); }, "--use-distributed-optimizer",
                    "prices no master weights and BF16 Adam moments", "megatron format");
  LaunchJob remainders = job;
  remainders.optimizer = spec::kMasterRemainders;
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, remainders, "x.sh"); }, "--use-distributed-optimizer",
                    "prices FP32 master weights kept as 16-bit remainders and FP32 Adam moments", "megatron format");

  job.plan.zero = 0;
  job.plan.overlap_dp_comm = false;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, job, "x.yaml"); }, "model.optim.name",
                    "NeMo 2.0.0's fused_adam keeps FP32 master weights and FP32 Adam moments", "nemo format");
  job.plan.zero = 2;
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, job, "x.yaml"); }, "model.optim.name",
                    "no NeMo 2.0.0 optimizer shards the gradients", "nemo format");

  const fs::path path = scratch("nemo-fp16-optim.yaml");
  job.plan.zero = 1;
  job.optimizer = spec::kFp32Optimizer;
  job.stack_name = "nemo";
  std::ofstream(path) << launch_files(LaunchFormat::nemo, job, "x.yaml").front().text;
  expect_spec_error(
      [&] { read_launch_config(path.string(), "", {"model.optim.name=distributed_fused_adam", "+model.optim.dtype=fp16"}); },
      "model.optim.dtype", "fp32 or bf16 (the optimizer state's dtype), found 'fp16'", path.string());
  expect_spec_error(
      [&] {
        read_launch_config(path.string(), "",
                           {"model.optim.name=distributed_fused_adam", "+model.optim.contiguous_grad_buffer=false"});
      },
      "model.optim.contiguous_grad_buffer", "True under megatron_amp_O2", path.string());
}

// Every writer checks the optimizer states the stack priced against what its client keeps
// (export/optimizer_states_check.h): DeepSpeed's BF16, FP16 and ZeRO optimizers step FP32
// master partitions with FP32 moments (stacks/megatron-deepspeed*.json), Megatron-LM keeps
// master parameters, NxD Training keeps FP32 moments with or without masters (its manual
// precision), NeMo's distributed_fused_adam the 16-bit kinds. A stack file that prices another
// kind is refused naming the client's option, not written as a job that keeps other states.
TEST(LaunchConfig, EachFormatRefusesOptimizerStatesItsClientDoesNotKeep) {
  LaunchJob ds = llama2_70b_on_p5();
  ds.stack_name = "megatron-deepspeed-ms";
  ds.plan.virtual_stages = 1;
  ds.optimizer = spec::kBf16Optimizer;
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, ds, "x.sh"); }, "zero_optimization.stage",
                    "DeepSpeed 0.16.2 keeps FP32 master weights and FP32 Adam moments; stack "
                    "megatron-deepspeed-ms prices no master weights and BF16 Adam moments",
                    "deepspeed format");
  LaunchJob bloom = bloom_176b_on(1, 1);
  bloom.optimizer = spec::kMasterRemainders;
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, bloom, "x.sh"); }, "zero_optimization.stage",
                    "DeepSpeed 0.6.5 keeps FP32 master weights and FP32 Adam moments", "deepspeed format");

  LaunchJob megatron = llama2_70b_on_p5();
  megatron.stack_name = "megatron-lm";
  megatron.optimizer = spec::kNoMastersFp32Moments;
  expect_spec_error([&] { launch_files(LaunchFormat::megatron, megatron, "x.sh"); }, "--use-distributed-optimizer",
                    "prices no master weights and FP32 Adam moments", "megatron format");
  megatron.stack_name = "nemo";  // no NeMo optimizer keeps it either
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, megatron, "x.yaml"); }, "model.optim.name",
                    "prices no master weights and FP32 Adam moments", "nemo format");

  LaunchJob nxd = on_trn1(llama2_70b_on_p5());
  nxd.stack_name = "neuronx-distributed";
  nxd.plan.pp = 1;
  nxd.plan.virtual_stages = 1;
  nxd.optimizer = spec::kBf16Optimizer;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, nxd, "x.yaml"); }, "precision.master_weights",
                    "keeps FP32 master weights and FP32 Adam moments, or no master weights and FP32 Adam moments",
                    "nxd format");
  // FP32 and BF16-SR keep no masters beside 16-bit weights: nothing to check.
  nxd.workload.precision = spec::Precision::bf16_sr;
  EXPECT_FALSE(launch_files(LaunchFormat::nxd, nxd, "x.yaml").empty());
}

// bigscience Megatron-DeepSpeed@8387ae17 tokenizer.py:79 raises unless
// --pad-vocab-size-to divides by --make-vocab-size-divisible-by (default 128):
// GPT-2's 50,257 tokens, padded by nothing, must go with a multiple of 1.
TEST(LaunchConfig, BigscienceVocabularyPaddingDividesByItsMultiple) {
  LaunchJob job = bloom_176b_on(1, 1);
  job.model = spec::load_model("gpt2-xl");
  job.model_name = "gpt2-xl";
  job.plan.tp = 1;
  job.plan.micro_batch = 1;
  job.workload = {1024, 256, 0, spec::Precision::mixed_bf16};
  const std::string script = launch_files(LaunchFormat::deepspeed, job, "x.sh").front().text;
  std::smatch padded, multiple;
  ASSERT_TRUE(std::regex_search(script, padded, std::regex(R"(--pad-vocab-size-to (\d+))"))) << script;
  ASSERT_TRUE(std::regex_search(script, multiple, std::regex(R"(--make-vocab-size-divisible-by (\d+))"))) << script;
  EXPECT_EQ(std::stol(padded[1]) % std::stol(multiple[1]), 0) << script;
  EXPECT_EQ(std::stol(padded[1]), 50257);
}

// Megatron-LM core_r0.13.0's validate_args (arguments.py@73a28a10) and the MoE
// settings trainplan prices, as written into the script.
TEST(LaunchConfig, MegatronScriptsPassValidateArgs) {
  LaunchJob job = llama2_70b_on_p5();
  auto script = [&] { return launch_files(LaunchFormat::megatron, job, "x.sh").front().text; };
  // TP > 1 or CP > 1 without FSDP: CUDA_DEVICE_MAX_CONNECTIONS=1 is asserted (862-874).
  EXPECT_NE(script().find("export CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos);
  job.plan.tp = 1;
  job.plan.sp = false;
  job.plan.cp = 2;
  EXPECT_NE(script().find("export CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos);
  job.plan.cp = 1;
  EXPECT_EQ(script().find("CUDA_DEVICE_MAX_CONNECTIONS"), std::string::npos);
  // Megatron-FSDP (ZeRO 2/3): the distributed optimizer, no accumulation fusion, connections other than 1 (646-660).
  job.plan.tp = 8;
  job.plan.sp = true;
  for (int zero : {2, 3}) {
    job.plan.zero = zero;
    const std::string text = script();
    const ShellArgs args = parse_shell_args(text, "x.sh");
    EXPECT_TRUE(args.has("--use-custom-fsdp"));
    EXPECT_TRUE(args.has("--use-distributed-optimizer"));
    EXPECT_TRUE(args.has("--no-gradient-accumulation-fusion"));
    EXPECT_EQ(text.find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos) << text;
    EXPECT_NE(text.find("CUDA_DEVICE_MAX_CONNECTIONS=8"), std::string::npos) << text;
  }
  // MoE: the all-to-all dispatcher trainplan prices and grouped expert GEMMs (defaults: allgather, off).
  job = llama2_70b_on_p5();
  job.model = spec::load_model("mixtral-8x7b");
  job.plan.ep = 8;
  const ShellArgs moe = parse_shell_args(script(), "x.sh");
  EXPECT_EQ(moe.value("--moe-token-dispatcher-type"), "alltoall");
  EXPECT_TRUE(moe.has("--moe-grouped-gemm"));
  EXPECT_EQ(moe.value("--rotary-base"), "1000000");
  // Qwen2.5: biases on Q, K and V alone; Qwen3: QK-norm. Both read back.
  for (const char* name : {"qwen2.5-14b", "qwen3-30b-a3b"}) {
    job = llama2_70b_on_p5();
    job.model = spec::load_model(name);
    job.plan.pp = 1;
    job.plan.virtual_stages = 1;
    if (job.model.moe()) job.plan.ep = 8;
    const ReadLaunch back = round_trip(LaunchFormat::megatron, job, std::string(name) + ".sh");
    EXPECT_EQ(back.job.model.qkv_bias, job.model.qkv_bias) << name;
    EXPECT_EQ(back.job.model.qk_norm, job.model.qk_norm) << name;
    EXPECT_EQ(back.job.model.rope_theta, 1e6) << name;
    EXPECT_EQ(back.job.model.total_parameters(), job.model.total_parameters()) << name;
  }
}

std::string fixture(const std::string& name) { return std::string(TRAINPLAN_SOURCE_DIR) + "/tests/export/fixtures/" + name; }

// The clients' own examples (tests/export/fixtures, each naming its source), read
// as the client reads them: shell variables with defaults, option arrays with
// quoted "--option value" items, what the client switches off.
TEST(LaunchConfig, ClientExamplesAreReadAsTheClientReadsThem) {
  const ReadLaunch llama = read_launch_config(fixture("megatron-llama3-8b-h100-fp8.sh"));
  EXPECT_EQ(llama.format, LaunchFormat::megatron);
  EXPECT_EQ(llama.job.instances, 1);           // NUM_NODES=1
  EXPECT_EQ(llama.job.devices_per_instance, 8);  // GPUS_PER_NODE=8
  EXPECT_EQ(llama.job.plan.tp, 1);             // TP_SIZE=1
  EXPECT_FALSE(llama.job.plan.sp);             // --sequence-parallel at TP 1: Megatron switches it off
  EXPECT_EQ(llama.job.workload.seq_len, 8192);  // SEQ_LENGTH=8192
  EXPECT_EQ(llama.job.workload.global_batch_seqs, 128);
  EXPECT_EQ(llama.job.workload.precision, spec::Precision::fp8);  // "--fp8-format hybrid" split from its array item
  EXPECT_EQ(llama.job.plan.zero, 1);
  EXPECT_TRUE(llama.job.plan.overlap_dp_comm);  // appended with TRAINING_ARGS+=("${DDP_ARGS[@]}")
  EXPECT_TRUE(llama.job.bf16_grad_reduce);      // --grad-reduce-in-bf16: BF16 gradient buffers
  EXPECT_EQ(llama.job.stack_name, "megatron-lm-bf16-grads");
  ASSERT_TRUE(llama.job.has_architecture);
  EXPECT_EQ(llama.job.model.layers, 32);  // NUM_LAYERS=32
  EXPECT_EQ(llama.job.model.kv_heads, 8);
  EXPECT_EQ(llama.job.model.rope_theta, 1e6);
  // --sequence-parallel at TP 1, and what the script states that trainplan does not price.
  ASSERT_EQ(llama.job.notes.size(), 2u);
  EXPECT_NE(llama.job.notes[1].find("the client reads these, trainplan does not:"), std::string::npos);
  EXPECT_NE(llama.job.notes[1].find(" --fp8-amax-history-len"), std::string::npos) << llama.job.notes[1];
  EXPECT_EQ(llama.job.notes[1].find(" --master_addr"), std::string::npos) << llama.job.notes[1];  // the launcher's own

  const ReadLaunch mixtral = read_launch_config(fixture("megatron-mixtral-8x7b.sh"));
  EXPECT_EQ(mixtral.job.instances, 1);  // ${SLURM_NNODES:-"1"}
  EXPECT_EQ(mixtral.job.plan.pp, 4);
  EXPECT_EQ(mixtral.job.plan.ep, 8);
  EXPECT_FALSE(mixtral.job.has_architecture);  // no --vocab-size: what it states is kept for --model to match
  EXPECT_EQ(mixtral.job.model.experts, 8);
  EXPECT_EQ(mixtral.job.model.ffn_hidden, 14336);

  // A comment inside an option array, a three-value option and --fp16; the
  // published node count (1) is kept, so the plan is refused until it is set.
  const ReadLaunch gpt3 = read_launch_config(fixture("megatron-gpt3-175b.sh"));
  EXPECT_EQ(gpt3.job.instances, 1);  // NUM_NODES=1
  EXPECT_EQ(gpt3.job.plan.tp, 8);
  EXPECT_EQ(gpt3.job.plan.pp, 16);
  EXPECT_EQ(gpt3.job.workload.seq_len, 2048);
  EXPECT_EQ(gpt3.job.workload.global_batch_seqs, 1536);  // the ramp-up's end point is the priced batch
  EXPECT_EQ(gpt3.job.workload.precision, spec::Precision::mixed_bf16);
  EXPECT_EQ(gpt3.job.model.layers, 96);
  EXPECT_EQ(gpt3.job.model.heads, 96);
  EXPECT_FALSE(gpt3.job.has_architecture);  // no vocabulary size: --model names the model
  ASSERT_EQ(gpt3.job.notes.size(), 2u);
  EXPECT_NE(gpt3.job.notes[0].find("--fp16"), std::string::npos);
  EXPECT_NE(gpt3.job.notes[1].find("the client reads these, trainplan does not"), std::string::npos);

  const ReadLaunch nxd = read_launch_config(fixture("nxd-megatron-llama-7b.yaml"));
  EXPECT_EQ(nxd.format, LaunchFormat::nxd);
  EXPECT_EQ(nxd.job.plan.tp, 8);
  EXPECT_TRUE(nxd.job.plan.sp);
  EXPECT_EQ(nxd.job.plan.recompute, spec::Recompute::selective);
  EXPECT_EQ(nxd.job.model.ffn_hidden, 11008);
  const ReadLaunch hf = read_launch_config(fixture("nxd-hf-llama3-8b.yaml"));
  EXPECT_EQ(hf.job.instances, 4);
  EXPECT_EQ(hf.job.plan.tp, 32);
  EXPECT_EQ(hf.job.workload.seq_len, 8192);
  ASSERT_EQ(hf.job.notes.size(), 2u);  // and the keys trainplan does not read
  EXPECT_NE(hf.job.notes[0].find("model.model_config"), std::string::npos);
  EXPECT_NE(hf.job.notes[1].find("the client reads these, trainplan does not:"), std::string::npos);

  // NeMo launcher files: context parallelism read (it was ignored: the plan ran at DP 64 instead
  // of CP 2 x DP 32), and the launcher's interpolations resolved as its resolvers do.
  const ReadLaunch llama70 = read_launch_config(fixture("nemo-launcher-llama3.1-70b.yaml"));
  EXPECT_EQ(llama70.format, LaunchFormat::nemo);
  EXPECT_EQ(llama70.job.instances, 128);
  EXPECT_EQ(llama70.job.plan.tp, 4);
  EXPECT_EQ(llama70.job.plan.pp, 4);
  EXPECT_EQ(llama70.job.plan.virtual_stages, 10);
  EXPECT_EQ(llama70.job.plan.cp, 2);
  EXPECT_TRUE(llama70.job.plan.sp);
  EXPECT_TRUE(llama70.job.plan.overlap_tp_comm);
  EXPECT_EQ(llama70.job.plan.zero, 1);  // mcore_distributed_optim
  EXPECT_EQ(llama70.job.workload.seq_len, 8192);
  EXPECT_EQ(llama70.job.model.ffn_hidden, 28672);
  const ReadLaunch gpt5b = read_launch_config(fixture("nemo-launcher-gpt3-5b.yaml"));
  EXPECT_EQ(gpt5b.job.model.ffn_hidden, 16384);  // ${multiply:4, ${.hidden_size}}
  EXPECT_EQ(gpt5b.job.plan.virtual_stages, 1);   // null
  EXPECT_EQ(gpt5b.job.plan.micro_batch, 4);
  EXPECT_EQ(gpt5b.job.workload.global_batch_seqs, 2048);
  const ReadLaunch mixtral_nemo = read_launch_config(fixture("nemo-launcher-mixtral-8x7b.yaml"));
  EXPECT_EQ(mixtral_nemo.job.plan.ep, 8);  // expert_model_parallel_size (was dropped: EP 1)
  EXPECT_EQ(mixtral_nemo.job.plan.virtual_stages, 8);
  EXPECT_FALSE(mixtral_nemo.job.plan.sp);  // stated true at TP 1: NeMo switches it off
  EXPECT_EQ(mixtral_nemo.job.model.experts, 8);  // held against --model
  EXPECT_EQ(mixtral_nemo.job.stack_name, "nemo-alltoall");  // moe_token_dispatcher_type: alltoall
  ASSERT_EQ(mixtral_nemo.job.notes.size(), 2u);  // and the keys trainplan does not read
  EXPECT_NE(mixtral_nemo.job.notes[0].find("sequence_parallel"), std::string::npos);
  EXPECT_NE(mixtral_nemo.job.notes[1].find("the client reads these, trainplan does not:"), std::string::npos);
  const ReadLaunch llama405 = read_launch_config(fixture("nemo-launcher-llama3.1-405b.yaml"));
  EXPECT_EQ(llama405.job.instances, 576);
  EXPECT_EQ(llama405.job.plan.pp, 9);
  EXPECT_EQ(llama405.job.plan.virtual_stages, 7);
  EXPECT_EQ(llama405.job.plan.cp, 2);
  EXPECT_EQ(llama405.job.workload.global_batch_seqs, 2016);
  // NxD Training's ring-attention config: CP 2 read (it was dropped: the job ran as DP 2 x CP 1).
  const ReadLaunch nxd_cp = read_launch_config(fixture("nxd-hf-llama3-70b-cp.yaml"));
  EXPECT_EQ(nxd_cp.format, LaunchFormat::nxd);
  EXPECT_EQ(nxd_cp.job.plan.tp, 32);
  EXPECT_EQ(nxd_cp.job.plan.pp, 8);
  EXPECT_EQ(nxd_cp.job.plan.cp, 2);
  EXPECT_EQ(nxd_cp.job.instances, 16);
  // CP arrives with SDK 2.23: priced under the later releases' stack, which offers it.
  EXPECT_EQ(nxd_cp.job.stack_name, "neuronx-distributed-training");

  // Megatron-DeepSpeed scripts: a ds_config written by a here-document, options in a string
  // that prepends to itself, an if-branch that does not run, shell arithmetic, fork detection.
  const ReadLaunch llama2 = read_launch_config(fixture("mds-llama2-distributed.sh"));
  EXPECT_EQ(llama2.format, LaunchFormat::deepspeed);
  EXPECT_EQ(llama2.job.plan.tp, 2);
  EXPECT_EQ(llama2.job.plan.pp, 2);
  EXPECT_EQ(llama2.job.plan.micro_batch, 4);                    // from the here-document
  EXPECT_EQ(llama2.job.workload.global_batch_seqs, 32);
  EXPECT_EQ(llama2.job.workload.precision, spec::Precision::mixed_bf16);
  EXPECT_EQ(llama2.job.plan.recompute, spec::Recompute::none);  // the "true" branch does not run
  EXPECT_EQ(llama2.job.model.layers, 24);
  EXPECT_FALSE(llama2.job.has_architecture);  // no --vocab-size: --model names the model
  const ReadLaunch azure = read_launch_config(fixture("mds-azure-run-175b.sh"));
  // --no-pipeline-parallel is microsoft's; at ZeRO stage 3 its stack is the stage-3 one.
  EXPECT_EQ(azure.job.stack_name, "megatron-deepspeed-ms-zero3");
  EXPECT_EQ(azure.job.instances, 1);                          // deepspeed --num_nodes=$NODES
  EXPECT_EQ(azure.job.workload.global_batch_seqs, 32);        // $(( 8 * 4 * 1 ))
  EXPECT_EQ(azure.job.plan.zero, 3);
  EXPECT_EQ(azure.job.plan.recompute, spec::Recompute::full);
  EXPECT_EQ(azure.job.workload.precision, spec::Precision::mixed_bf16);
  ASSERT_FALSE(azure.job.notes.empty());
  EXPECT_NE(azure.job.notes[0].find("fp16.enabled"), std::string::npos);
}

TEST(ShellArgs, ArithmeticBranchesAndHereDocumentsAsTheShellRunsThem) {
  const ShellArgs a = parse_shell_args(
      "N=2\nG=$(( (N + 1) * 4 - 10 / 5 % 3 ))\nBAD=$(( N * ))\nX=on\n"
      "if [ \"$X\" = \"off\" ]; then\n  A=\"--a 1\"\nelif [[ $N -ge 2 ]]; then\n  A=\"--a 2\"\nelse\n  A=\"--a 3\"\nfi\n"
      "if [ -z \"$UNSET_EMPTY\" ]; then if [ 1 -eq 0 ]; then B=x; fi; fi\n"
      "cat <<EOF > $N.json\n{\"g\": $G}\nEOF\ncat <<'RAW' > raw.txt\n$G\nRAW\n"
      "OV=$(( 100000000000000000 * 100 ))\n"
      "run --g $G --bad $BAD $A --b ${B:-none} --ov $OV \"two \\\"quoted\\\" words\"\n",
      "f");
  EXPECT_EQ(a.value("--g"), "10");          // (2 + 1) * 4 - (10 / 5) % 3
  EXPECT_EQ(a.value("--bad"), "$(( N * ))");  // not arithmetic: kept as written
  EXPECT_EQ(a.value("--a"), "2");           // the elif branch, only
  EXPECT_EQ(a.value("--b"), "none");        // B set only in a branch that does not run
  EXPECT_EQ(a.value("--ov"), "$(( 100000000000000000 * 100 ))");  // past 64 bits: kept, never wrapped
  ASSERT_EQ(a.written_files.count("2.json"), 1u);
  EXPECT_EQ(a.written_files.at("2.json"), "{\"g\": 10}\n");
  EXPECT_EQ(a.written_files.at("raw.txt"), "$G\n");  // a quoted delimiter expands nothing
  EXPECT_NE(std::find(a.words.begin(), a.words.end(), "two \"quoted\" words"), a.words.end());
  EXPECT_THROW(parse_shell_args("cat <<EOF > x\nnever closed\n", "f"), spec::SpecError);
}

// A script run without arguments (as trainplan reads it): $# is 0, so an argument parser's
// `while [[ $# -gt 0 ]]` loop does not run and its assignments (ZERO_STAGE=$2) are not taken;
// $0 and ${BASH_SOURCE[0]} are the script's path, and dirname, basename and realpath of a
// path find the files beside it (microsoft/Megatron-DeepSpeed@f4157bea
// examples_deepspeed/universal_checkpointing/megatron_gpt/run_bf16.sh:12-16, 60-77).
TEST(ShellArgs, ArgumentsLoopsAndTheScriptsOwnPath) {
  const ShellArgs a = parse_shell_args(
      "script_path=$(realpath $0)\nscript_dir=$(dirname $script_path)\nCFG=\"$script_dir/ds_config.json\"\n"
      "Z=1\nwhile [[ $# -gt 0 ]]\ndo\nkey=\"$1\"\ncase $key in\n -z) Z=$2;\n shift\n ;;\nesac\nshift\ndone\n"
      "for i in 1 2; do L=body; done\nuntil [ 1 -eq 1 ]; do U=never; done\n"
      "run --config $CFG --z $Z --base $(basename ${BASH_SOURCE[0]}) --dir \"$(dirname \"$0\")\" --n $# --l $L --u ${U:-unset} "
      "--other $(date +%s)\n",
      "/jobs/x/run.sh");
  const std::string dir = std::filesystem::weakly_canonical("/jobs/x/run.sh").parent_path().string();
  EXPECT_EQ(a.value("--config"), dir + "/ds_config.json");
  EXPECT_EQ(a.value("--z"), "1");  // the loop over arguments never ran
  EXPECT_EQ(a.value("--base"), "run.sh");
  EXPECT_EQ(a.value("--dir"), "/jobs/x");
  EXPECT_EQ(a.value("--n"), "0");
  EXPECT_EQ(a.value("--l"), "body");  // a for body runs once (its loop variable is not followed)
  EXPECT_EQ(a.value("--u"), "unset");
  EXPECT_EQ(a.value("--other"), "$(date +%s)");  // any other command stays as written
}

// Microsoft's Megatron-DeepSpeed examples fill a ds_config template with a pipeline of seds
// (examples_deepspeed/rebase/ds_pretrain_gpt_1.3B.sh:290-295 at f4157bea): the file it writes is
// kept as the template's name and the edits, applied as sed applies them: in pipeline order, the
// first match on each line unless g, each sed reading what the one before wrote.
TEST(ShellArgs, SedPipelinesOverATemplateAreKeptAndAppliedAsSedDoes) {
  const ShellArgs a = parse_shell_args(
      "GBS=512\nout=\"cfg_${GBS}.json\"\nsed \"s/GBSIZE/${GBS}/\" tmpl.json \\\n    | sed \"s/Q/R/\" \\\n"
      "    | sed \"s/R/S/g\" \\\n      > ${out}\nsed \"s/X.Y/z/\" other.json > odd.json\nsed -n p log.txt\n",
      "f");
  ASSERT_EQ(a.templated_files.count("cfg_512.json"), 1u);
  const SedTemplate& t = a.templated_files.at("cfg_512.json");
  EXPECT_EQ(t.input, "tmpl.json");
  ASSERT_EQ(t.edits.size(), 3u);
  EXPECT_TRUE(t.unsupported.empty());
  EXPECT_EQ(apply_sed(t, "{\"train_batch_size\": GBSIZE, \"y\": GBSIZE}\nQ Q R\n"),
            "{\"train_batch_size\": 512, \"y\": GBSIZE}\nS Q S\n");
  // A regular expression is not applied as if literal: the file names the expression.
  ASSERT_EQ(a.templated_files.count("odd.json"), 1u);
  EXPECT_EQ(a.templated_files.at("odd.json").unsupported, "s/X.Y/z/");
  EXPECT_EQ(a.templated_files.size(), 2u);  // `sed -n p log.txt` writes no file
}

TEST(ShellArgs, VariablesExpandAsTheShellDoes) {
  const ShellArgs a = parse_shell_args(
      "TP=4\nNODES=${SLURM_NNODES:-\"2\"}\nSEQ=${1:-4096}\nARGS=(\n  \"--seq-length $SEQ\"\n)\n"
      "run --tp ${TP} --nnodes $NODES --x ${UNSET} --y $(date) ${ARGS[@]} --pp ${PP:-${TP}}\n",
      "f");
  EXPECT_EQ(a.value("--tp"), "4");
  EXPECT_EQ(a.value("--nnodes"), "2");
  EXPECT_EQ(a.value("--seq-length"), "4096");
  EXPECT_EQ(a.value("--x"), "${UNSET}");  // never set: left as written, refused where a number is needed
  EXPECT_EQ(a.value("--y"), "$(date)");
  EXPECT_EQ(a.value("--pp"), "4");  // a default that is itself a variable
  // A variable doubling itself 40 times, and defaults nested 100 deep: refused or left, never exhausting memory or stack.
  std::string doubling = "A=xx\n";
  for (int i = 0; i < 40; ++i) doubling += "A=$A$A\n";
  expect_spec_error([&] { parse_shell_args(doubling + "run --x $A\n", "f"); }, "", "65536 characters", "f");
  std::string nested = "run --x ";
  for (int i = 0; i < 100; ++i) nested += "${U:-";
  nested += "1" + std::string(100, '}') + "\n";
  EXPECT_NO_THROW(parse_shell_args(nested, "f"));
}

// A file that leaves the vocabulary to its tokenizer states the rest of its layer: KV heads, norm,
// MLP, positions, RoPE base, biases, QK-norm and top-k are held against the model named, as the
// shape is, so that no property the client builds is silently replaced (issue 38.4).
TEST(LaunchConfig, AStatedLayerIsHeldAgainstTheNamedModel) {
  ReadLaunch mixtral = read_launch_config(fixture("megatron-mixtral-8x7b.sh"));
  const spec::ModelSpec named = spec::load_model("mixtral-8x7b");
  EXPECT_NO_THROW(check_stated_architecture(mixtral, named, "f"));
  const std::vector<std::pair<std::string, std::function<void(spec::ModelSpec&)>>> changes = {
      {"--num-query-groups", [](spec::ModelSpec& m) { m.kv_heads = 32; }},
      {"--normalization", [](spec::ModelSpec& m) { m.norm = spec::NormKind::layernorm; }},
      {"--swiglu", [](spec::ModelSpec& m) { m.mlp = spec::MlpKind::gelu; }},
      {"--position-embedding-type", [](spec::ModelSpec& m) { m.position = spec::PositionKind::learned; }},
      {"--rotary-base", [](spec::ModelSpec& m) { m.rope_theta = 10000; }},
      {"--disable-bias-linear", [](spec::ModelSpec& m) { m.bias = true; }},
      {"--qk-layernorm", [](spec::ModelSpec& m) { m.qk_norm = true; }},
      {"--moe-router-topk", [](spec::ModelSpec& m) { m.top_k = 1; }}};
  for (const auto& [option, change] : changes) {
    spec::ModelSpec other = named;
    change(other);
    expect_spec_error([&] { check_stated_architecture(mixtral, other, "f"); }, option, "the file states");
  }
  ReadLaunch nemo = read_launch_config(fixture("nemo-launcher-llama3.1-405b.yaml"));
  expect_spec_error([&] { check_stated_architecture(nemo, spec::load_model("llama3.1-405b"), "f"); }, "model.num_query_groups",
                    "the file states 16");
  ReadLaunch nxd = read_launch_config(fixture("nxd-megatron-llama-7b.yaml"));
  spec::ModelSpec llama = spec::load_model("llama2-7b");
  EXPECT_NO_THROW(check_stated_architecture(nxd, llama, "f"));
  llama.norm = spec::NormKind::layernorm;
  expect_spec_error([&] { check_stated_architecture(nxd, llama, "f"); }, "model.normalization", "the file states rmsnorm");
  llama = spec::load_model("llama2-7b");
  llama.kv_heads = 8;
  expect_spec_error([&] { check_stated_architecture(nxd, llama, "f"); }, "model.num_kv_heads", "the file states 32");
}

TEST(LaunchConfig, BadFilesAreRefusedWithFileAndOption) {
  const fs::path yaml = scratch("bad.yaml");
  std::ofstream(yaml) << "trainer: {num_nodes: 2, devices: 8}\nmodel:\n  tensor_model_parallel_size: eight\n";
  expect_spec_error([&] { read_launch_config(yaml.string()); }, "model.tensor_model_parallel_size", "whole number",
                    yaml.string());
  std::ofstream(yaml) << "trainer: [1, 2\n";
  expect_spec_error([&] { read_launch_config(yaml.string()); }, "", "valid YAML", yaml.string());
  // A stray ',' hung the reader: yaml-cpp 0.7 hands it back as endless empty documents (fuzz_launch_yaml).
  std::ofstream(yaml) << "# a comment\n , x\n";
  expect_spec_error([&] { read_launch_config(yaml.string()); }, "", "line 2: a token no value starts with", yaml.string());
  const fs::path script = scratch("bad.sh");
  std::ofstream(script) << "torchrun pretrain_gpt.py --tensor-model-parallel-size 8 --micro-batch-size 1 --seq-length 4096 "
                           "--recompute-granularity sometimes\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--recompute-granularity", "full or selective",
                    script.string());
  std::ofstream(script) << "echo hello\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "", "a launcher config", script.string());
  const fs::path ds = scratch("bad.json");
  std::ofstream(ds) << "{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 7}}";
  expect_spec_error([&] { read_launch_config(ds.string()); }, "zero_optimization.stage", "0, 1, 2 or 3", ds.string());
}

// Issue 41's "silently wrong" launcher inputs: each read as the client would refuse it.
TEST(LaunchConfig, InputsTheClientRefusesAreRefused) {
  const fs::path yaml = scratch("repeat.yaml");
  // Hydra refuses a repeated key; yaml-cpp kept the first (2 nodes) without a word.
  std::ofstream(yaml) << "trainer:\n  num_nodes: 2\n  num_nodes: 4\n  devices: 8\nmodel:\n  micro_batch_size: 1\n";
  expect_spec_error([&] { read_launch_config(yaml.string()); }, "trainer.num_nodes", "each key once", yaml.string());
  std::ofstream(yaml) << "base: &b {num_nodes: 2}\ntrainer:\n  <<: *b\n  devices: 8\nmodel: {micro_batch_size: 1}\n";
  expect_spec_error([&] { read_launch_config(yaml.string()); }, "trainer.<<", "merge key", yaml.string());
  // NeMo 2.0.0 under FSDP (megatron_base_model.py@e938df32:1011-1020): FP8 raises; async TP is switched off.
  const std::string fsdp = "trainer: {num_nodes: 2, devices: 8, precision: bf16}\nmodel: {micro_batch_size: 1, "
                           "global_batch_size: 64, tensor_model_parallel_size: 2, sequence_parallel: true, "
                           "encoder_seq_length: 4096, fsdp: true, ";
  std::ofstream(yaml) << fsdp << "fp8: true}\n";
  expect_spec_error([&] { read_launch_config(yaml.string()); }, "model.fsdp", "Torch FSDP does not support FP8",
                    yaml.string());
  std::ofstream(yaml) << fsdp << "ub_tp_comm_overlap: true}\n";
  const ReadLaunch overlap = read_launch_config(yaml.string());
  EXPECT_FALSE(overlap.job.plan.overlap_tp_comm);
  ASSERT_FALSE(overlap.job.notes.empty());
  EXPECT_NE(overlap.job.notes.back().find("read as off"), std::string::npos);
  // Hydra reads one document; the second was dropped without a word.
  std::ofstream(yaml) << "trainer: {num_nodes: 2}\nmodel: {micro_batch_size: 1}\n---\nmodel: {micro_batch_size: 4}\n";
  expect_spec_error([&] { read_launch_config(yaml.string()); }, "", "another starts at line 3", yaml.string());
  const fs::path script = scratch("heads.sh");
  const std::string head = "torchrun pretrain_gpt.py --tensor-model-parallel-size 1 --num-layers 32 --hidden-size 4096 "
                           "--seq-length 2048 --micro-batch-size 1 --global-batch-size 8 --vocab-size 32000 --bf16 ";
  std::ofstream(script) << head << "--num-attention-heads 48\n";  // 4096 / 48 is not whole
  expect_spec_error([&] { read_launch_config(script.string()); }, "--num-attention-heads", "a divisor of --hidden-size",
                    script.string());
  std::ofstream(script) << head << "--num-attention-heads 32 --group-query-attention --num-query-groups 5\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--num-query-groups", "a divisor of", script.string());
  std::ofstream(script) << head << "--num-attention-heads 48 --kv-channels 128\n";  // stated head width: accepted
  EXPECT_EQ(read_launch_config(script.string()).job.model.explicit_head_dim, 128);
  // The default FFN width (4h, or 8h/3 rounded down to 64) wrapped an int or was 0 (fuzz_launch_script).
  std::ofstream(script) << head << "--num-attention-heads 1 --hidden-size 1073741824\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--ffn-hidden-size", "4294967296, is outside",
                    script.string());
  std::ofstream(script) << head << "--num-attention-heads 1 --hidden-size 16 --swiglu\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--ffn-hidden-size", "hidden-size, 0, is outside",
                    script.string());
  // Without --num-layers it was read as 0 virtual stages (fuzz_launch_script).
  std::ofstream(script) << "torchrun pretrain_gpt.py --micro-batch-size 1 --seq-length 2048 "
                           "--num-layers-per-virtual-pipeline-stage 2\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--num-layers", "beside", script.string());
  // Read as a rotary share of 2, which a model file refuses (fuzz_launch_script).
  std::ofstream(script) << head << "--num-attention-heads 32 --position-embedding-type rope --rotary-percent 2.0\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--rotary-percent", "(0, 1], found '2.0'",
                    script.string());
  const fs::path ds = scratch("batch.json");
  std::ofstream(ds) << "{\"train_batch_size\": 0, \"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true}}";
  expect_spec_error([&] { read_launch_config(ds.string()); }, "train_batch_size", "at least 1", ds.string());
  std::ofstream(ds) << "{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": 3}";
  expect_spec_error([&] { read_launch_config(ds.string()); }, "zero_optimization", "an object", ds.string());
}

// Which options take their value from the caller's environment: a
// ${NAME:-default} the script does not set, directly or through its own
// variables and arithmetic; a value the script states is its own.
TEST(ShellArgs, OptionsFromTheEnvironmentAreMarked) {
  const ShellArgs args = parse_shell_args(
      "NNODES=${SLURM_NNODES:-\"1\"}\nGPUS=8\nWORLD=$(($GPUS*$NNODES))\nNNODES_COPY=$NNODES\n"
      "torchrun --nnodes $NNODES --nproc_per_node $GPUS x.py --world $WORLD --copy=$NNODES_COPY --b 3\n",
      "x.sh");
  EXPECT_EQ(args.value("--nnodes"), "1");
  EXPECT_EQ(args.value("--world"), "8");
  EXPECT_EQ(args.from_environment, (std::set<std::string>{"--copy", "--nnodes", "--world"}));
  const ShellArgs stated = parse_shell_args("NNODES=2\ntorchrun --nnodes $NNODES x.py\n", "x.sh");
  EXPECT_TRUE(stated.from_environment.empty());
}

TEST(ShellArgs, QuotesContinuationsCommentsAndEquals) {
  const ShellArgs a = parse_shell_args("# a comment --not-an-option 3\nrun \\\n  --x 1 --flag --y='two words' --z=3 \"$@\"\n", "f");
  EXPECT_EQ(a.value("--x"), "1");
  EXPECT_EQ(a.value("--flag"), "");
  EXPECT_EQ(a.value("--y"), "two words");
  EXPECT_EQ(a.value("--z"), "3");
  EXPECT_FALSE(a.has("--not-an-option"));
  expect_spec_error([] { parse_shell_args("run --x 'open", "f"); }, "", "closing '", "f");
}

// A newline or ';' ends a command (bash(1) SHELL GRAMMAR, Lists), so a bare flag
// closing one takes no value from the next command's first word; inside a
// NAME=( ... ) array a newline separates items only, and an option's value on
// the next line stays its value.
TEST(ShellArgs, ABareFlagEndingACommandTakesNoValueFromTheNext) {
  const ShellArgs a = parse_shell_args(
      "torchrun pretrain_gpt.py --bf16\necho done\nrun --flag; ls -l\nrun --and && true\n"
      "ARGS=(\n  --tokenizer-model\n    /data/tok.model\n  --swiglu\n)\nrun ${ARGS[@]} --last\nset +x\n",
      "f");
  EXPECT_EQ(a.value("--bf16"), "");
  EXPECT_EQ(a.value("--flag"), "");
  EXPECT_EQ(a.value("--and"), "");
  EXPECT_EQ(a.value("--tokenizer-model"), "/data/tok.model");
  EXPECT_EQ(a.value("--last"), "");
  const ShellArgs continued = parse_shell_args("run --x \\\n  value\n", "f");
  EXPECT_EQ(continued.value("--x"), "value");  // a continuation ends no command
}

// --set on a launch script: NAME=VALUE in its environment, as `NAME=VALUE bash script.sh`.
// NVIDIA's Mixtral script takes its node count from ${SLURM_NNODES:-"1"}; the GPT-3 175B
// script sets NUM_NODES=1 itself, which wins over the environment, as in the shell.
TEST(LaunchConfig, ScriptOverridesAreTheScriptsEnvironment) {
  const std::string mixtral = fixture("clients/megatron-lm_train_mixtral_8x7b_distributed.sh");
  const ReadLaunch read = read_launch_config(mixtral, "", {"SLURM_NNODES=4"});
  EXPECT_EQ(read.job.instances, 4);
  EXPECT_FALSE(read.job.instances_from_environment);  // stated, not a default the job replaces
  const auto noted = [](const LaunchJob& job, const std::string& phrase) {
    return std::any_of(job.notes.begin(), job.notes.end(), [&](const std::string& n) { return n.find(phrase) != std::string::npos; });
  };
  EXPECT_TRUE(noted(read.job, "--set SLURM_NNODES=4: applied"));
  EXPECT_EQ(read_launch_config(mixtral).job.instances, 1);
  EXPECT_TRUE(read_launch_config(mixtral).job.instances_from_environment);

  const std::string gpt3 = fixture("clients/megatron-lm_train_gpt3_175b_distributed.sh");
  const ReadLaunch kept = read_launch_config(gpt3, "", {"NUM_NODES=16"});
  EXPECT_EQ(kept.job.instances, 1);
  EXPECT_TRUE(noted(kept.job, "--set NUM_NODES=16: the script sets NUM_NODES to '1' itself, so it has no effect"));

  // A value with spaces or quotes stays one word, as the environment holds it.
  EXPECT_EQ(read_launch_config(mixtral, "", {"SLURM_NNODES=2", "WANDB_NAME=a 'b' c"}).job.instances, 2);
  expect_spec_error([&] { read_launch_config(gpt3, "", {"model.num_nodes=16"}); }, "--set model.num_nodes=16",
                    "NAME=VALUE with NAME a shell variable", gpt3);
  expect_spec_error([&] { read_launch_config(gpt3, "", {"9NODES=1"}); }, "--set 9NODES=1", "a shell variable", gpt3);
}

// --set on a YAML: Hydra's overrides, after the file's own; a ds_config JSON takes none.
TEST(LaunchConfig, YamlOverridesAreHydras) {
  const std::string gpt = fixture("clients/nemo_megatron_gpt_config.yaml");
  const ReadLaunch read =
      read_launch_config(gpt, "", {"trainer.devices=8", "trainer.num_nodes=2", "model.tensor_model_parallel_size=2"});
  EXPECT_EQ(read.format, LaunchFormat::nemo);
  EXPECT_EQ(read.job.devices_per_instance, 8);
  EXPECT_EQ(read.job.instances, 2);
  EXPECT_EQ(read.job.plan.tp, 2);
  expect_spec_error([&] { read_launch_config(gpt, "", {"trainer.gpus=8"}); }, "--set trainer.gpus=8",
                    "add it with +trainer.gpus=8", gpt);
  // An exported file's own `+` overrides (its header line) come first, so --set replaces what they add.
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "nemo";
  const fs::path exported = scratch("overridden-export.yaml");
  std::ofstream(exported) << launch_files(LaunchFormat::nemo, job, exported.string()).front().text;
  EXPECT_TRUE(read_launch_config(exported.string()).job.plan.overlap_dp_comm);
  EXPECT_FALSE(read_launch_config(exported.string(), "", {"model.optim.overlap_grad_sync=false"}).job.plan.overlap_dp_comm);
  const std::string nxd = fixture("clients/nxdt_hf_llama3_8B_config.yaml");
  EXPECT_EQ(read_launch_config(nxd, "", {"trainer.num_nodes=16"}).job.instances, 16);
  EXPECT_EQ(read_launch_config(nxd, "", {"distributed_strategy.pipeline_model_parallel_size=4"}).job.plan.pp, 4);
  const fs::path json = scratch("overridden.json");
  std::ofstream(json) << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1})";
  expect_spec_error([&] { read_launch_config(json.string(), "", {"train_batch_size=16"}); }, "--set train_batch_size=16",
                    "a ds_config JSON is read as written", json.string());
}

// NeMo's example configs as NVIDIA/NeMo@8cfedd72 holds them (tests/export/fixtures/clients/SOURCES.md):
// megatron_llama_config.yaml trains at precision 32 (FP32, O2 off) on one device, which the launch's
// overrides turn into mixed BF16 with O2, as `python megatron_gpt_pretraining.py trainer.precision=bf16 ...`.
TEST(LaunchConfig, NemoExampleConfigWithTheLaunchsOverrides) {
  const std::string llama = fixture("clients/nemo_megatron_llama_config.yaml");
  EXPECT_EQ(read_launch_config(llama).job.workload.precision, spec::Precision::fp32);
  const ReadLaunch bf16 = read_launch_config(llama, "", {"trainer.precision=bf16", "model.megatron_amp_O2=True"});
  EXPECT_EQ(bf16.job.workload.precision, spec::Precision::mixed_bf16);
  // bf16 with O2 off is NeMo's O1 (FP32 parameters under autocast): refused, naming the overrides that price it.
  expect_spec_error([&] { read_launch_config(llama, "", {"trainer.precision=bf16"}); }, "model.megatron_amp_O2",
                    "--set model.megatron_amp_O2=True", llama);
  // FP16 as NeMo names it (megatron_trainer_builder.py@8cfedd72:123-130: 16, '16', '16-mixed'): O2 over
  // FP16 weights with a gradient scaler, priced as mixed BF16 (the same tensor-core rate and bytes).
  for (const char* half : {"16", "16-mixed"}) {
    const ReadLaunch fp16 = read_launch_config(llama, "", {std::string("trainer.precision=") + half, "model.megatron_amp_O2=True"});
    EXPECT_EQ(fp16.job.workload.precision, spec::Precision::mixed_bf16) << half;
    EXPECT_TRUE(fp16.job.mixed_fp16()) << half;
    EXPECT_TRUE(std::any_of(fp16.job.notes.begin(), fp16.job.notes.end(), [&](const std::string& n) {
      return n == "trainer.precision " + std::string(half) + " priced as mixed BF16 (same GEMM rate; loss scaling not priced)";
    }));
  }
  expect_spec_error([&] { read_launch_config(llama, "", {"trainer.precision=16", "model.megatron_amp_O2=True", "model.fp8=True"}); },
                    "model.fp8", "trainer.precision bf16 as well", llama);
  expect_spec_error([&] { read_launch_config(llama, "", {"trainer.precision=16"}); }, "model.megatron_amp_O2",
                    "True with 16, found False", llama);
  expect_spec_error([&] { read_launch_config(llama, "", {"trainer.precision=64"}); }, "trainer.precision",
                    "bf16, 16 or 32", llama);
}

}  // namespace
}  // namespace trainplan::exporting

namespace trainplan::exporting {
namespace {

// FP8 is --bf16 --fp8-format hybrid in Megatron-LM (arguments.py:1179) and
// model.fp8 / fp8_hybrid in NeMo (megatron_gpt_config.yaml:223, 225); NxD and
// bigscience Megatron-DeepSpeed offer none.
TEST(LaunchConfig, Fp8RoundTripsWhereTheStackOffersIt) {
  LaunchJob job = llama2_70b_on_p5();
  job.workload.precision = spec::Precision::fp8;
  expect_same_job(job, round_trip(LaunchFormat::megatron, job, "fp8.sh").job);
  job.stack_name = "nemo";
  expect_same_job(job, round_trip(LaunchFormat::nemo, job, "fp8.yaml").job);
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, on_trn1(job), "x.yaml"); }, "precision.type", "FP8");
}

// Nemotron's squared-ReLU MLP (models/nemotron4-15b.json "activation") is a
// different model from a GELU one of the same shapes: Megatron-LM and Microsoft's
// fork take --squared-relu (arguments.py:1446 at 73a28a10; :668 at f4157bea), NeMo
// activation 'squared-relu' (utils_funcs.py:170-214 at e938df32); bigscience's fork
// and NxD Training offer none and refuse it. Read back, the file states it, and a
// --model without it is a contradiction.
TEST(LaunchConfig, SquaredReluIsWrittenReadAndCheckedOrRefused) {
  LaunchJob job = llama2_70b_on_p5();
  job.model = spec::load_model("nemotron4-15b");
  job.model_name = "nemotron4-15b";
  job.plan.tp = 2;
  job.plan.pp = 1;
  job.plan.virtual_stages = 1;
  ASSERT_TRUE(job.model.squared_relu);
  const std::string script = launch_files(LaunchFormat::megatron, job, "x.sh").front().text;
  EXPECT_TRUE(parse_shell_args(script, "x.sh").has("--squared-relu")) << script;
  const ReadLaunch back = round_trip(LaunchFormat::megatron, job, "squared-relu.sh");
  EXPECT_TRUE(back.job.model.squared_relu);
  // Without --vocab-size the script states a partial architecture, held against --model.
  const std::size_t vocab = script.find("--vocab-size");
  ASSERT_NE(vocab, std::string::npos);
  ReadLaunch partial{LaunchFormat::megatron,
                     read_megatron(script.substr(0, vocab) + script.substr(script.find('\n', vocab)), "partial.sh")};
  spec::ModelSpec gelu = job.model;
  gelu.squared_relu = false;
  expect_spec_error([&] { check_stated_architecture(partial, gelu, "partial.sh"); }, "--swiglu", "squared-relu");
  check_stated_architecture(partial, job.model, "partial.sh");  // the model it is
  job.stack_name = "nemo";
  EXPECT_EQ(YAML::Load(launch_files(LaunchFormat::nemo, job, "x.yaml").front().text)["model"]["activation"].as<std::string>(),
            "squared-relu");
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, on_trn1(job), "x.yaml"); }, "model.activation", "squared ReLU");
  job.stack_name = "megatron-deepspeed";
  job.plan.sp = false;
  job.plan.recompute = spec::Recompute::full;
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, job, "x.sh"); }, "--glu-activation", "squared ReLU");
}

// FP8 parameters (stacks/nemo.json fp8_param_gather): NeMo takes
// +model.fp8_params=true, as NVIDIA's launcher examples pass it; Megatron-LM
// --fp8-param-gather (arguments.py@73a28a10:1208), only beside the distributed
// optimizer (:642-644). Read back, the job says so; a file without them reads
// as BF16 weights (the app prices what the file states, tests/cli).
TEST(LaunchConfig, Fp8ParametersAreWrittenAndReadBack) {
  LaunchJob job = llama2_70b_on_p5();
  job.workload.precision = spec::Precision::fp8;
  job.stack_name = "nemo";
  job.plan.zero = 1;
  job.fp8_param_gather = true;
  EXPECT_NE(launch_files(LaunchFormat::nemo, job, "x.yaml").front().text.find("+model.fp8_params=true"),
            std::string::npos);
  expect_same_job(job, round_trip(LaunchFormat::nemo, job, "fp8-params.yaml").job);
  EXPECT_TRUE(parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh")
                  .has("--fp8-param-gather"));
  expect_same_job(job, round_trip(LaunchFormat::megatron, job, "fp8-params.sh").job);
  job.plan.zero = 0;
  EXPECT_FALSE(parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh")
                   .has("--fp8-param-gather"));
  // The nemo stack's BF16 gradient buffers go to Megatron-LM as --grad-reduce-in-bf16.
  job.plan.zero = 1;
  job.bf16_grad_reduce = true;
  EXPECT_TRUE(parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh")
                  .has("--grad-reduce-in-bf16"));
  expect_same_job(job, round_trip(LaunchFormat::megatron, job, "bf16-grads.sh").job);
  job.bf16_grad_reduce = false;
  job.plan.zero = 1;
  job.fp8_param_gather = false;
  const auto without = round_trip(LaunchFormat::nemo, job, "fp8-bf16-weights.yaml");
  EXPECT_FALSE(without.job.fp8_param_gather);
  ASSERT_EQ(without.job.notes.size(), 1u);  // the keys trainplan does not read, model.fp8_params not among them
  EXPECT_EQ(without.job.notes[0].find("model.fp8_params"), std::string::npos);
}

// What Megatron-LM refuses of --fp8-param-gather, the reader refuses: without FP8
// (transformer_config.py@73a28a10:698-699) and without the distributed optimizer or
// torch FSDP2 (arguments.py@73a28a10:642-644). NVIDIA's own example passes all three.
TEST(LaunchConfig, Fp8ParametersNeedFp8AndAShardedOptimizer) {
  const std::string nvidia = spec::read_text_file(fixture("clients/megatron-lm_train_llama3_8b_h100_fp8.sh"));
  EXPECT_TRUE(read_megatron(nvidia, "nvidia.sh").fp8_param_gather);
  const auto without = [&](const std::string& option) {
    std::string text = nvidia;
    for (std::size_t at; (at = text.find(option)) != std::string::npos;) text.erase(at, option.size());
    return text;
  };
  expect_spec_error([&] { read_megatron(without("--use-distributed-optimizer"), "x.sh"); }, "--fp8-param-gather",
                    "--use-distributed-optimizer or --use-torch-fsdp2");
  expect_spec_error([&] { read_megatron(without("\"--fp8-format hybrid\""), "x.sh"); }, "--fp8-param-gather",
                    "--fp8-format as well");
  const LaunchJob bf16_weights = read_megatron(without("\"--fp8-param-gather\""), "x.sh");
  EXPECT_FALSE(bf16_weights.fp8_param_gather);
  EXPECT_EQ(bf16_weights.workload.precision, spec::Precision::fp8);
}

// A note is one line of the printed assumptions, but some quote the file's own
// text: a YAML key or value, a script's option value, each of which may hold a
// newline in quotes. They are written escaped, as errors write them (spec/one_line.h).
// fuzz_launch_yaml found the key (tests/fuzz/corpus/launch_yaml/unread-key-nul-escape-read-as-newline.yaml).
TEST(LaunchConfig, NotesQuotingTheFileStayOneLine) {
  const auto expect_one_line_notes = [](const LaunchJob& job, const std::string& escaped) {
    bool quoted = false;
    for (const std::string& note : job.notes) {
      EXPECT_EQ(note.find('\n'), std::string::npos) << note;
      quoted = quoted || note.find(escaped) != std::string::npos;
    }
    EXPECT_TRUE(quoted) << "no note says " << escaped;
  };
  const std::string nemo = spec::read_text_file(fixture("nemo-launcher-gpt3-5b.yaml"));
  std::string key = nemo;
  key.insert(key.find("\nmodel:\n") + 8, "  \"two\\nlines\": 1\n");
  expect_one_line_notes(read_nemo(key, "x.yaml"), " model.two\\nlines ");
  std::string reduce = nemo;
  reduce.replace(reduce.find("  fsdp: False"), 13, "  fsdp: True\n  fsdp_grad_reduce_dtype: \"b\\nf16\"");
  expect_one_line_notes(read_nemo(reduce, "x.yaml"), "model.fsdp_grad_reduce_dtype b\\nf16:");
  std::string script = spec::read_text_file(fixture("megatron-llama3-8b-h100-fp8.sh"));
  script.insert(script.find("--num-layers"), "--num-experts 8 --moe-token-dispatcher-type \"all\ngather\" ");
  expect_one_line_notes(read_megatron(script, "x.sh"), "--moe-token-dispatcher-type all\\ngather:");
}

}  // namespace
}  // namespace trainplan::exporting

namespace trainplan::exporting {
namespace {

// Stack megatron-deepspeed-ms: microsoft's Megatron-DeepSpeed fork. DeepSpeed's
// pipeline engine does not interleave, so the 70B plan runs without virtual stages.
LaunchJob llama2_70b_on_p5_microsoft_deepspeed() {
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "megatron-deepspeed-ms";
  job.plan.virtual_stages = 1;
  return job;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(LaunchConfig, MicrosoftDeepSpeedRoundTripKeepsPlanAndArchitecture) {
  LaunchJob job = llama2_70b_on_p5_microsoft_deepspeed();
  const ReadLaunch back = round_trip(LaunchFormat::deepspeed, job, "ms.sh");
  EXPECT_EQ(back.format, LaunchFormat::deepspeed);
  expect_same_job(job, back.job, /*dp_overlap_written=*/false);  // overlap_comm: ZeRO-2/3 only
  ASSERT_TRUE(back.job.has_architecture);
  const spec::ModelSpec& m = back.job.model;
  EXPECT_EQ(m.total_parameters(), job.model.total_parameters());
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.norm, spec::NormKind::rmsnorm);
  EXPECT_EQ(m.mlp, spec::MlpKind::swiglu);
  EXPECT_EQ(m.position, spec::PositionKind::rotary);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.bias);
  EXPECT_FALSE(m.dropout);
  // BF16 ZeRO-1 is DeepSpeed's BF16 optimizer, ds_config stage 0, even without pipeline parallelism.
  job.plan.pp = 1;
  job.plan.recompute = spec::Recompute::full;
  expect_same_job(job, round_trip(LaunchFormat::deepspeed, job, "ms-full.sh").job, false);
  EXPECT_NE(read_text(scratch("ms-full.ds_config.json")).find("\"stage\": 0"), std::string::npos);
  job.workload.precision = spec::Precision::fp32;
  job.plan.sp = false;
  job.plan.recompute = spec::Recompute::none;
  expect_same_job(job, round_trip(LaunchFormat::deepspeed, job, "ms-fp32.sh").job, false);

  // Without trainplan's header the fork's own options name the stack.
  std::string script = read_text(scratch("ms.sh"));
  script.erase(script.find("# trainplan:"), script.find('\n', script.find("# trainplan:")) + 1 - script.find("# trainplan:"));
  std::ofstream(scratch("ms-bare.sh")) << script;
  const ReadLaunch bare = read_launch_config(scratch("ms-bare.sh").string());
  EXPECT_EQ(bare.job.stack_name, "megatron-deepspeed-ms");
  EXPECT_EQ(bare.job.model_name, "");
  EXPECT_TRUE(bare.job.plan.sp);
  EXPECT_EQ(bare.job.plan.recompute, spec::Recompute::selective);
}

// Stack megatron-deepspeed-ms-bf16-accum: the BF16 optimizer under the pipeline engine over a BF16
// accumulator. ds_config stage 0 with bf16 and data_types.grad_accum_dtype "bf16" (DeepSpeed 0.16.2
// deepspeed/runtime/config.py:901, constants.py:426-427; engine.py:1264-1268 takes it under the
// pipeline engine), read back as the same stack, and export -> --from-config -> export the same files.
TEST(LaunchConfig, MicrosoftDeepSpeedBf16AccumulationIsWrittenAsGradAccumDtypeBf16) {
  LaunchJob job = llama2_70b_on_p5_microsoft_deepspeed();
  job.stack_name = "megatron-deepspeed-ms-bf16-accum";
  const auto files = launch_files(LaunchFormat::deepspeed, job, scratch("ms-bf16-accum.sh").string());
  ASSERT_EQ(files.size(), 2u);
  const ShellArgs args = parse_shell_args(files[0].text, "ms-bf16-accum.sh");
  EXPECT_FALSE(args.has("--no-pipeline-parallel"));
  EXPECT_EQ(args.value("--pipeline-model-parallel-size"), "4");
  EXPECT_TRUE(args.has("--bf16"));
  EXPECT_EQ(args.value("--zero-stage"), "0");
  const auto ds = nlohmann::json::parse(files[1].text);
  EXPECT_EQ(ds["data_types"]["grad_accum_dtype"], "bf16");
  EXPECT_EQ(ds["zero_optimization"]["stage"], 0);
  EXPECT_EQ(ds["bf16"]["enabled"], true);
  const ReadLaunch back = round_trip(LaunchFormat::deepspeed, job, "ms-bf16-accum.sh");
  expect_same_job(job, back.job, /*dp_overlap_written=*/false);
  EXPECT_EQ(back.job.stack_name, "megatron-deepspeed-ms-bf16-accum");
  LaunchJob again = back.job;
  again.model_name = job.model_name;
  again.model = job.model;
  const auto rewritten = launch_files(LaunchFormat::deepspeed, again, scratch("ms-bf16-accum.sh").string());
  ASSERT_EQ(rewritten.size(), 2u);
  EXPECT_EQ(rewritten[0].text, files[0].text);
  EXPECT_EQ(rewritten[1].text, files[1].text);
  // Without trainplan's header the ds_config alone names the stack.
  std::string script = read_text(scratch("ms-bf16-accum.sh"));
  script.erase(script.find("# trainplan:"), script.find('\n', script.find("# trainplan:")) + 1 - script.find("# trainplan:"));
  std::ofstream(scratch("ms-bf16-accum-bare.sh")) << script;
  EXPECT_EQ(read_launch_config(scratch("ms-bf16-accum-bare.sh").string()).job.stack_name, "megatron-deepspeed-ms-bf16-accum");
  // The FP32 accumulator (stack megatron-deepspeed-ms) writes no data_types.
  EXPECT_FALSE(nlohmann::json::parse(
                   launch_files(LaunchFormat::deepspeed, llama2_70b_on_p5_microsoft_deepspeed(), scratch("ms-fp32-accum.sh").string())[1].text)
                   .contains("data_types"));

  // DeepSpeed builds this optimizer for a BF16 model at stage 0 only: FP32 training (a BF16 accumulator beside an
  // FP32 model raises, engine.py:1278-1279) and FP16 are refused on writing.
  auto emit = [](const LaunchJob& j) { launch_files(LaunchFormat::deepspeed, j, "x.sh"); };
  LaunchJob other = job;
  other.workload.precision = spec::Precision::fp32;
  expect_spec_error([&] { emit(other); }, "bf16.enabled", "BF16 optimizer accumulating in BF16 only", "deepspeed format");
  other = job;
  other.fp16 = true;
  expect_spec_error([&] { emit(other); }, "bf16.enabled", "BF16 optimizer accumulating in BF16 only", "deepspeed format");
}

// Every option written for stack megatron-deepspeed-ms exists at the pinned
// commits. pretrain_gpt.py arguments: microsoft/Megatron-DeepSpeed@f4157bea
// megatron/arguments.py, the add_argument line of each; --deepspeed and
// --deepspeed_config: microsoft/DeepSpeed@v0.16.2 (b344c04d) deepspeed/__init__.py;
// ds_config keys: the same DeepSpeed's runtime/constants.py and runtime/zero/config.py.
TEST(LaunchConfig, MicrosoftDeepSpeedOptionsExistAtThePinnedCommits) {
  const std::set<std::string> known = {
      "--tensor-model-parallel-size" /*1149*/, "--pipeline-model-parallel-size" /*1154*/, "--sequence-parallel" /*972*/,
      "--micro-batch-size" /*801*/, "--global-batch-size" /*808*/, "--seq-length" /*1278*/,
      "--max-position-embeddings" /*630*/, "--num-layers" /*602*/, "--hidden-size" /*616*/, "--ffn-hidden-size" /*618*/,
      "--num-attention-heads" /*621*/, "--num-key-value-heads" /*623*/, "--use-rotary-position-embeddings" /*633*/, "--rotary-position-embeddings-theta" /*635*/,
      "--rotary-percent" /*638*/, "--swiglu" /*670*/, "--normalization" /*647, choices layernorm, rmsnorm*/,
      "--untie-embeddings-and-output-weights" /*680*/, "--disable-bias-linear" /*937*/, "--attention-dropout" /*768*/,
      "--hidden-dropout" /*770*/, "--vocab-size" /*1269*/, "--make-vocab-size-divisible-by" /*644*/, "--bf16" /*1113*/,
      "--recompute-granularity" /*830, choices full, selective*/, "--recompute-method" /*842*/,
      "--recompute-num-layers" /*851*/, "--deepspeed-activation-checkpointing" /*1524*/, "--zero-stage" /*1487*/,
      // DeepSpeed v0.16.2 deepspeed/__init__.py
      "--deepspeed" /*248*/, "--deepspeed_config" /*253*/,
      // torch.distributed.run
      "--nnodes", "--nproc_per_node", "--rdzv_endpoint", "--rdzv_backend"};
  const std::set<std::string> ds_keys = {
      "train_batch_size" /*constants.py:17*/, "train_micro_batch_size_per_gpu" /*constants.py:93*/,
      "gradient_accumulation_steps" /*constants.py:105*/, "zero_optimization.stage" /*zero/config.py:52, 90*/,
      "zero_optimization.overlap_comm" /*zero/config.py:133*/, "bf16.enabled" /*constants.py:123, 126*/,
      "fp16.enabled" /*constants.py:151, 153*/};
  const std::set<std::string> values = {"rmsnorm", "layernorm", "full", "selective", "uniform"};
  LaunchJob job = llama2_70b_on_p5_microsoft_deepspeed();
  for (auto precision : {spec::Precision::mixed_bf16, spec::Precision::fp32})
    for (auto recompute : {spec::Recompute::none, spec::Recompute::selective, spec::Recompute::full})
      for (int pp : {1, 4}) {
        job.workload.precision = precision;
        job.plan.recompute = recompute;
        job.plan.pp = pp;
        job.plan.sp = pp == 4;
        job.model.rotary_fraction = pp == 1 ? 0.25 : 1.0;
        const auto files = launch_files(LaunchFormat::deepspeed, job, scratch("opts.sh").string());
        ASSERT_EQ(files.size(), 2u);
        const ShellArgs args = parse_shell_args(files[0].text, "opts.sh");
        for (const auto& [option, value] : args.options) {
          EXPECT_TRUE(known.count(option)) << option << " is not a Megatron-DeepSpeed@f4157bea option";
          if (option == "--normalization" || option == "--recompute-granularity" || option == "--recompute-method")
            EXPECT_TRUE(values.count(value)) << option << " " << value;
        }
        const auto ds = nlohmann::json::parse(files[1].text);  // loads as JSON
        for (const auto& [key, value] : ds.items()) {
          if (value.is_object())
            for (const auto& [inner, v] : value.items()) EXPECT_TRUE(ds_keys.count(key + "." + inner)) << key << "." << inner;
          else
            EXPECT_TRUE(ds_keys.count(key)) << key << " is not a DeepSpeed 0.16.2 key";
        }
        // BF16 rides DeepSpeed's BF16 optimizer (ZeRO stage 0 with FP32 gradient accumulation).
        EXPECT_EQ(ds["zero_optimization"]["stage"], precision == spec::Precision::mixed_bf16 ? 0 : 1);
      }
}

TEST(LaunchConfig, MicrosoftDeepSpeedRefusesWhatItCannotExpress) {
  auto emit = [](const LaunchJob& job) { launch_files(LaunchFormat::deepspeed, job, "x.sh"); };
  LaunchJob job = llama2_70b_on_p5_microsoft_deepspeed();
  job.plan.virtual_stages = 2;
  expect_spec_error([&] { emit(job); }, "--num-layers-per-virtual-pipeline-stage", "does not interleave", "deepspeed format");
  job = llama2_70b_on_p5_microsoft_deepspeed();
  job.workload.precision = spec::Precision::bf16_sr;
  expect_spec_error([&] { emit(job); }, "bf16.enabled", "stochastic rounding", "deepspeed format");
  job.workload.precision = spec::Precision::fp8;
  expect_spec_error([&] { emit(job); }, "--fp8-hybrid", "transformer_engine", "deepspeed format");
  job = llama2_70b_on_p5_microsoft_deepspeed();
  job.plan.overlap_tp_comm = true;
  expect_spec_error([&] { emit(job); }, "--tp-comm-overlap", "no async TP");
  job = llama2_70b_on_p5_microsoft_deepspeed();
  job.plan.zero = 2;
  expect_spec_error([&] { emit(job); }, "zero_optimization.stage", "pipeline parallelism");
  job.plan.pp = 1;
  expect_spec_error([&] { emit(job); }, "zero_optimization.stage", "--no-pipeline-parallel");
  job = llama2_70b_on_p5_microsoft_deepspeed();
  job.plan.tp = 16;  // 8 KV heads cannot be divided over 16 ranks
  expect_spec_error([&] { emit(job); }, "--num-key-value-heads", "a multiple of TP");
  job = llama2_70b_on_p5_microsoft_deepspeed();
  job.plan.tp = 1;
  expect_spec_error([&] { emit(job); }, "--sequence-parallel", "TP > 1");

  // Reading: one fork's options at a time, and no virtual stages.
  const fs::path script = scratch("mixed-fork.sh");
  std::ofstream(scratch("mixed-fork.ds_config.json")) << "{\"train_micro_batch_size_per_gpu\": 1}";
  std::ofstream(script) << "pretrain_gpt.py --deepspeed --deepspeed_config mixed-fork.ds_config.json --normalization rmsnorm "
                           "--pad-vocab-size-to 32000\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--normalization", "--pad-vocab-size-to bigscience's",
                    script.string());
  std::ofstream(script) << "pretrain_gpt.py --deepspeed --deepspeed_config mixed-fork.ds_config.json --swiglu "
                           "--num-layers-per-virtual-pipeline-stage 2\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--num-layers-per-virtual-pipeline-stage",
                    "does not interleave", script.string());
  // Full granularity without the uniform method checkpoints nothing in the pipeline model (gpt_model.py:446-452).
  std::ofstream(script) << "pretrain_gpt.py --deepspeed --deepspeed_config mixed-fork.ds_config.json --swiglu "
                           "--recompute-granularity full\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--recompute-method", "uniform", script.string());

  // Any option only one fork's megatron/arguments.py defines tells the fork, read or not by trainplan
  // (each fork's strict parse_args would exit on the other's): microsoft's --lr-warmup-tokens
  // (microsoft/Megatron-DeepSpeed@f4157bea arguments.py:1042), bigscience's --codecarbon-dir
  // (bigscience-workshop/Megatron-DeepSpeed@8387ae17 arguments.py:566). A script with neither runs on both:
  // read as the fork its stack names (none: bigscience's, as before), and said, with how to choose the other.
  const std::string common = "pretrain_gpt.py --deepspeed --deepspeed_config mixed-fork.ds_config.json "
                             "--tensor-model-parallel-size 1 --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                             "--seq-length 128";
  auto fork_note = [](const ReadLaunch& r) {
    for (const std::string& n : r.job.notes)
      if (n.find("no option only one Megatron-DeepSpeed fork") != std::string::npos) return n;
    return std::string();
  };
  std::ofstream(script) << common << " --lr-warmup-tokens 1000\n";
  ReadLaunch read = read_launch_config(script.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms");
  EXPECT_EQ(fork_note(read), "");
  std::ofstream(script) << common << " --codecarbon-dir /tmp/cc\n";
  read = read_launch_config(script.string());
  EXPECT_EQ(read.job.stack_name, "");  // bigscience's: the format's own stack
  EXPECT_EQ(fork_note(read), "");
  std::ofstream(script) << common << " --lr-warmup-tokens 1000 --codecarbon-dir /tmp/cc\n";
  expect_spec_error([&] { read_launch_config(script.string()); }, "--lr-warmup-tokens", "--codecarbon-dir bigscience's");
  std::ofstream(script) << common << "\n";
  read = read_launch_config(script.string());
  EXPECT_EQ(read.job.stack_name, "");
  EXPECT_NE(fork_note(read).find("read as bigscience's fork (DeepSpeed 0.6.5, always the pipeline engine); give --stack "
                                 "megatron-deepspeed-ms"),
            std::string::npos)
      << fork_note(read);
  read = read_launch_config(script.string(), "megatron-deepspeed-ms");
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms");
  EXPECT_NE(fork_note(read).find("read as microsoft's fork (DeepSpeed 0.16.2), as stack megatron-deepspeed-ms names; give "
                                 "--stack megatron-deepspeed to read it as bigscience's"),
            std::string::npos)
      << fork_note(read);
  read = read_launch_config(script.string(), "megatron-deepspeed");
  EXPECT_NE(fork_note(read).find("as stack megatron-deepspeed names"), std::string::npos) << fork_note(read);
}

}  // namespace
}  // namespace trainplan::exporting

namespace trainplan::exporting {
namespace {

// Edge layer slots: Megatron-LM writes both --account-for-*-in-pipeline-split
// options (core_r0.13.0 arguments.py 2342, 2345), the bigscience fork
// --pp-partition-method 'type:transformer|embedding' (bigscience-workshop/
// Megatron-DeepSpeed@8387ae17 megatron/arguments.py 578); both read back.
// NeMo and NxD are refused naming the option.
TEST(LaunchConfig, EdgeLayerSlotsRoundTrip) {
  LaunchJob job = llama2_70b_on_p5();
  job.plan.virtual_stages = 1;
  job.plan.pp = 2;  // 80 layers + 2 slots over 2 stages
  job.plan.edge_layer_slots = true;
  const ShellArgs args = parse_shell_args(launch_files(LaunchFormat::megatron, job, "x.sh").front().text, "x.sh");
  EXPECT_TRUE(args.has("--account-for-embedding-in-pipeline-split"));
  EXPECT_TRUE(args.has("--account-for-loss-in-pipeline-split"));
  EXPECT_TRUE(round_trip(LaunchFormat::megatron, job, "slots.sh").job.plan.edge_layer_slots);
  job.stack_name = "nemo";
  expect_spec_error([&] { launch_files(LaunchFormat::nemo, job, "x.yaml"); }, "model.pipeline_model_parallel_size",
                    "edge layer slots");

  LaunchJob bloom = bloom_176b_on(48, 12);
  bloom.plan.edge_layer_slots = true;
  const std::string script = launch_files(LaunchFormat::deepspeed, bloom, scratch("bloom-slots.sh").string()).front().text;
  EXPECT_NE(script.find("--pp-partition-method 'type:transformer|embedding'"), std::string::npos) << script;
  const ReadLaunch ds = round_trip(LaunchFormat::deepspeed, bloom, "bloom-slots.sh");
  EXPECT_TRUE(ds.job.plan.edge_layer_slots);
}

}  // namespace
}  // namespace trainplan::exporting

namespace trainplan::exporting {
namespace deepspeed_client_rules {

// What bigscience Megatron-DeepSpeed@8387ae17 and DeepSpeed 0.6.5 reject or run
// otherwise, as tools/check_deepspeed_config.py found running their code.
TEST(LaunchConfig, DeepSpeedExportFollowsTheClientsRules) {
  LaunchJob job = bloom_176b_on(48, 1);
  job.workload.global_batch_seqs = 1536;
  // BF16 ZeRO-1 at PP 1 still runs the pipeline engine, which raises at stage 1 (pipe/engine.py:260-265).
  auto files = launch_files(LaunchFormat::deepspeed, job, scratch("pp1.sh").string());
  EXPECT_NE(files[1].text.find("\"stage\": 0"), std::string::npos) << files[1].text;
  // A rotary SwiGLU model: no --max-position-embeddings (arguments.py:257-264), and the
  // bias-GeLU fusion off (arguments.py:285-286).
  job.model.position = spec::PositionKind::rotary;
  job.model.rotary_fraction = 1.0;
  job.model.mlp = spec::MlpKind::swiglu;
  files = launch_files(LaunchFormat::deepspeed, job, scratch("rotary.sh").string());
  EXPECT_EQ(files[0].text.find("--max-position-embeddings"), std::string::npos) << files[0].text;
  EXPECT_NE(files[0].text.find("--no-bias-gelu-fusion"), std::string::npos);
  // FP32 at ZeRO-1: DeepSpeed 0.6.5 would all-reduce the gradients in FP16.
  LaunchJob fp32 = job;
  fp32.workload.precision = spec::Precision::fp32;
  expect_spec_error([&] { launch_files(LaunchFormat::deepspeed, fp32, "x.sh"); }, "zero_optimization.stage", "FP16");
  // An FP16 stack writes FP16 in both files and stays FP16 when read back.
  LaunchJob fp16 = bloom_176b_on(48, 1);
  fp16.workload.global_batch_seqs = 1536;
  fp16.stack_name = "megatron-deepspeed-fp16";
  fp16.fp16 = true;
  files = launch_files(LaunchFormat::deepspeed, fp16, scratch("fp16.sh").string());
  EXPECT_NE(files[0].text.find("--fp16"), std::string::npos);
  EXPECT_EQ(files[0].text.find("--bf16"), std::string::npos);
  EXPECT_NE(files[1].text.find("\"stage\": 1"), std::string::npos) << files[1].text;  // FP16 ZeRO-1: no BF16 optimizer
  const ReadLaunch back = round_trip(LaunchFormat::deepspeed, fp16, "fp16.sh");
  EXPECT_TRUE(back.job.fp16);
  expect_same_job(fp16, back.job, false);
}

}  // namespace deepspeed_client_rules
}  // namespace trainplan::exporting

namespace trainplan::exporting {
namespace microsoft_zero3 {

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// microsoft/Megatron-DeepSpeed@f4157bea's examples_deepspeed/azure/run-175b.sh, as its repository
// holds it, with one edit: `from` replaced by `to` (each must occur). Written beside a copy of
// nothing else: the ds_config is the script's own here-document.
fs::path azure_script_with(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = spec::read_text_file(fixture("clients/megatron-deepspeed_azure_run-175b.sh"));
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  const fs::path path = scratch(name);
  std::ofstream(path) << text;
  return path;
}

// Stack megatron-deepspeed-ms-zero3: the fork without DeepSpeed's pipeline engine
// (--no-pipeline-parallel: pretrain_gpt.py@f4157bea:51 builds GPTModel), ZeRO-3, FP16,
// the stack's bucket (9e7 elements) and sub-group (1e9) in ds_config; every option and key
// exists at the pinned commits: --no-pipeline-parallel (arguments.py:954), --fp16 (:1111);
// DeepSpeed v0.16.2 zero/config.py contiguous_gradients (:97), reduce_bucket_size (:108),
// sub_group_size (:167).
TEST(LaunchConfig, MicrosoftDeepSpeedZeroThreeIsWrittenAsRun175bRunsIt) {
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "megatron-deepspeed-ms-zero3";
  job.plan.pp = 1;
  job.plan.virtual_stages = 1;
  job.plan.zero = 3;
  job.plan.recompute = spec::Recompute::full;
  job.fp16 = true;
  job.zero_reduce_bucket_elements = 90000000;
  job.zero3_sub_group_elements = 1000000000;
  const auto files = launch_files(LaunchFormat::deepspeed, job, scratch("z3.sh").string());
  ASSERT_EQ(files.size(), 2u);
  const ShellArgs args = parse_shell_args(files[0].text, "z3.sh");
  EXPECT_TRUE(args.has("--no-pipeline-parallel"));
  EXPECT_TRUE(args.has("--fp16"));
  EXPECT_FALSE(args.has("--bf16"));
  EXPECT_EQ(args.value("--zero-stage"), "3");
  EXPECT_TRUE(args.has("--deepspeed-activation-checkpointing"));
  const auto ds = nlohmann::json::parse(files[1].text);
  EXPECT_EQ(ds["zero_optimization"]["stage"], 3);
  EXPECT_EQ(ds["zero_optimization"]["overlap_comm"], true);
  EXPECT_EQ(ds["zero_optimization"]["contiguous_gradients"], true);
  EXPECT_EQ(ds["zero_optimization"]["reduce_bucket_size"], 90000000);
  EXPECT_EQ(ds["zero_optimization"]["sub_group_size"], 1000000000);
  EXPECT_EQ(ds["fp16"]["enabled"], true);
  EXPECT_EQ(ds["bf16"]["enabled"], false);
  // Read back: the same job, the same stack, the bucket and sub-group as written.
  const ReadLaunch back = round_trip(LaunchFormat::deepspeed, job, "z3.sh");
  expect_same_job(job, back.job);
  EXPECT_TRUE(back.job.fp16);
  EXPECT_EQ(back.job.zero_reduce_bucket_elements, 90000000);
  EXPECT_EQ(back.job.zero3_sub_group_elements, 1000000000);

  // What the stack does not describe is refused, naming the option and DeepSpeed 0.16.2.
  auto emit = [](const LaunchJob& j) { launch_files(LaunchFormat::deepspeed, j, "x.sh"); };
  LaunchJob other = job;
  other.plan.zero = 1;
  expect_spec_error([&] { emit(other); }, "zero_optimization.stage", "DeepSpeed 0.16.2's stage-3", "deepspeed format");
  other = job;
  other.workload.precision = spec::Precision::fp32;
  other.fp16 = false;
  expect_spec_error([&] { emit(other); }, "fp16.enabled", "second FP32 partition", "deepspeed format");
  other = job;
  other.plan.pp = 2;
  expect_spec_error([&] { emit(other); }, "zero_optimization.stage", "pipeline parallelism", "deepspeed format");
  // The pipeline stack names the stage-3 one for ZeRO-3.
  other = job;
  other.stack_name = "megatron-deepspeed-ms";
  expect_spec_error([&] { emit(other); }, "zero_optimization.stage", "--stack megatron-deepspeed-ms-zero3", "deepspeed format");
}

// run-175b.sh read as DeepSpeed 0.16.2 and the fork run it: the stage-3 stack with the
// script's bucket and sub-group ("sub_group_size": 1e9, a JSON real); what the fork or
// DeepSpeed would run otherwise than any stack prices is refused naming the field.
TEST(LaunchConfig, Run175bIsReadAtZeroThreeAndItsVariantsAreRefusedOrSaid) {
  const ReadLaunch azure = read_launch_config(fixture("clients/megatron-deepspeed_azure_run-175b.sh"));
  EXPECT_EQ(azure.job.stack_name, "megatron-deepspeed-ms-zero3");
  EXPECT_EQ(azure.job.plan.zero, 3);
  EXPECT_EQ(azure.job.plan.pp, 1);
  EXPECT_TRUE(azure.job.plan.overlap_dp_comm);  // "overlap_comm": true, applied at stage 3
  EXPECT_TRUE(azure.job.fp16);
  EXPECT_EQ(azure.job.plan.recompute, spec::Recompute::full);
  EXPECT_EQ(azure.job.zero_reduce_bucket_elements, 90000000);
  EXPECT_EQ(azure.job.zero3_sub_group_elements, 1000000000);

  // ZeRO-2 with the file's overlap_comm: DeepSpeed's stage_1_and_2.py optimizer reducing into two buckets
  // on a side stream (stage_1_and_2.py:1046-1047, 2046-2051), stack megatron-deepspeed-ms-nopipe with DP overlap.
  fs::path f = azure_script_with("z2.sh", "\"stage\": 3", "\"stage\": 2");
  const ReadLaunch z2 = read_launch_config(f.string());
  EXPECT_EQ(z2.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(z2.job.plan.zero, 2);
  EXPECT_TRUE(z2.job.plan.overlap_dp_comm);
  // Without --no-pipeline-parallel the fork builds GPTModelPipe, whose engine rejects ZeRO-3; with
  // --sequence-parallel still telling microsoft's fork, the option is named, else the stage.
  f = azure_script_with("z3-pipe.sh", "ds_args=\" --no-pipeline-parallel ${ds_args}\"", "ds_args=\" --sequence-parallel ${ds_args}\"");
  expect_spec_error([&] { read_launch_config(f.string()); }, "--no-pipeline-parallel", "pipeline engine rejects ZeRO-2 and -3",
                    f.string());
  f = azure_script_with("z3-bigscience.sh", "ds_args=\" --no-pipeline-parallel ${ds_args}\"", "");
  expect_spec_error([&] { read_launch_config(f.string()); }, "zero_optimization.stage", "--no-pipeline-parallel");
  // FP32 at stage 3 keeps a second FP32 partition (stage3.py:903-905).
  f = azure_script_with("z3-fp32.sh", "    \"enabled\": true,\n    \"initial_scale_power\"", "    \"enabled\": false,\n    \"initial_scale_power\"");
  std::string text = text_of(f);
  text.erase(text.find("    --fp16 \\\n"), std::string("    --fp16 \\\n").size());
  std::ofstream(f) << text;
  expect_spec_error([&] { read_launch_config(f.string()); }, "fp16.enabled", "second FP32 partition");
  // The script's own alternative, optimizer states offloaded to the CPU, is not priced.
  f = azure_script_with("z3-offload.sh", "OFFLOAD_DEVICE=\"none\"", "OFFLOAD_DEVICE=\"cpu\"");
  expect_spec_error([&] { read_launch_config(f.string()); }, "zero_optimization.offload_optimizer.device", "no CPU or NVMe offload");
  // DeepSpeed's defaults where the ds_config is silent (zero/config.py:108, :167).
  f = azure_script_with("z3-defaults.sh", "    \"reduce_bucket_size\": 90000000,\n    \"sub_group_size\": 1e9,\n", "");
  const ReadLaunch defaults = read_launch_config(f.string());
  EXPECT_EQ(defaults.job.zero_reduce_bucket_elements, 500000000);
  EXPECT_EQ(defaults.job.zero3_sub_group_elements, 1000000000);
  // A fractional element count is not one.
  f = azure_script_with("z3-frac.sh", "\"reduce_bucket_size\": 90000000", "\"reduce_bucket_size\": 9.5");
  expect_spec_error([&] { read_launch_config(f.string()); }, "zero_optimization.reduce_bucket_size", "a whole number");
}

}  // namespace microsoft_zero3
}  // namespace trainplan::exporting

namespace trainplan::exporting {
namespace microsoft_nopipe {

// microsoft/Megatron-DeepSpeed@f4157bea's examples_deepspeed/rebase/ds_pretrain_gpt_1.3B.sh beside its
// ds_config_gpt_TEMPLATE.json, as the repository holds them, each with the edits given (every `from`
// must occur), copied to a folder of their own: the script fills the template with sed.
fs::path rebase_with(const std::string& name, const std::vector<std::pair<std::string, std::string>>& script_edits,
                     const std::vector<std::pair<std::string, std::string>>& template_edits = {}) {
  const fs::path dir = scratch(name);
  fs::create_directories(dir);
  auto copy = [&](const std::string& file, const std::vector<std::pair<std::string, std::string>>& edits) {
    std::string text = spec::read_text_file(fixture("clients/megatron-deepspeed_rebase/" + file));
    for (const auto& [from, to] : edits) {
      const std::size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    std::ofstream(dir / file) << text;
  };
  copy("ds_pretrain_gpt_1.3B.sh", script_edits);
  copy("ds_config_gpt_TEMPLATE.json", template_edits);
  return dir / "ds_pretrain_gpt_1.3B.sh";
}

// Stack megatron-deepspeed-ms-nopipe written as the rebase script runs it: --no-pipeline-parallel,
// --fp16, ds_config stage 0 (FP16_Optimizer), 1 (the stage-1 optimizer) or 2 (the same optimizer
// partitioning gradients, as run_deepspeed_example.sh) with overlap_comm off;
// read back the same job under the same stack. Every option and key exists at the pinned commits:
// --no-pipeline-parallel (arguments.py:954), --fp16 (:1111), --zero-stage (:1487); DeepSpeed v0.16.2
// zero/config.py stage, overlap_comm (:133), fp16.enabled (constants.py:151, 153).
TEST(LaunchConfig, MicrosoftDeepSpeedWithoutPipelineIsWrittenAsTheRebaseScriptRunsIt) {
  LaunchJob job = llama2_70b_on_p5();
  job.stack_name = "megatron-deepspeed-ms-nopipe";
  job.plan.pp = 1;
  job.plan.virtual_stages = 1;
  job.plan.zero = 0;
  job.plan.recompute = spec::Recompute::full;
  job.plan.overlap_dp_comm = false;
  job.fp16 = true;
  for (int zero : {0, 1, 2}) {
    job.plan.zero = zero;
    const std::string name = "nopipe-z" + std::to_string(zero) + ".sh";
    const auto files = launch_files(LaunchFormat::deepspeed, job, scratch(name).string());
    ASSERT_EQ(files.size(), 2u);
    const ShellArgs args = parse_shell_args(files[0].text, name);
    EXPECT_TRUE(args.has("--no-pipeline-parallel"));
    EXPECT_TRUE(args.has("--fp16"));
    EXPECT_FALSE(args.has("--bf16"));
    EXPECT_EQ(args.value("--zero-stage"), std::to_string(zero));
    const auto ds = nlohmann::json::parse(files[1].text);
    EXPECT_EQ(ds["zero_optimization"]["stage"], zero);
    EXPECT_EQ(ds["zero_optimization"]["overlap_comm"], false);
    EXPECT_FALSE(ds["zero_optimization"].contains("reduce_bucket_size"));  // DeepSpeed's 5e8, as priced
    EXPECT_EQ(ds["fp16"]["enabled"], true);
    const ReadLaunch back = round_trip(LaunchFormat::deepspeed, job, name);
    expect_same_job(job, back.job);
    EXPECT_TRUE(back.job.fp16);
    EXPECT_EQ(back.job.zero_reduce_bucket_elements, zero >= 1 ? 500000000 : 0);
  }
  // A ZeRO-1 or -2 plan that overlaps DP is written with overlap_comm, which the stage-1/2 optimizer
  // takes without the pipeline engine (engine.py:1560-1571), and read back the same; at ZeRO 0
  // FP16_Optimizer takes none, so the plan's overlap is not written there.
  for (int zero : {0, 1, 2}) {
    LaunchJob overlapped = job;
    overlapped.plan.zero = zero;
    overlapped.plan.overlap_dp_comm = true;
    const std::string name = "nopipe-z" + std::to_string(zero) + "-overlap.sh";
    const auto written = launch_files(LaunchFormat::deepspeed, overlapped, scratch(name).string());
    EXPECT_EQ(nlohmann::json::parse(written[1].text)["zero_optimization"]["overlap_comm"], zero >= 1) << zero;
    const ReadLaunch back = round_trip(LaunchFormat::deepspeed, overlapped, name);
    EXPECT_EQ(back.job.plan.overlap_dp_comm, zero >= 1) << zero;
    EXPECT_EQ(back.job.stack_name, "megatron-deepspeed-ms-nopipe");
  }

  // BF16 under the BF16 optimizer, written as stack megatron-deepspeed-ms writes it (stage 0) but
  // without the pipeline engine; read back, with or without trainplan's header, under that stack.
  LaunchJob bf16 = job;
  bf16.stack_name = "megatron-deepspeed-ms-nopipe-bf16-optimizer";
  bf16.fp16 = false;
  bf16.plan.zero = 1;
  const auto files = launch_files(LaunchFormat::deepspeed, bf16, scratch("nopipe-bf16.sh").string());
  EXPECT_NE(files[0].text.find("--no-pipeline-parallel"), std::string::npos);
  EXPECT_NE(files[0].text.find("--bf16"), std::string::npos);
  EXPECT_NE(files[1].text.find("\"stage\": 0"), std::string::npos);
  expect_same_job(bf16, round_trip(LaunchFormat::deepspeed, bf16, "nopipe-bf16.sh").job);
  std::string script = read_text(scratch("nopipe-bf16.sh"));
  script.erase(script.find("# trainplan:"), script.find('\n', script.find("# trainplan:")) + 1 - script.find("# trainplan:"));
  std::ofstream(scratch("nopipe-bf16-bare.sh")) << script;
  std::ofstream(scratch("nopipe-bf16-bare.ds_config.json")) << read_text(scratch("nopipe-bf16.ds_config.json"));
  std::string bare_text = read_text(scratch("nopipe-bf16-bare.sh"));
  bare_text.replace(bare_text.find("nopipe-bf16.ds_config.json"), std::string("nopipe-bf16.ds_config.json").size(),
                    "nopipe-bf16-bare.ds_config.json");
  std::ofstream(scratch("nopipe-bf16-bare.sh")) << bare_text;
  EXPECT_EQ(read_launch_config(scratch("nopipe-bf16-bare.sh").string()).job.stack_name,
            "megatron-deepspeed-ms-nopipe-bf16-optimizer");

  // What the stacks do not describe is refused, naming the option and DeepSpeed 0.16.2.
  auto emit = [](const LaunchJob& j) { launch_files(LaunchFormat::deepspeed, j, "x.sh"); };
  LaunchJob other = job;
  other.plan.zero = 3;
  expect_spec_error([&] { emit(other); }, "zero_optimization.stage", "FP16_Optimizer and ZeRO-1/2 optimizer only",
                    "deepspeed format");
  other = job;
  other.workload.precision = spec::Precision::fp32;
  other.fp16 = false;
  expect_spec_error([&] { emit(other); }, "fp16.enabled", "not FP32 training", "deepspeed format");
  other = job;
  other.plan.zero = 1;
  other.plan.pp = 2;
  expect_spec_error([&] { emit(other); }, "--pipeline-model-parallel-size", "arguments.py:94-96", "deepspeed format");
  other = bf16;
  other.plan.zero = 0;
  expect_spec_error([&] { emit(other); }, "bf16.enabled", "BF16 optimizer only", "deepspeed format");

  // The same FP16 optimizers under DeepSpeed's pipeline engine (stack megatron-deepspeed-ms-fp16): no
  // --no-pipeline-parallel, so pretrain_gpt.py builds GPTModelPipe (pretrain_gpt.py:51) and PP 2 runs.
  LaunchJob piped = job;
  piped.stack_name = "megatron-deepspeed-ms-fp16";
  piped.plan.pp = 2;
  for (int zero : {0, 1}) {
    piped.plan.zero = zero;
    const std::string name = "pipe-fp16-z" + std::to_string(zero) + ".sh";
    const auto written = launch_files(LaunchFormat::deepspeed, piped, scratch(name).string());
    const ShellArgs args = parse_shell_args(written[0].text, name);
    EXPECT_FALSE(args.has("--no-pipeline-parallel"));
    EXPECT_EQ(args.value("--pipeline-model-parallel-size"), "2");
    EXPECT_TRUE(args.has("--fp16"));
    EXPECT_EQ(nlohmann::json::parse(written[1].text)["fp16"]["enabled"], true);
    const ReadLaunch back = round_trip(LaunchFormat::deepspeed, piped, name);
    expect_same_job(piped, back.job);
    EXPECT_EQ(back.job.stack_name, "megatron-deepspeed-ms-fp16");
  }
  other = piped;
  other.plan.zero = 3;
  expect_spec_error([&] { emit(other); }, "zero_optimization.stage", "ZeRO-2 and -3", "deepspeed format");
  other = piped;
  other.plan.pp = 1;
  other.plan.zero = 2;
  expect_spec_error([&] { emit(other); }, "zero_optimization.stage", "stack megatron-deepspeed-ms-fp16 describes",
                    "deepspeed format");
}

// The rebase script as its repository holds it (ZeRO 0, FP16, TP 2, --no-pipeline-parallel, full
// recompute through --checkpoint-activations) reads under stack megatron-deepspeed-ms-nopipe, its
// ds_config filled from the template as the script's seds write it; the variants a user makes are
// read as DeepSpeed 0.16.2 runs them, or refused naming the key where no stack prices the run.
TEST(LaunchConfig, RebaseScriptIsReadWithoutThePipelineEngineAndItsVariantsAreRefusedOrSaid) {
  const ReadLaunch rebase = read_launch_config(fixture("clients/megatron-deepspeed_rebase/ds_pretrain_gpt_1.3B.sh"));
  EXPECT_EQ(rebase.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(rebase.job.plan.zero, 0);
  EXPECT_EQ(rebase.job.plan.tp, 2);
  EXPECT_EQ(rebase.job.plan.pp, 1);
  EXPECT_EQ(rebase.job.plan.micro_batch, 2);
  EXPECT_EQ(rebase.job.workload.global_batch_seqs, 512);  // GBSIZE from global_batch_size=512
  EXPECT_EQ(rebase.job.plan.recompute, spec::Recompute::full);
  EXPECT_FALSE(rebase.job.plan.overlap_dp_comm);
  EXPECT_TRUE(rebase.job.fp16);

  // zero_stage=1: the stage-1 optimizer, its bucket DeepSpeed's default 5e8 elements.
  fs::path f = rebase_with("rebase-z1", {{"zero_stage=0", "zero_stage=1"}});
  ReadLaunch read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(read.job.plan.zero, 1);
  EXPECT_EQ(read.job.zero_reduce_bucket_elements, 500000000);
  // overlap_comm at stage 1 reduces from hooks into two buckets on a side stream: the plan's DP overlap;
  // contiguous_gradients off keeps no bucket (refused).
  f = rebase_with("rebase-z1-overlap", {{"zero_stage=0", "zero_stage=1"}}, {{"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, \"overlap_comm\": true"}});
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_TRUE(read.job.plan.overlap_dp_comm);
  EXPECT_TRUE(read.job.notes.empty() || std::none_of(read.job.notes.begin(), read.job.notes.end(), [](const std::string& n) {
    return n.find("overlap_comm read as off") != std::string::npos;
  }));
  // BF16 at stage 0 builds the BF16 optimizer, which takes no overlap_comm (engine.py:1521-1540): read as off, said.
  f = rebase_with("rebase-bf16-overlap", {{"    --fp16 \\", "    --bf16 \\"}},
                  {{"\"fp16\": {\n    \"enabled\": true", "\"bf16\": {\"enabled\": true}, \"fp16\": {\n    \"enabled\": false"},
                   {"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, \"overlap_comm\": true"}});
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe-bf16-optimizer");
  EXPECT_FALSE(read.job.plan.overlap_dp_comm);
  EXPECT_TRUE(std::any_of(read.job.notes.begin(), read.job.notes.end(), [](const std::string& n) {
    return n.find("zero_optimization.overlap_comm read as off: DeepSpeed applies it in its ZeRO optimizers only") == 0;
  }));
  f = rebase_with("rebase-z1-scattered", {{"zero_stage=0", "zero_stage=1"}},
                  {{"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, \"contiguous_gradients\": false"}});
  expect_spec_error([&] { read_launch_config(f.string()); }, "zero_optimization.contiguous_gradients", "no bucket buffer");
  // Each ZeRO-1 bucket is all-reduced (allreduce_and_scatter) unless the file switches that path off.
  f = rebase_with("rebase-z1-owner-reduce", {{"zero_stage=0", "zero_stage=1"}},
                  {{"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, \"use_multi_rank_bucket_allreduce\": false"}});
  expect_spec_error([&] { read_launch_config(f.string()); }, "zero_optimization.use_multi_rank_bucket_allreduce",
                    "at ZeRO stage 1");
  // BF16: at stage 0 DeepSpeed's BF16 optimizer (FP32 accumulation by default); at stage 1 the stage-1
  // optimizer with BF16 gradients, said; BF16 accumulation at stage 0 raises without the pipeline engine.
  const std::vector<std::pair<std::string, std::string>> to_bf16 = {{"\"fp16\": {\n    \"enabled\": true", "\"bf16\": {\"enabled\": true}, \"fp16\": {\n    \"enabled\": false"}};
  f = rebase_with("rebase-bf16", {{"    --fp16 \\", "    --bf16 \\"}}, to_bf16);
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe-bf16-optimizer");
  EXPECT_EQ(read.job.plan.zero, 1);
  EXPECT_FALSE(read.job.fp16);
  f = rebase_with("rebase-bf16-z1", {{"    --fp16 \\", "    --bf16 \\"}, {"zero_stage=0", "zero_stage=1"}}, to_bf16);
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(read.job.plan.zero, 1);
  EXPECT_TRUE(std::any_of(read.job.notes.begin(), read.job.notes.end(),
                          [](const std::string& n) { return n.find("bf16.enabled at ZeRO stage 1 priced as") == 0; }));
  std::vector<std::pair<std::string, std::string>> bf16_accum = to_bf16;
  bf16_accum.push_back({"\"gradient_clipping\"", "\"data_types\": {\"grad_accum_dtype\": \"bf16\"},\n  \"gradient_clipping\""});
  f = rebase_with("rebase-bf16-accum", {{"    --fp16 \\", "    --bf16 \\"}}, bf16_accum);
  expect_spec_error([&] { read_launch_config(f.string()); }, "data_types.grad_accum_dtype", "Bfloat16 wrapper must use");
  // Under the pipeline engine the same BF16 accumulation is DeepSpeed's BF16 optimizer over a BF16
  // accumulator (engine.py:1264-1268): read under stack megatron-deepspeed-ms-bf16-accum.
  std::vector<std::pair<std::string, std::string>> bf16_pipe = {{"    --fp16 \\", "    --bf16 \\"},
                                                                {"no_pp=\"true\"", "no_pp=\"false\""},
                                                                {"    --no-async-tensor-model-parallel-allreduce \\\n",
                                                                 "    --no-async-tensor-model-parallel-allreduce \\\n    --normalization layernorm \\\n"}};
  f = rebase_with("rebase-pipe-bf16-accum", bf16_pipe, bf16_accum);
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-bf16-accum");
  EXPECT_EQ(read.job.plan.zero, 1);
  EXPECT_FALSE(read.job.fp16);
  EXPECT_EQ(read.job.workload.precision, spec::Precision::mixed_bf16);
  // Without data_types the same script is the FP32 accumulator of stack megatron-deepspeed-ms.
  f = rebase_with("rebase-pipe-bf16", bf16_pipe, to_bf16);
  EXPECT_EQ(read_launch_config(f.string()).job.stack_name, "megatron-deepspeed-ms");
  // FP16 with FP32 accumulation at stage 0: DeepSpeed raises; at stage 1 a second buffer.
  const std::vector<std::pair<std::string, std::string>> fp32_accum = {
      {"\"gradient_clipping\"", "\"data_types\": {\"grad_accum_dtype\": \"float32\"},\n  \"gradient_clipping\""}};
  f = rebase_with("rebase-fp32-accum", {}, fp32_accum);
  expect_spec_error([&] { read_launch_config(f.string()); }, "data_types.grad_accum_dtype", "unsupported mix");
  f = rebase_with("rebase-fp32-accum-z1", {{"zero_stage=0", "zero_stage=1"}}, fp32_accum);
  expect_spec_error([&] { read_launch_config(f.string()); }, "data_types.grad_accum_dtype", "second, fp32 gradient buffer");
  // FP32 without the pipeline engine; PP 2 with --no-pipeline-parallel; FP16 under the pipeline engine.
  f = rebase_with("rebase-fp32", {{"    --fp16 \\\n", ""}}, {{"\"fp16\": {\n    \"enabled\": true", "\"fp16\": {\n    \"enabled\": false"}});
  expect_spec_error([&] { read_launch_config(f.string()); }, "fp16.enabled", "FP32 gradients");
  f = rebase_with("rebase-pp2", {{"pp_size=1", "pp_size=2"}});
  expect_spec_error([&] { read_launch_config(f.string()); }, "--pipeline-model-parallel-size", "arguments.py:94-96", f.string());
  // Under the pipeline engine (no_pp false) the same FP16 optimizers read under stack megatron-deepspeed-ms-fp16:
  // FP16_Optimizer at stage 0; at stage 1 the stage-1 optimizer, whose overlap_comm DeepSpeed turns off for a
  // pipeline model (engine.py:1569-1572, said) and whose bucket contiguous_gradients false would drop (refused).
  const std::vector<std::pair<std::string, std::string>> to_pipe = {
      {"no_pp=\"true\"", "no_pp=\"false\""},
      {"    --no-async-tensor-model-parallel-allreduce \\\n", "    --no-async-tensor-model-parallel-allreduce \\\n    --normalization layernorm \\\n"}};
  f = rebase_with("rebase-pipe", to_pipe);
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-fp16");
  EXPECT_EQ(read.job.plan.zero, 0);
  EXPECT_TRUE(read.job.fp16);
  std::vector<std::pair<std::string, std::string>> to_pipe_z1 = to_pipe;
  to_pipe_z1.push_back({"zero_stage=0", "zero_stage=1"});
  f = rebase_with("rebase-pipe-z1-overlap", to_pipe_z1, {{"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, \"overlap_comm\": true"}});
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-fp16");
  EXPECT_EQ(read.job.plan.zero, 1);
  EXPECT_FALSE(read.job.plan.overlap_dp_comm);
  EXPECT_EQ(read.job.zero_reduce_bucket_elements, 500000000);
  EXPECT_TRUE(std::any_of(read.job.notes.begin(), read.job.notes.end(), [](const std::string& n) {
    return n.find("overlap_comm read as off: DeepSpeed turns it off for a pipeline model") != std::string::npos;
  }));
  f = rebase_with("rebase-pipe-z1-scattered", to_pipe_z1,
                  {{"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, \"contiguous_gradients\": false"}});
  expect_spec_error([&] { read_launch_config(f.string()); }, "zero_optimization.contiguous_gradients",
                    "megatron-deepspeed-ms-fp16 prices");
  // zero_stage=2: the optimizer partitioning gradients, priced under the same stack at ZeRO 2 with its
  // default bucket; with overlap_comm two buckets on a side stream, the plan's DP overlap. DeepSpeed 0.16.2
  // runs otherwise than priced without contiguous_gradients (no bucket), reduce_scatter (no flat copy) or
  // the multi-rank all-reduce (a reduce per owner): each refused naming the key; FP32 accumulation too.
  // Under the pipeline engine the stage is DeepSpeed's own refusal (pipe/engine.py:77-78).
  const std::vector<std::pair<std::string, std::string>> z2 = {{"zero_stage=0", "zero_stage=2"}};
  f = rebase_with("rebase-z2", z2);
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(read.job.plan.zero, 2);
  EXPECT_FALSE(read.job.plan.overlap_dp_comm);
  EXPECT_EQ(read.job.zero_reduce_bucket_elements, 500000000);
  f = rebase_with("rebase-z2-overlap_comm", z2, {{"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, \"overlap_comm\": true"}});
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_TRUE(read.job.plan.overlap_dp_comm);
  for (const auto& [key, edit] : std::vector<std::pair<std::string, std::string>>{
           {"contiguous_gradients", "\"contiguous_gradients\": false"},
           {"reduce_scatter", "\"reduce_scatter\": false"},
           {"use_multi_rank_bucket_allreduce", "\"use_multi_rank_bucket_allreduce\": false"}}) {
    f = rebase_with("rebase-z2-" + key, z2, {{"\"stage\": ZERO_STAGE", "\"stage\": ZERO_STAGE, " + edit}});
    expect_spec_error([&] { read_launch_config(f.string()); }, "zero_optimization." + key, "at ZeRO stage 2");
  }
  f = rebase_with("rebase-z2-fp32-accum", z2, fp32_accum);
  expect_spec_error([&] { read_launch_config(f.string()); }, "data_types.grad_accum_dtype", "separate fp32 accumulation dtype");
  f = rebase_with("rebase-z2-bf16", {{"    --fp16 \\", "    --bf16 \\"}, {"zero_stage=0", "zero_stage=2"}}, to_bf16);
  read = read_launch_config(f.string());
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe");
  EXPECT_EQ(read.job.plan.zero, 2);
  EXPECT_TRUE(std::any_of(read.job.notes.begin(), read.job.notes.end(),
                          [](const std::string& n) { return n.find("bf16.enabled at ZeRO stage 2 priced as") == 0; }));
  std::vector<std::pair<std::string, std::string>> to_pipe_z2 = to_pipe;
  to_pipe_z2.push_back({"zero_stage=0", "zero_stage=2"});
  f = rebase_with("rebase-pipe-z2", to_pipe_z2);
  expect_spec_error([&] { read_launch_config(f.string()); }, "--no-pipeline-parallel",
                    "given with ZeRO stage 2: without it pretrain_gpt.py builds GPTModelPipe", f.string());
  // A template edited by a regular expression is not guessed at.
  f = rebase_with("rebase-regex", {{"sed \"s/MBSIZE/", "sed \"s/MB.IZE/"}});
  expect_spec_error([&] { read_launch_config(f.string()); }, "sed 's/MB.IZE/2/'", "plain s/WORD/TEXT/", f.string());
}


// microsoft/Megatron-DeepSpeed@f4157bea's examples_deepspeed/sequence_parallel/ds_pretrain_gpt_1.3B_seq_parallel_32k.sh
// beside its template (tests/export/fixtures/clients/SOURCES.md), with the edits given, in a folder of their own.
fs::path ulysses_with(const std::string& name, const std::vector<std::pair<std::string, std::string>>& script_edits) {
  const fs::path dir = scratch(name);
  fs::create_directories(dir);
  for (const std::string file : {"ds_pretrain_gpt_1.3B_seq_parallel_32k.sh", "ds_config_gpt_TEMPLATE.json"}) {
    std::string text = spec::read_text_file(fixture("clients/megatron-deepspeed_sequence_parallel/" + file));
    if (file.ends_with(".sh"))
      for (const auto& [from, to] : script_edits) {
        const std::size_t at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        if (at != std::string::npos) text.replace(at, from.size(), to);
      }
    std::ofstream(dir / file) << text;
  }
  return dir / "ds_pretrain_gpt_1.3B_seq_parallel_32k.sh";
}

// DeepSpeed-Ulysses as the fork runs it (stack megatron-deepspeed-ms-nopipe-ulysses): a plan with CP 4
// is written with --ds-sequence-parallel-size 4 (arguments.py:974), --no-pipeline-parallel (:954; the
// pipeline model's get_batch_pipe, pretrain_gpt.py:176-209, does not split the sequence) and
// --use-flash-attn-v2 (:930; only the flash paths run under it, transformer.py:835-847), its ds_config's
// batch over DP = devices / (TP x PP x CP) (arguments.py:101-108); read back the same job, and written
// again the same files. What the fork asserts against is refused naming the option and the line.
TEST(LaunchConfig, MicrosoftDeepSpeedUlyssesIsWrittenAsTheSequenceParallelScriptRunsIt) {
  LaunchJob job;
  job.model = spec::load_model("llama2-7b");  // 32 heads, 32 kv heads
  job.model_name = "llama2-7b";
  job.hardware_name = "p4d.24xlarge";
  job.hardware_family = "a100";
  job.stack_name = "megatron-deepspeed-ms-nopipe-ulysses";
  job.instances = job.plan.instances = 2;
  job.devices_per_instance = 8;
  job.plan.cp = 4;
  job.plan.micro_batch = 1;
  job.plan.zero = 1;
  job.plan.recompute = spec::Recompute::full;
  job.plan.overlap_dp_comm = false;  // the stage-1 optimizer reduces after backward
  job.fp16 = true;
  job.workload = {32768, 16, 0, spec::Precision::mixed_bf16};
  const auto files = launch_files(LaunchFormat::deepspeed, job, scratch("ulysses.sh").string());
  ASSERT_EQ(files.size(), 2u);
  const ShellArgs args = parse_shell_args(files[0].text, "ulysses.sh");
  EXPECT_EQ(args.value("--ds-sequence-parallel-size"), "4");
  EXPECT_TRUE(args.has("--no-pipeline-parallel"));
  EXPECT_TRUE(args.has("--use-flash-attn-v2"));
  EXPECT_EQ(args.value("--tensor-model-parallel-size"), "1");
  EXPECT_FALSE(args.has("--sequence-parallel"));
  EXPECT_TRUE(args.has("--fp16"));
  const auto ds = nlohmann::json::parse(files[1].text);
  EXPECT_EQ(ds["gradient_accumulation_steps"], 4);  // 16 / (micro-batch 1 x DP 16 / 4)
  const ReadLaunch back = round_trip(LaunchFormat::deepspeed, job, "ulysses.sh");
  expect_same_job(job, back.job);
  EXPECT_EQ(back.job.plan.cp, 4);
  EXPECT_EQ(back.job.stack_name, "megatron-deepspeed-ms-nopipe-ulysses");
  // export -> --from-config -> export: the same files.
  LaunchJob again = back.job;
  again.model_name = job.model_name;
  again.model = job.model;
  const auto rewritten = launch_files(LaunchFormat::deepspeed, again, scratch("ulysses.sh").string());
  ASSERT_EQ(rewritten.size(), 2u);
  EXPECT_EQ(rewritten[0].text, files[0].text);
  EXPECT_EQ(rewritten[1].text, files[1].text);

  // What the fork refuses beside --ds-sequence-parallel-size, refused on writing.
  auto emit = [](const LaunchJob& j) { launch_files(LaunchFormat::deepspeed, j, "x.sh"); };
  LaunchJob other = job;
  other.plan.tp = 2;
  expect_spec_error([&] { emit(other); }, "--tensor-model-parallel-size", "parallel_state.py:145-147", "deepspeed format");
  other.plan.sp = true;
  expect_spec_error([&] { emit(other); }, "--sequence-parallel", "initialize.py:247-252", "deepspeed format");
  other = job;
  other.plan.pp = 2;
  expect_spec_error([&] { emit(other); }, "--pipeline-model-parallel-size", "arguments.py:94-96", "deepspeed format");
  other = job;
  other.model = spec::load_model("llama3-8b");
  other.model_name = "llama3-8b";
  expect_spec_error([&] { emit(other); }, "--num-key-value-heads", "transformer.py:729", "deepspeed format");
  other = job;
  other.plan.recompute = spec::Recompute::selective;
  expect_spec_error([&] { emit(other); }, "--recompute-granularity", "transformer.py:625-629", "deepspeed format");
  other = job;
  other.stack_name = "megatron-deepspeed-ms-nopipe";
  expect_spec_error([&] { emit(other); }, "--ds-sequence-parallel-size", "priced by stack megatron-deepspeed-ms-nopipe-ulysses",
                    "deepspeed format");
}

// The fork's own sequence-parallel example as its repository holds it (sp_size=4, mp_size=1, no_pp true,
// zero_stage 1, FP16, --use-flash-attn-triton, --checkpoint-activations; its GPU count from ds_ssh) reads
// with CP 4 under stack megatron-deepspeed-ms-nopipe-ulysses; the variants the fork refuses are refused in
// one line naming the file and the option.
TEST(LaunchConfig, SequenceParallelScriptIsReadAsUlyssesAndItsContradictionsAreRefused) {
  const std::string file = fixture("clients/megatron-deepspeed_sequence_parallel/ds_pretrain_gpt_1.3B_seq_parallel_32k.sh");
  const ReadLaunch read = read_launch_config(file);
  EXPECT_EQ(read.job.stack_name, "megatron-deepspeed-ms-nopipe-ulysses");
  EXPECT_EQ(read.job.plan.cp, 4);
  EXPECT_EQ(read.job.plan.tp, 1);
  EXPECT_EQ(read.job.plan.pp, 1);
  EXPECT_FALSE(read.job.plan.sp);
  EXPECT_EQ(read.job.plan.zero, 1);
  EXPECT_EQ(read.job.plan.micro_batch, 1);
  EXPECT_EQ(read.job.workload.seq_len, 32768);
  EXPECT_EQ(read.job.workload.global_batch_seqs, 2);
  EXPECT_EQ(read.job.plan.recompute, spec::Recompute::full);
  EXPECT_TRUE(read.job.fp16);

  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> refused = {
      // {edit from, to, the option named, the phrase}
      {"--tensor-model-parallel-size 1", "--tensor-model-parallel-size 2", "--tensor-model-parallel-size",
       "parallel_state.py:145-147"},
      {"--ds-sequence-parallel-size ${sp_size}", "--ds-sequence-parallel-size ${sp_size} --sequence-parallel",
       "--sequence-parallel", "initialize.py:247-252"},
      {"no_pp=\"true\"", "no_pp=\"false\"", "--no-pipeline-parallel", "get_batch_pipe"},
      {"--use-flash-attn-triton", "--use-rotary-position-embeddings", "--use-flash-attn-v2", "transformer.py:528-531"},
      {"--checkpoint-activations", "--recompute-granularity selective", "--recompute-granularity", "transformer.py:625-629"},
      {"--num-attention-heads ${num_attn_heads}", "--num-attention-heads ${num_attn_heads} --num-key-value-heads 4 "
       "--vocab-size 50304", "--num-key-value-heads", "transformer.py:729"},
  };
  int i = 0;
  for (const auto& [from, to, option, phrase] : refused) {
    const fs::path f = ulysses_with("ulysses-refused-" + std::to_string(i++), {{from, to}});
    expect_spec_error([&] { read_launch_config(f.string()); }, option, phrase, f.string());
    try {
      read_launch_config(f.string());
    } catch (const spec::SpecError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();  // one line
    }
  }
}

}  // namespace microsoft_nopipe
}  // namespace trainplan::exporting
