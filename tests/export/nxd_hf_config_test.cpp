// NxD Training's HF model path (src/export/nxd_hf_config.cpp): a Llama plan whose TP does
// not divide the KV heads is written as hf_llama3_70B_config.yaml@ff83d7bd runs Llama 3 70B
// at TP 32 (model_source hf, kv_replicator TP / KV heads, qkv_linear, the model's config.json
// beside the YAML) and read back to the same job and architecture; each rule learned from
// the client (aws-neuron/neuronx-distributed-training@ff83d7bd, neuronx-distributed@083d3ea)
// is refused naming the option, on writing and on reading.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "../spec/expect_spec_error.h"
#include "export/launch_config.h"
#include "export/nxd_config.h"
#include "export/nxd_hf_config.h"
#include "spec/load.h"

namespace trainplan::exporting {
namespace {

using spec::test_support::expect_spec_error;
namespace fs = std::filesystem;

// AWS's Neuron SDK table layout (data/measured/neuron-sdk-nxd-llama3.1-70b-*.json): TP 32, PP 8 on 16 trn1.
LaunchJob llama31_70b_tp32_job() {
  LaunchJob job;
  job.model = spec::load_model("llama3.1-70b");
  job.model_name = "llama3.1-70b";
  job.hardware_name = "trn1.32xlarge";
  job.hardware_family = "trainium1";
  job.stack_name = "neuronx-distributed-2.20";
  job.flash_attention = true;
  job.instances = job.plan.instances = 16;
  job.devices_per_instance = 32;
  job.plan.tp = 32;
  job.plan.pp = 8;
  job.plan.sp = true;
  job.plan.micro_batch = 1;
  job.plan.zero = 1;
  job.plan.recompute = spec::Recompute::selective;
  job.plan.overlap_dp_comm = true;
  job.workload.seq_len = 8192;
  job.workload.global_batch_seqs = 1024;
  job.workload.precision = spec::Precision::mixed_bf16;
  return job;
}

fs::path hf_scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "trainplan_nxd_hf_test";
  fs::create_directories(dir);
  return dir / name;
}

// The files written, on disk; returns the YAML's path.
std::string hf_written(const LaunchJob& job, const std::string& name) {
  const fs::path path = hf_scratch(name);
  for (const LaunchFile& f : launch_files(LaunchFormat::nxd, job, path.string())) std::ofstream(f.path) << f.text;
  return path.string();
}

// A file written for `job`, then changed by `edit` (a key path and its new YAML value), read back.
ReadLaunch hf_read_edited(const LaunchJob& job, const std::string& name, const std::string& key, const std::string& value) {
  const std::string path = hf_written(job, name);
  YAML::Node root = YAML::LoadFile(path);
  YAML::Node node = root;
  std::string rest = key;
  for (std::size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) node.reset(node[rest.substr(0, dot)]);
  node[rest] = YAML::Load(value);
  YAML::Emitter out;
  out << root;
  std::ofstream(path) << out.c_str() << "\n";
  return read_launch_config(path);
}

TEST(NxdHfConfig, TpBeyondTheKvHeadsIsWrittenAsTheHfLlamaExampleRunsIt) {
  const LaunchJob job = llama31_70b_tp32_job();
  ASSERT_TRUE(nxd_hf_path(job));
  const std::vector<LaunchFile> files = launch_files(LaunchFormat::nxd, job, "/jobs/l70.yaml");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].path, "/jobs/l70.config.json");
  const YAML::Node y = YAML::Load(files[0].text);
  EXPECT_EQ(y["model_source"].as<std::string>(), "hf");
  // llama_model.py@ff83d7bd:26 (kv_shared_group_size); modeling_llama.py:329-331 divides 8 x 4 over TP 32.
  EXPECT_EQ(y["distributed_strategy"]["kv_replicator"].as<int>(), 4);
  EXPECT_TRUE(y["model"]["qkv_linear"].as<bool>());  // modeling_llama.py:285-294
  EXPECT_EQ(y["model"]["model_config"].as<std::string>(), "l70.config.json");
  EXPECT_TRUE(y["model"]["fusions"]["flash_attention"].as<bool>());  // priced NKI flash: llama_model.py:28
  EXPECT_EQ(y["model"]["activations_checkpoint_granularity"].as<std::string>(), "selective");
  // hf_llama3_70B_config.yaml sets it True, which recomputes the MLP too (llama_model.py:38): False, as priced
  // by a stack that wraps CoreAttention alone; True where the stack wraps the MLP too, from 8,192 tokens.
  EXPECT_FALSE(y["model"]["activations_checkpoint_recompute_mlp"].as<bool>());
  LaunchJob mlp = job;
  mlp.recompute_mlp = true;
  mlp.workload.seq_len = 8192;
  EXPECT_TRUE(YAML::Load(launch_files(LaunchFormat::nxd, mlp, "/jobs/l70.yaml")[0].text)["model"]
                  ["activations_checkpoint_recompute_mlp"].as<bool>());
  mlp.workload.seq_len = 4096;  // the client wraps the MLP only from 8,192 tokens
  EXPECT_THROW(launch_files(LaunchFormat::nxd, mlp, "/jobs/l70.yaml"), std::exception);
  // A plan whose TP divides the KV heads goes through the HF path for it too.
  mlp.workload.seq_len = 8192;
  mlp.plan.tp = 8;
  EXPECT_TRUE(nxd_hf_path(mlp));
  EXPECT_TRUE(y["distributed_strategy"]["zero1"].as<bool>());
  EXPECT_TRUE(y["distributed_strategy"]["sequence_parallel"].as<bool>());
  EXPECT_EQ(y["distributed_strategy"]["pipeline_model_parallel_size"].as<int>(), 8);
  EXPECT_EQ(y["precision"]["type"].as<std::string>(), "mixed_precision");
  EXPECT_EQ(y["model"]["rope_theta"].as<double>(), 500000.0);  // llama_model.py:33-34
  EXPECT_FALSE(y["data"]["data_impl"]);  // MegatronDataModule's, not read on this path
  const nlohmann::json c = nlohmann::json::parse(files[1].text);
  EXPECT_EQ(c["architectures"][0], "LlamaForCausalLM");
  EXPECT_EQ(c["num_key_value_heads"], 8);
  EXPECT_EQ(c["num_attention_heads"], 64);
  EXPECT_EQ(c["intermediate_size"], 28672);
  EXPECT_EQ(c["vocab_size"], 128256);
  EXPECT_TRUE(c["rope_scaling"].is_null());  // transformers 4.31 (requirements.txt) knows no 'llama3' scaling
  // modeling_llama.py:208: under selective recompute the SwiGLU activation is checkpointed, as the
  // NxD stacks price it (stacks/neuronx-distributed.json selective_recompute core-attention-module).
  EXPECT_TRUE(c["selective_checkpoint_enabled"].get<bool>());
  EXPECT_FALSE(c["move_model_to_device"].get<bool>());          // :183, :336 read it
  // At a TP dividing 8 a stack priced with unfused attention takes the megatron path: one file.
  // Priced with flash attention it stays on the HF path, the only one with NKI flash attention.
  LaunchJob tp8 = job;
  tp8.plan.tp = 8;
  EXPECT_TRUE(nxd_hf_path(tp8));
  tp8.flash_attention = false;
  tp8.stack_name = "neuronx-distributed-2.20-unfused-attn";
  EXPECT_FALSE(nxd_hf_path(tp8));
  EXPECT_EQ(launch_files(LaunchFormat::nxd, tp8, "x.yaml").size(), 1u);
  // TP 16: two replicas of each KV head.
  LaunchJob tp16 = job;
  tp16.plan.tp = 16;
  EXPECT_EQ(YAML::Load(launch_files(LaunchFormat::nxd, tp16, "x.yaml")[0].text)["distributed_strategy"]["kv_replicator"].as<int>(), 2);
}

TEST(NxdHfConfig, ReadsBackTheSameJobAndArchitecture) {
  LaunchJob job = llama31_70b_tp32_job();
  job.plan.pp = 4;
  job.plan.virtual_stages = 2;
  job.plan.recompute = spec::Recompute::full;
  const ReadLaunch back = read_launch_config(hf_written(job, "round.yaml"));
  EXPECT_EQ(back.format, LaunchFormat::nxd);
  const LaunchJob& b = back.job;
  EXPECT_EQ(b.instances, 16);
  EXPECT_EQ(b.devices_per_instance, 32);
  EXPECT_EQ(b.plan.tp, 32);
  EXPECT_EQ(b.plan.pp, 4);
  EXPECT_EQ(b.plan.virtual_stages, 2);
  EXPECT_TRUE(b.plan.sp);
  EXPECT_EQ(b.plan.zero, 1);
  EXPECT_EQ(b.plan.micro_batch, 1);
  EXPECT_EQ(b.plan.recompute, spec::Recompute::full);
  EXPECT_EQ(b.workload.seq_len, 8192);
  EXPECT_EQ(b.workload.global_batch_seqs, 1024);
  EXPECT_EQ(b.workload.precision, spec::Precision::mixed_bf16);
  EXPECT_EQ(b.model_name, "llama3.1-70b");
  EXPECT_EQ(b.stack_name, "neuronx-distributed-2.20");
  EXPECT_TRUE(b.nxd_hf);
  EXPECT_EQ(b.kv_replicator, 4);
  ASSERT_TRUE(b.has_architecture);  // from the config.json beside it
  EXPECT_EQ(b.model.layers, job.model.layers);
  EXPECT_EQ(b.model.hidden, job.model.hidden);
  EXPECT_EQ(b.model.heads, job.model.heads);
  EXPECT_EQ(b.model.kv_heads, job.model.kv_heads);
  EXPECT_EQ(b.model.ffn_hidden, job.model.ffn_hidden);
  EXPECT_EQ(b.model.rope_theta, job.model.rope_theta);
  EXPECT_EQ(b.model.total_parameters(), job.model.total_parameters());
  // Only the keys the writer takes from the example (trainer.max_steps, ...), which trainplan does not read.
  for (const std::string& note : b.notes) EXPECT_EQ(note.rfind("the client reads these, trainplan does not:", 0), 0u) << note;
  // Manual precision (NxD 2.18's stack) and BF16-SR travel as on the megatron path.
  job.stack_name = "neuronx-distributed";
  job.optimizer = spec::kNoMastersFp32Moments;
  job.bf16_grad_reduce = true;
  const LaunchJob manual = read_launch_config(hf_written(job, "manual.yaml")).job;
  EXPECT_TRUE(manual.optimizer == spec::kNoMastersFp32Moments && manual.bf16_grad_reduce);
  job.workload.precision = spec::Precision::bf16_sr;
  EXPECT_EQ(read_launch_config(hf_written(job, "sr.yaml")).job.workload.precision, spec::Precision::bf16_sr);
}

// PP not dividing the layers: the HF path partitions them itself (base.py@ff83d7bd:140 auto_partition;
// NxD's create_partitions, pipeline/partition.py@083d3ea:280-296, gives the remainder to the last
// stages), so uneven stages are written there and read back; the megatron model is refused them.
TEST(NxdHfConfig, UnevenStagesGoThroughNxdsAutoPartition) {
  LaunchJob job = llama31_70b_tp32_job();  // 80 layers
  job.plan.pp = 6;
  job.plan.uneven_stages = true;
  const std::string path = hf_written(job, "uneven.yaml");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("# PP 6 does not divide the 80 layers: NxD partitions them itself"), std::string::npos) << text.str();
  const ReadLaunch back = read_launch_config(path);
  EXPECT_TRUE(back.job.plan.uneven_stages);
  EXPECT_EQ(back.job.plan.pp, 6);
  // An even split reads back even.
  LaunchJob even = llama31_70b_tp32_job();
  EXPECT_FALSE(read_launch_config(hf_written(even, "even.yaml")).job.plan.uneven_stages);
  // The megatron model path: a dense Llama at TP 8 without flash attention.
  LaunchJob megatron = llama31_70b_tp32_job();
  megatron.stack_name = "neuronx-distributed";
  megatron.flash_attention = false;
  megatron.plan.tp = 8;
  megatron.plan.pp = 6;
  megatron.plan.uneven_stages = true;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, megatron, "x.yaml"); }, "distributed_strategy.pipeline_model_parallel_size",
                    "megatron model path", "nxd format");
}

// What the HF path cannot express is refused on writing, naming the option.
TEST(NxdHfConfig, RefusesWhatTheHfLlamaModelCannotRun) {
  LaunchJob job = llama31_70b_tp32_job();
  job.workload.precision = spec::Precision::bf16_sr;
  job.plan.zero = 0;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, job, "x.yaml"); }, "distributed_strategy.zero1", "HF path", "nxd format");
  job.plan.zero = 1;
  // A model other than Llama's layer: the HF path builds LlamaForCausalLM (llama_model.py@ff83d7bd:55).
  LaunchJob qwen = job;
  qwen.model = spec::load_model("qwen2.5-14b");  // Q/K/V biases; 8 KV heads
  qwen.plan.tp = 20;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, qwen, "x.yaml"); }, "model.model_config", "biases");
  LaunchJob tied = job;
  tied.model = spec::load_model("llama3.2-3b");  // tied embeddings, 8 KV heads
  tied.plan.tp = 24;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, tied, "x.yaml"); }, "model.model_config", "tied embeddings");
  // kv_replicator must divide TP (qkv_linear.py@083d3ea:526) and the replicated heads divide over it.
  LaunchJob twelve = job;
  twelve.plan.tp = 12;
  twelve.model.heads = 48;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, twelve, "x.yaml"); }, "distributed_strategy.kv_replicator", "TP 12");
  // modeling_llama.py@ff83d7bd:328 divides the query heads over TP.
  LaunchJob heads = job;
  heads.model.heads = 40;
  heads.model.hidden = 5120;
  expect_spec_error([&] { launch_files(LaunchFormat::nxd, heads, "x.yaml"); }, "tensor_model_parallel_size", "40 heads");
}

// Reading a file: what the client raises on, or a replication trainplan does not price, is refused.
TEST(NxdHfConfig, ReadingHoldsTheFileToTheClientsRules) {
  const LaunchJob job = llama31_70b_tp32_job();
  expect_spec_error([&] { hf_read_edited(job, "r2.yaml", "distributed_strategy.kv_replicator", "2"); },
                    "distributed_strategy.kv_replicator", "329-331");
  expect_spec_error([&] { hf_read_edited(job, "r8.yaml", "distributed_strategy.kv_replicator", "8"); },
                    "distributed_strategy.kv_replicator", "one KV head per TP rank");
  expect_spec_error([&] { hf_read_edited(job, "r3.yaml", "distributed_strategy.kv_replicator", "3"); },
                    "distributed_strategy.kv_replicator", "qkv_linear.py@083d3ea:526");
  expect_spec_error([&] { hf_read_edited(job, "q.yaml", "model.qkv_linear", "false"); }, "model.qkv_linear", "285-294");
  expect_spec_error([&] { hf_read_edited(job, "h.yaml", "model.hidden_size", "8100"); }, "model.hidden_size", "64 heads");
  expect_spec_error([&] { hf_read_edited(job, "z.yaml", "distributed_strategy.zero1", "false"); }, "zero1", "HF path");
  // MoE on the HF path is HFMixtralModule (examples/training.py@9169aa03:82-89), which trainplan does not read.
  expect_spec_error([&] { hf_read_edited(job, "moe.yaml", "model.moe", "{num_experts: 8, top_k: 2}"); }, "model_source",
                    "HFMixtralModule");
  // A config.json of another architecture: the HF path builds Llama whatever it names.
  const std::string path = hf_written(job, "mistral.yaml");
  nlohmann::json c = nlohmann::json::parse(std::ifstream(hf_scratch("mistral.config.json")));
  c["architectures"][0] = "MistralForCausalLM";
  std::ofstream(hf_scratch("mistral.config.json")) << c.dump(2);
  expect_spec_error([&] { read_launch_config(path); }, "$.architectures", "LlamaForCausalLM");
  // Without its config.json the file names no heads: the note names model.model_config, and the
  // kv_replicator is held against the model --model names.
  fs::remove(hf_scratch("gone.config.json"));
  const std::string gone = hf_written(job, "gone.yaml");
  fs::remove(hf_scratch("gone.config.json"));
  ReadLaunch read = read_launch_config(gone);
  EXPECT_FALSE(read.job.has_architecture);
  ASSERT_EQ(read.job.notes.size(), 2u);  // and the keys trainplan does not read
  EXPECT_NE(read.job.notes[0].find("model.model_config (gone.config.json)"), std::string::npos) << read.job.notes[0];
  EXPECT_NO_THROW(check_stated_architecture(read, spec::load_model("llama3.1-70b"), gone));
  expect_spec_error([&] { check_stated_architecture(read, spec::load_model("llama2-7b"), gone); }, "model.num_layers", "32");
}

// A model's name comes from its file (an HF config's _name_or_path): in the YAML it stays inside
// comment lines, in the config.json it is a JSON string (issue 41's rule for every format).
TEST(NxdHfConfig, AModelNameCannotInjectLines) {
  LaunchJob job = llama31_70b_tp32_job();
  job.model.name = job.model_name = "x\nmodel_source: megatron\n# y";
  const std::vector<LaunchFile> files = launch_files(LaunchFormat::nxd, job, "x.yaml");
  std::istringstream lines(files[0].text);
  for (std::string line; std::getline(lines, line);)
    if (line.find("model_source: megatron") != std::string::npos) EXPECT_EQ(line.rfind('#', 0), 0u) << line;
  EXPECT_EQ(YAML::Load(files[0].text)["model_source"].as<std::string>(), "hf");
  EXPECT_EQ(nlohmann::json::parse(files[1].text)["_name_or_path"], job.model.name);
}

// NxD Training's own example, trimmed (tests/export/fixtures/nxd-hf-llama3-8b.yaml): TP 32 and no
// kv_replicator. Alone it would raise (modeling_llama.py@ff83d7bd:329-331); priced as the
// example it was cut from sets (kv_replicator 4), and said so.
TEST(NxdHfConfig, AnExampleSilentOnKvReplicatorIsPricedAsItsBaseSetsIt) {
  ReadLaunch read = read_launch_config(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/export/fixtures/nxd-hf-llama3-8b.yaml");
  EXPECT_TRUE(read.job.nxd_hf);
  EXPECT_EQ(read.job.kv_replicator, 0);
  check_stated_architecture(read, spec::load_model("llama3-8b"), "fixture");
  ASSERT_EQ(read.job.notes.size(), 3u);  // the model_config note, the keys trainplan does not read, this
  EXPECT_NE(read.job.notes[2].find("priced as kv_replicator 4"), std::string::npos) << read.job.notes[2];
}

}  // namespace
}  // namespace trainplan::exporting
