// MoE on NxD Training's megatron model path (src/export/nxd_moe.cpp, issue 38): a Mixtral-style
// plan is written as examples/conf/megatron_mixtral_8x7b_config.yaml@ff83d7bd states it
// (distributed_strategy.expert_model_parallel_size, model.moe) and read back to the same job and
// MoE fields; each rule learned from the client (aws-neuron/neuronx-distributed-training@ff83d7bd,
// neuronx-distributed@083d3ea) is refused naming the option, on writing and on reading.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "../spec/expect_spec_error.h"
#include "export/launch_config.h"
#include "export/nxd_config.h"
#include "export/nxd_moe.h"
#include "spec/load.h"

namespace trainplan::exporting {
namespace {

using spec::test_support::expect_spec_error;
namespace fs = std::filesystem;

// Mixtral 8x7B (dropless, top-2, 8 SwiGLU experts of 14336) at TP 8 / PP 4 on 16 trn1.
LaunchJob mixtral_job() {
  LaunchJob job;
  job.model = spec::load_model("mixtral-8x7b");
  job.model_name = "mixtral-8x7b";
  job.hardware_name = "trn1.32xlarge";
  job.hardware_family = "trainium1";
  job.stack_name = "neuronx-distributed-training-unfused-attn";  // the megatron model's attention
  job.flash_attention = false;
  job.experts_compute_capacity = true;  // what that stack prices (expert_compute capacity)
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

fs::path moe_scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "trainplan_nxd_moe_test";
  fs::create_directories(dir);
  return dir / name;
}

std::string moe_written(const LaunchJob& job, const std::string& name) {
  const fs::path path = moe_scratch(name);
  for (const LaunchFile& f : launch_files(LaunchFormat::nxd, job, path.string())) std::ofstream(f.path) << f.text;
  return path.string();
}

// A file written for `job` with `key` (a dotted path) set to the YAML `value` ("~": removed), read back.
ReadLaunch moe_read_edits(const LaunchJob& job, const std::string& name,
                          const std::vector<std::pair<std::string, std::string>>& edits) {
  const std::string path = moe_written(job, name);
  YAML::Node root = YAML::LoadFile(path);
  for (const auto& [key, value] : edits) {
    YAML::Node node = root;
    std::string rest = key;
    for (std::size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) node.reset(node[rest.substr(0, dot)]);
    if (value == "~") node.remove(rest);
    else node[rest] = YAML::Load(value);
  }
  YAML::Emitter out;
  out << root;
  std::ofstream(path) << out.c_str() << "\n";
  return read_launch_config(path);
}

ReadLaunch moe_read_edited(const LaunchJob& job, const std::string& name, const std::string& key, const std::string& value) {
  return moe_read_edits(job, name, {{key, value}});
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
  // Priced with NKI flash attention, which the megatron model cannot run, it is refused naming the stack to use.
  LaunchJob flash = job;
  flash.stack_name = "neuronx-distributed-training";
  flash.flash_attention = true;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, flash, "x.yaml"); }, "model.fusions.flash_attention",
                    "--stack neuronx-distributed-training-unfused-attn");
  // A capacity factor is written as the model states it, with EP.
  const YAML::Node cf = YAML::Load(launch_files(LaunchFormat::nxd, mixtral_cf2_ep8_job(), "x.yaml")[0].text);
  EXPECT_EQ(cf["model"]["moe"]["capacity_factor"].as<double>(), 2.0);
  EXPECT_EQ(cf["distributed_strategy"]["expert_model_parallel_size"].as<int>(), 8);
  // A dense plan gains no MoE key.
  LaunchJob dense = job;
  dense.model = spec::load_model("llama2-7b");
  dense.model_name = "llama2-7b";
  dense.flash_attention = false;  // priced with flash attention, a dense Llama takes the HF path
  dense.stack_name = "neuronx-distributed-2.20-unfused-attn";
  const YAML::Node d = YAML::Load(launch_files(LaunchFormat::nxd, dense, "x.yaml")[0].text);
  EXPECT_FALSE(d["model"]["moe"]);
  EXPECT_FALSE(d["distributed_strategy"]["expert_model_parallel_size"]);
  EXPECT_EQ(d["name"].as<std::string>(), "megatron_llama");
}

void expect_same_moe_job(const LaunchJob& a, const LaunchJob& b) {
  EXPECT_EQ(a.instances, b.instances);
  EXPECT_EQ(a.devices_per_instance, b.devices_per_instance);
  EXPECT_EQ(a.plan.tp, b.plan.tp);
  EXPECT_EQ(a.plan.pp, b.plan.pp);
  EXPECT_EQ(a.plan.ep, b.plan.ep);
  EXPECT_EQ(a.plan.sp, b.plan.sp);
  EXPECT_EQ(a.plan.micro_batch, b.plan.micro_batch);
  EXPECT_EQ(a.plan.zero, b.plan.zero);
  EXPECT_EQ(a.plan.recompute, b.plan.recompute);
  EXPECT_EQ(a.workload.seq_len, b.workload.seq_len);
  EXPECT_EQ(a.workload.global_batch_seqs, b.workload.global_batch_seqs);
  EXPECT_EQ(a.workload.precision, b.workload.precision);
  EXPECT_EQ(a.model_name, b.model_name);
  EXPECT_EQ(a.stack_name, b.stack_name);
  // The MoE fields the file states, as the model has them.
  EXPECT_EQ(b.model.experts, a.model.experts);
  EXPECT_EQ(b.model.top_k, a.model.top_k);
  EXPECT_EQ(b.model.expert_ffn_hidden, a.model.expert_ffn_hidden);
  EXPECT_EQ(b.model.capacity_factor, a.model.capacity_factor);
  EXPECT_EQ(b.model.layers, a.model.layers);
  EXPECT_EQ(b.model.hidden, a.model.hidden);
  EXPECT_EQ(b.model.heads, a.model.heads);
}

TEST(NxdMoeConfig, ReadsBackTheSameJobAndMoe) {
  const LaunchJob job = mixtral_job();
  const std::string path = moe_written(job, "mixtral.yaml");
  ReadLaunch back = read_launch_config(path);
  EXPECT_EQ(back.format, LaunchFormat::nxd);
  expect_same_moe_job(job, back.job);
  EXPECT_EQ(back.job.model.ffn_hidden, 0);  // no layer is dense: ffn_hidden_size is the experts' width
  EXPECT_NO_THROW(check_stated_architecture(back, job.model, path));
  // The example's capacity factor with EP 8.
  LaunchJob cf = mixtral_cf2_ep8_job();
  const std::string cf_path = moe_written(cf, "mixtral-cf2.yaml");
  ReadLaunch cf_back = read_launch_config(cf_path);
  expect_same_moe_job(cf, cf_back.job);
  EXPECT_NO_THROW(check_stated_architecture(cf_back, cf.model, cf_path));
  // Full recompute at PP 1, without SP; a model whose experts differ from its (unused) dense width.
  LaunchJob full = mixtral_job();
  full.plan.pp = 1;
  full.plan.sp = false;
  full.plan.recompute = spec::Recompute::full;
  full.model.ffn_hidden = 11008;
  ReadLaunch full_back = read_launch_config(moe_written(full, "mixtral-full.yaml"));
  expect_same_moe_job(full, full_back.job);
  EXPECT_EQ(YAML::LoadFile(moe_scratch("mixtral-full.yaml").string())["model"]["ffn_hidden_size"].as<int>(), 14336);
  EXPECT_NO_THROW(check_stated_architecture(full_back, full.model, "f"));
  // What the client defaults to where the file is silent: capacity num_experts / top_k (dropless).
  EXPECT_EQ(moe_read_edited(job, "nocf.yaml", "model.moe.capacity_factor", "~").job.model.capacity_factor, 0);
  EXPECT_EQ(moe_read_edited(job, "nullcf.yaml", "model.moe.capacity_factor", "null").job.model.capacity_factor, 0);
  EXPECT_EQ(moe_read_edited(job, "bigcf.yaml", "model.moe.capacity_factor", "6").job.model.capacity_factor, 0);
  // num_experts 1 builds the dense MLP (transformer.py@ff83d7bd:1770).
  EXPECT_EQ(moe_read_edited(job, "one.yaml", "model.moe.num_experts", "1").job.model.experts, 0);
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
  // A stack that prices the routed tokens (NxD's blockwise kernel, SDK 2.26) is not what the release written runs.
  LaunchJob routed = job;
  routed.stack_name = "neuronx-distributed-training-dropless";
  routed.experts_compute_capacity = false;
  refused(routed, "model.moe.capacity_factor", "does not run");
  // TP 16 does not divide the 8 KV heads: the HF path, which builds Llama alone.
  LaunchJob hf = job;
  hf.plan.tp = 16;
  refused(hf, "model.model_config", "routed experts");
}

// Reading a file: what the client raises on, or trainplan does not model, is refused naming the file.
TEST(NxdMoeConfig, ReadingHoldsTheFileToTheClientsRules) {
  const LaunchJob job = mixtral_job();
  const LaunchJob cf = mixtral_cf2_ep8_job();
  const auto edited = [](const LaunchJob& j, const std::string& key, const std::string& value) {
    return [j, key, value] { moe_read_edited(j, "edited.yaml", key, value); };
  };
  const std::string file = moe_scratch("edited.yaml").string();
  expect_spec_error(edited(job, "model.moe.frequency", "2"), "model.moe.frequency", "transformer.py@ff83d7bd:1770", file);
  expect_spec_error(edited(job, "model.moe.routing_algorithm", "sinkhorn"), "model.moe.routing_algorithm", "top_k", file);
  expect_spec_error(edited(job, "model.moe.capacity_factor", "0.5"), "model.moe.capacity_factor", "1 or more", file);
  expect_spec_error(edited(job, "model.moe.top_k", "9"), "model.moe.top_k", "", file);
  expect_spec_error(edited(job, "model.moe.top_k", "1"), "model.moe.normalize_top_k_affinities", "expert_mlps.py@083d3ea:71-72", file);
  expect_spec_error(edited(job, "model.activation", "gelu"), "model.activation", "transformer.py@ff83d7bd:413", file);
  expect_spec_error(edited(job, "model.has_bias", "true"), "model.has_bias", "transformer.py@ff83d7bd:414", file);
  expect_spec_error(edited(job, "distributed_strategy.expert_model_parallel_size", "2"),
                    "distributed_strategy.expert_model_parallel_size", "without capacity factor", file);
  expect_spec_error(edited(cf, "distributed_strategy.tensor_model_parallel_size", "4"),
                    "distributed_strategy.expert_model_parallel_size", "TP=4", file);
  // neuronx-distributed-training@9169aa03 examples/training_orchestrator.py:99-101: no dropless, no factor.
  expect_spec_error([&] { moe_read_edits(job, "edited.yaml", {{"model.moe.dropless", "false"}, {"model.moe.capacity_factor", "0.0"}}); },
                    "model.moe.capacity_factor", "Dropping requires", file);
}

// What a later release of the client runs is read as that release runs it, and said.
TEST(NxdMoeConfig, ReadingTakesWhatLaterReleasesRun) {
  const LaunchJob job = mixtral_job();
  const auto has_note = [](const ReadLaunch& read, const std::string& part) {
    for (const std::string& note : read.job.notes)
      if (note.find(part) != std::string::npos) return true;
    return false;
  };
  // Full recompute under PP: broken at ff83d7bd (megatron_mixtral_8x7b_config.yaml:141-142), fixed by 5868fdb (SDK 2.21).
  const ReadLaunch full = moe_read_edited(job, "full.yaml", "model.activations_checkpoint_granularity", "full");
  EXPECT_EQ(full.job.plan.recompute, spec::Recompute::full);
  EXPECT_TRUE(has_note(full, "fixed from SDK 2.21")) << full.job.notes.size();
  // model.moe.dropless (training_orchestrator.py@9169aa03:60-101): the blockwise kernel over the routed
  // tokens, whatever capacity_factor holds (the client sets it to 0.0), under the stack that prices it.
  LaunchJob unnamed = job;
  unnamed.stack_name.clear();
  const ReadLaunch dropless = moe_read_edited(unnamed, "dropless.yaml", "model.moe.dropless", "true");
  EXPECT_EQ(dropless.job.model.capacity_factor, 0);
  EXPECT_TRUE(has_note(dropless, "blockwise kernel"));
  const spec::Stack stack = spec::load_stack(dropless.job.stack_name);
  EXPECT_EQ(stack.name, "neuronx-distributed-training-dropless");
  EXPECT_FALSE(stack.compute.experts_compute_capacity);
}

// The file's MoE is held against the model it is priced with: experts, top_k, capacity and expert width.
TEST(NxdMoeConfig, TheFilesMoeMustBeTheModels) {
  const LaunchJob job = mixtral_job();
  const std::string path = moe_written(job, "held.yaml");
  ReadLaunch read = read_launch_config(path);
  expect_spec_error([&] { check_stated_architecture(read, spec::load_model("llama2-7b"), path); }, "model.moe.num_experts",
                    "0 as llama2-7b (the model) has; the file states 8", path);
  spec::ModelSpec other = job.model;
  other.top_k = 1;
  expect_spec_error([&] { check_stated_architecture(read, other, path); }, "model.moe.top_k", "1 as mixtral-8x7b", path);
  other = job.model;
  other.capacity_factor = 2;
  expect_spec_error([&] { check_stated_architecture(read, other, path); }, "model.moe.capacity_factor", "capacity factor 2", path);
  other = job.model;
  other.expert_ffn_hidden = 16384;
  expect_spec_error([&] { check_stated_architecture(read, other, path); }, "model.ffn_hidden_size", "16384 (the experts' width)", path);
  other = job.model;
  other.experts = 16;
  expect_spec_error([&] { check_stated_architecture(read, other, path); }, "model.moe.num_experts", "16", path);
  other = job.model;
  other.shared_expert_ffn_hidden = 4096;
  expect_spec_error([&] { check_stated_architecture(read, other, path); }, "model.moe.num_experts", "shared experts", path);
  // A factor of num_experts / top_k or more is full capacity on both sides.
  other = job.model;
  other.capacity_factor = 4;
  EXPECT_NO_THROW(check_stated_architecture(read, other, path));
  // A dense file against a MoE model.
  LaunchJob dense = job;
  dense.model = spec::load_model("llama2-7b");
  dense.model_name = "llama2-7b";
  const std::string dense_path = moe_written(dense, "dense.yaml");
  ReadLaunch dense_read = read_launch_config(dense_path);
  spec::ModelSpec moe_llama = dense.model;
  moe_llama.experts = 8;
  moe_llama.top_k = 2;
  moe_llama.expert_ffn_hidden = moe_llama.ffn_hidden;
  expect_spec_error([&] { check_stated_architecture(dense_read, moe_llama, dense_path); }, "model.moe.num_experts",
                    "the file builds a dense MLP", dense_path);
}

}  // namespace
}  // namespace trainplan::exporting
