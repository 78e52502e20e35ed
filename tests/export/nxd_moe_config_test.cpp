// MoE on NxD Training's megatron model path (src/export/nxd_moe.cpp, issue 38): a Mixtral-style
// plan is written as examples/conf/megatron_mixtral_8x7b_config.yaml@ff83d7bd states it
// (distributed_strategy.expert_model_parallel_size, model.moe); each rule learned from the client
// (aws-neuron/neuronx-distributed-training@ff83d7bd, neuronx-distributed@083d3ea) is refused naming the option.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include "../spec/expect_spec_error.h"
#include "export/launch_config.h"
#include "spec/load.h"

namespace trainplan::exporting {
namespace {

using spec::test_support::expect_spec_error;

// Mixtral 8x7B (dropless, top-2, 8 SwiGLU experts of 14336) at TP 8 / PP 4 on 16 trn1.
LaunchJob mixtral_job() {
  LaunchJob job;
  job.model = spec::load_model("mixtral-8x7b");
  job.model_name = "mixtral-8x7b";
  job.hardware_name = "trn1.32xlarge";
  job.hardware_family = "trainium1";
  job.stack_name = "neuronx-distributed-training";
  job.flash_attention = true;
  job.instances = job.plan.instances = 16;
  job.devices_per_instance = 32;
  job.plan.tp = 8;
  job.plan.pp = 4;
  job.plan.sp = true;
  job.plan.micro_batch = 1;
  job.plan.zero = 1;
  job.plan.recompute = spec::Recompute::selective;
  job.plan.overlap_dp_comm = true;
  job.workload.seq_len = 4096;
  job.workload.global_batch_seqs = 256;
  job.workload.precision = spec::Precision::mixed_bf16;
  return job;
}

// The same model at the example's capacity factor 2.0 (megatron_mixtral_8x7b_config.yaml:130), EP 8 at PP 1 on 4 trn1.
LaunchJob mixtral_cf2_ep8_job() {
  LaunchJob job = mixtral_job();
  job.model.capacity_factor = 2.0;
  job.instances = job.plan.instances = 4;
  job.plan.pp = 1;
  job.plan.ep = 8;
  return job;
}

void refused(const LaunchJob& job, const std::string& option, const std::string& why) {
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, job, "x.yaml"); }, option, why, "nxd format");
}

TEST(NxdMoeConfig, MixtralIsWrittenAsTheMixtralExampleRunsIt) {
  const LaunchJob job = mixtral_job();
  const std::vector<LaunchFile> files = launch_files(LaunchFormat::nxd, job, "mixtral.yaml");
  ASSERT_EQ(files.size(), 1u);  // the megatron model: TP 8 divides the 8 KV heads
  const YAML::Node y = YAML::Load(files[0].text);
  EXPECT_EQ(y["name"].as<std::string>(), "megatron_mixtral");
  EXPECT_EQ(y["model_source"].as<std::string>(), "megatron");
  EXPECT_EQ(y["distributed_strategy"]["expert_model_parallel_size"].as<int>(), 1);  // megatron_gpt_model.py@ff83d7bd:133
  EXPECT_EQ(y["model"]["ffn_hidden_size"].as<int>(), 14336);  // the experts' width: transformer.py:1777, :421
  EXPECT_EQ(y["model"]["activation"].as<std::string>(), "swiglu");
  EXPECT_FALSE(y["model"]["has_bias"].as<bool>());
  const YAML::Node moe = y["model"]["moe"];
  EXPECT_EQ(moe["num_experts"].as<int>(), 8);
  EXPECT_EQ(moe["top_k"].as<int>(), 2);
  EXPECT_EQ(moe["frequency"].as<int>(), 1);
  EXPECT_EQ(moe["routing_algorithm"].as<std::string>(), "top_k");
  // Dropless as num_experts / top_k: ExpertMLPs' full capacity (expert_mlps.py@083d3ea:67-68).
  EXPECT_EQ(moe["capacity_factor"].as<double>(), 4.0);
  EXPECT_TRUE(moe["normalize_top_k_affinities"].as<bool>());
  EXPECT_TRUE(moe["output_router_logits"].as<bool>());
  EXPECT_EQ(y["model"]["activations_checkpoint_granularity"].as<std::string>(), "selective");
  EXPECT_TRUE(y["distributed_strategy"]["zero1"].as<bool>());
  EXPECT_EQ(y["precision"]["type"].as<std::string>(), "mixed_precision");
  // The header names the example and says where NxD runs the experts otherwise than priced.
  const std::string& text = files[0].text;
  EXPECT_NE(text.find("examples/conf/megatron_mixtral_8x7b_config.yaml"), std::string::npos);
  EXPECT_NE(text.find("every expert over every token"), std::string::npos);
  EXPECT_NE(text.find("megatron_base_model.py@ff83d7bd:56-59"), std::string::npos);
  EXPECT_NE(text.find("neuronx-distributed-2.20-unfused-attn"), std::string::npos);
  // A capacity factor is written as the model states it, with EP.
  const YAML::Node cf = YAML::Load(launch_files(LaunchFormat::nxd, mixtral_cf2_ep8_job(), "x.yaml")[0].text);
  EXPECT_EQ(cf["model"]["moe"]["capacity_factor"].as<double>(), 2.0);
  EXPECT_EQ(cf["distributed_strategy"]["expert_model_parallel_size"].as<int>(), 8);
  // A dense plan gains no MoE key.
  LaunchJob dense = job;
  dense.model = spec::load_model("llama2-7b");
  dense.model_name = "llama2-7b";
  const YAML::Node d = YAML::Load(launch_files(LaunchFormat::nxd, dense, "x.yaml")[0].text);
  EXPECT_FALSE(d["model"]["moe"]);
  EXPECT_FALSE(d["distributed_strategy"]["expert_model_parallel_size"]);
  EXPECT_EQ(d["name"].as<std::string>(), "megatron_llama");
}

// Each rule of the client's is refused on writing, naming the option and the client release.
TEST(NxdMoeConfig, RefusesWhatNxdTraining220CannotRun) {
  const LaunchJob job = mixtral_job();
  // transformer.py@ff83d7bd:417-457: a router and the routed experts alone.
  LaunchJob shared = job;
  shared.model.shared_expert_ffn_hidden = 14336;
  refused(shared, "model.moe.num_experts", "shared experts");
  // transformer.py:1770: every frequency-th layer, no leading dense block.
  LaunchJob dense_first = job;
  dense_first.model.first_dense_layers = 1;
  refused(dense_first, "model.moe.frequency", "first 1 layers are dense");
  // transformer.py:413-414: SwiGLU without biases.
  LaunchJob gelu = job;
  gelu.model.mlp = spec::MlpKind::gelu;
  refused(gelu, "model.activation", "Neuron SDK 2.20");
  LaunchJob bias = job;
  bias.model.bias = true;
  refused(bias, "model.has_bias", "NeuronSwitchMLP asserts it");
  // No latent attention in any model NxD Training@ff83d7bd builds.
  LaunchJob mla = job;
  mla.model.kv_lora_rank = 512;
  refused(mla, "model", "latent attention (MLA) is not built by NxD Training@ff83d7bd");
  // expert_mlps.py@083d3ea:145-146: EP raises at full capacity, which dropless routing is.
  LaunchJob ep = job;
  ep.plan.ep = 2;
  refused(ep, "distributed_strategy.expert_model_parallel_size", "not supported without capacity factor");
  LaunchJob ep_full = mixtral_cf2_ep8_job();
  ep_full.model.capacity_factor = 4;  // num_experts / top_k: full capacity too
  refused(ep_full, "distributed_strategy.expert_model_parallel_size", "capacity factor 4");
  // parallel_state.py@083d3ea:229-230.
  LaunchJob tp4 = mixtral_cf2_ep8_job();
  tp4.plan.tp = 4;
  tp4.plan.ep = 2;
  refused(tp4, "distributed_strategy.expert_model_parallel_size", "TP=4 case not yet implemented");
  // moe_parallel_layers.py@083d3ea:166, :254.
  LaunchJob three = mixtral_cf2_ep8_job();
  three.plan.ep = 3;
  refused(three, "distributed_strategy.expert_model_parallel_size", "a divisor of the 8 experts");
  // No expert TP of NxD's own: the experts split over TP.
  LaunchJob etp = mixtral_cf2_ep8_job();
  etp.plan.etp = 1;
  refused(etp, "distributed_strategy.expert_model_parallel_size", "found expert TP 1");
  // megatron_mixtral_8x7b_config.yaml@ff83d7bd:141-142: full checkpointing loses gradients under PP.
  LaunchJob full = job;
  full.plan.recompute = spec::Recompute::full;
  refused(full, "model.activations_checkpoint_granularity", "141-142");
  // TP 16 does not divide the 8 KV heads: the HF path, which builds Llama alone.
  LaunchJob hf = job;
  hf.plan.tp = 16;
  refused(hf, "model.model_config", "routed experts");
}

}  // namespace
}  // namespace trainplan::exporting
