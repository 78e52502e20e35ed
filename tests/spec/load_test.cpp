#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "expect_spec_error.h"
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/load.h"

using namespace trainplan::spec;
using nlohmann::json;

namespace {

using test_support::expect_spec_error;

json trn1() { return read_json_file(data_root() + "/hardware/trn1.32xlarge.json"); }
json llama() { return read_json_file(data_root() + "/models/llama2-7b.json"); }

}  // namespace

TEST(LoadHardware, Trn1PerDeviceFigures) {
  const HardwareSpec hw = load_hardware("trn1.32xlarge");
  EXPECT_EQ(hw.devices_per_instance(), 32);  // Neuron docs: 16 chips x 2 NeuronCores
  EXPECT_DOUBLE_EQ(hw.peak_bf16_flops_per_s, 95e12);  // 190 TFLOP/s per chip / 2
  EXPECT_DOUBLE_EQ(hw.hbm_bytes, 16.0 * 1073741824.0);  // 16 GiB per NeuronCore
  // aws-neuron-sdk@81ce03ae nki/guides/architecture/trainium_inferentia2_arch.rst:21: 820 GB/s per device (2 NeuronCores)
  EXPECT_DOUBLE_EQ(hw.hbm_bytes_per_s, 410e9);
  EXPECT_EQ(hw.fabric, FabricTopology::torus_2d);
  EXPECT_DOUBLE_EQ(hw.efa_bytes_per_s(), 100e9);  // 800 Gb/s
  ASSERT_NE(hw.price("reserved-3y"), nullptr);
  EXPECT_DOUBLE_EQ(hw.price("reserved-3y")->usd_per_instance_hour, 7.59);  // seed 001/002
}

TEST(LoadHardware, EveryShippedDescriptorLoads) {
  for (const auto& name : list_hardware_names()) EXPECT_NO_THROW(load_hardware(name)) << name;
  for (const auto& name : list_model_names()) EXPECT_NO_THROW(load_model(name)) << name;
  EXPECT_GE(list_hardware_names().size(), 6u);
  EXPECT_GE(list_model_names().size(), 10u);
}

// NVLink 3 through NVSwitch is held to what nccl-tests measures on one
// 8 x A100 node (data/fabric-measurements.json 'a100-nvlink': all-reduce busbw
// 234.89 GB/s at 16 GiB = 0.78 of 300 GB/s, 194.07 at 256 MiB = 0.65), the same
// band on every A100 SXM descriptor, so the a100 family fit can meet all of them.
TEST(LoadHardware, A100NvlinkShareIsBandedByMeasurement) {
  for (const char* name : {"dgx-a100-80gb", "dgx-a100-40gb", "p4d.24xlarge", "jean-zay-a100-80gb"}) {
    const HardwareSpec hw = load_hardware(name);
    ASSERT_TRUE(hw.fabric_share.known()) << name;
    EXPECT_DOUBLE_EQ(hw.fabric_share.centre, 0.78) << name;
    EXPECT_DOUBLE_EQ(hw.fabric_share.low, 0.65) << name;
    EXPECT_DOUBLE_EQ(hw.fabric_share.high, 0.85) << name;
    EXPECT_NE(hw.fabric_share.source.find("a100-nvlink"), std::string::npos) << name;
  }
}

TEST(LoadHardware, MissingField) {
  json j = trn1();
  j.erase("chips_per_instance");
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.chips_per_instance", "missing field");
}

TEST(LoadHardware, WrongType) {
  json j = trn1();
  j["fabric"]["rows"] = "four";
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.fabric.rows", "integer");
}

TEST(LoadHardware, ZeroOrNegativeBandwidth) {
  json j = trn1();
  j["efa"]["gbps"]["value"] = 0;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.efa.gbps.value", "> 0");
  j["efa"]["gbps"]["value"] = -800;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.efa.gbps.value", "> 0");
}

// The host's per-layer recording prior: milliseconds in the file, seconds in the
// spec; a spread of 0, a figure past the fit's 50 ms bound or no source is refused.
TEST(LoadHardware, HostTracePriorReadsInMilliseconds) {
  const HardwareSpec shipped = load_hardware("trn1.32xlarge");
  ASSERT_TRUE(shipped.host_trace_prior.known());
  EXPECT_NEAR(shipped.host_trace_prior.centre_s, 4.82e-3, 1e-12);  // mean of the Gaudi fits 5.06, 4.45, 4.94 ms
  EXPECT_FALSE(load_hardware("p5.48xlarge").host_trace_prior.known());
  json j = trn1();
  j["host"] = {{"trace_ms_per_layer", {{"centre", 5.0}, {"sigma", 0}, {"source", "s"}}}};
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.host.trace_ms_per_layer.sigma", "> 0");
  j["host"]["trace_ms_per_layer"]["sigma"] = 2.0;
  j["host"]["trace_ms_per_layer"]["centre"] = 80.0;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.host.trace_ms_per_layer", "under 50");
  j["host"]["trace_ms_per_layer"]["centre"] = 5.0;
  j["host"]["trace_ms_per_layer"].erase("source");
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.host.trace_ms_per_layer.source", "missing field");
}

TEST(LoadHardware, PublishedFigureNeedsSource) {
  json j = trn1();
  j["peak_bf16_tflops_per_chip"] = 190;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.peak_bf16_tflops_per_chip", "source");
}

TEST(LoadHardware, TorusMustMatchChips) {
  json j = trn1();
  j["fabric"]["rows"] = 3;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.fabric.rows", "chips_per_instance");
}

// An all-to-all fabric has one link to each peer (dl1: 7 of the 10 RoCE ports,
// AWS Compute Blog "Amazon EC2 DL1 instances deep dive"): a stated count that
// is not chips - 1 contradicts the topology and is refused, not ignored.
TEST(LoadHardware, AllToAllLinksAreOnePerPeer) {
  json j = read_json_file(data_root() + "/hardware/dl1.24xlarge.json");
  EXPECT_NO_THROW(hardware_from_json(j, "x.json"));
  j["fabric"]["links_per_chip"]["value"] = 6;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.fabric.links_per_chip.value", "chips_per_instance - 1 (7)");
  j["fabric"].erase("links_per_chip");
  EXPECT_NO_THROW(hardware_from_json(j, "x.json"));  // the count may be left to the topology
}

TEST(LoadHardware, UnknownPriceKindAndTopology) {
  json j = trn1();
  j["prices"][0]["kind"] = "cheap";
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.prices[0].kind", "on-demand");
  j = trn1();
  j["fabric"]["topology"] = "ring";
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.fabric.topology", "torus-2d");
}

TEST(LoadModel, HeadsMustDivideHidden) {
  json j = llama();
  j["heads"] = 30;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.heads", "divide hidden");
}

TEST(LoadModel, ZeroLayersAndWrongKind) {
  json j = llama();
  j["layers"] = 0;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.layers", "> 0");
  j = llama();
  j["kind"] = "diffusion";
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.kind", "decoder");
}

TEST(LoadModel, NormsAndSlidingWindowAreOptionalAndChecked) {
  json j = llama();
  EXPECT_EQ(model_from_json(j, "m.json").pre_norms, 2);
  j["post_norms"] = 2;
  j["sliding_window"] = {{"tokens", 4096}, {"layer_share", 0.5}};
  const trainplan::spec::ModelSpec m = model_from_json(j, "m.json");
  EXPECT_EQ(m.norms_per_layer(), 4);
  EXPECT_EQ(m.sliding_window_tokens, 4096);
  j["sliding_window"]["layer_share"] = 1.5;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.sliding_window.layer_share", "(0, 1]");
  j["sliding_window"] = {{"tokens", 4096}, {"layers", 0.5}};
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.sliding_window.layers", "an unknown field");
  j.erase("sliding_window");
  j["pre_norms"] = 3;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.pre_norms", "at most 2");
  j["pre_norms"] = 1;
  j["post_norms"] = 3;
  expect_spec_error([&] { model_from_json(j, "m.json"); }, "$.post_norms", "at most 2");
}

TEST(LoadModel, UnreadableAndMalformedFiles) {
  EXPECT_THROW(load_model("/nonexistent/model.json"), SpecError);
  const auto path = std::filesystem::temp_directory_path() / "trainplan_bad.json";
  std::ofstream(path) << "{ \"name\": ";
  try {
    load_model(path.string());
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_NE(std::string(e.what()).find("expected UTF-8 JSON; it is not valid at byte"), std::string::npos) << e.what();
  }
  // A number too large for a double, a folder, UTF-16 text: our one line, no library text.
  std::ofstream(path) << "{ \"layers\": 1e400 }";
  expect_spec_error([&] { load_model(path.string()); }, "", "numbers that fit a double");
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary) << std::string("\xff\xfe{\0}\0", 6);
  expect_spec_error([&] { load_model(path.string()); }, "", "UTF-8 text; byte 1 (0xff) is not valid UTF-8");
  std::filesystem::remove(path);
  expect_spec_error([] { load_model(std::filesystem::temp_directory_path().string() + "/"); }, "", "got a folder");
  expect_spec_error([] { load_model("no-such-model"); }, "", "llama2-7b");
}

TEST(LoadModel, HuggingFaceLlamaConfig) {
  // Values of meta-llama/Llama-2-70b-hf config.json.
  json j = {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 8192}, {"intermediate_size", 28672},
            {"num_attention_heads", 64}, {"num_hidden_layers", 80}, {"num_key_value_heads", 8},
            {"vocab_size", 32000}, {"max_position_embeddings", 4096}, {"tie_word_embeddings", false}};
  const ModelSpec m = model_from_json(j, "config.json");
  EXPECT_EQ(m.total_parameters(), load_model("llama2-70b").total_parameters());
  EXPECT_EQ(m.mlp, MlpKind::swiglu);
}

TEST(LoadModel, HuggingFaceNeoXAndBertConfigs) {
  json neox = {{"architectures", {"GPTNeoXForCausalLM"}}, {"hidden_size", 4096}, {"intermediate_size", 16384},
               {"num_attention_heads", 32}, {"num_hidden_layers", 32}, {"vocab_size", 50432},
               {"max_position_embeddings", 2048}, {"rotary_pct", 0.25}, {"use_parallel_residual", true}};
  const ModelSpec m = model_from_json(neox, "config.json");
  EXPECT_EQ(m.total_parameters(), load_model("pythia-6.9b").total_parameters());
  // Biderman et al. 2023 (Pythia, arXiv:2304.01373), table 1: Pythia-6.9B has
  // 6,444,163,072 non-embedding parameters; the untied embedding and head add
  // 2 x 50,432 x 4,096.
  EXPECT_EQ(m.total_parameters() - 2LL * 50432 * 4096, 6444163072LL);
  EXPECT_TRUE(m.parallel_residual);
  json bert = {{"architectures", {"BertForPreTraining"}}, {"hidden_size", 1024}, {"intermediate_size", 4096},
               {"num_attention_heads", 16}, {"num_hidden_layers", 24}, {"vocab_size", 30528},
               {"max_position_embeddings", 512}, {"type_vocab_size", 2}};
  const ModelSpec b = model_from_json(bert, "config.json");
  EXPECT_EQ(b.kind, ModelKind::encoder_mlm);
  EXPECT_EQ(b.total_parameters(), load_model("bert-large").total_parameters());
}

TEST(LoadModel, HuggingFaceUnknownArchitecture) {
  json j = {{"architectures", {"MambaForCausalLM"}}, {"hidden_size", 1}};
  expect_spec_error([&] { model_from_json(j, "config.json"); }, "$.architectures[0]", "LlamaForCausalLM");
}

namespace {

// A misspelt key would otherwise be ignored where the field is optional and
// change the answer without a word (issue 13): refused with the closest key.
TEST(UnknownKeys, MisspeltFieldsAreRefusedWithASuggestion) {
  json m = llama();
  m["kv_head"] = 8;
  expect_spec_error([&] { model_from_json(m, "m.json"); }, "$.kv_head", "did you mean kv_heads?");
  json h = trn1();
  h["efa"]["latency"] = 5;
  expect_spec_error([&] { hardware_from_json(h, "h.json"); }, "$.efa.latency", "did you mean latency_us?");
  json far = llama();
  far["completely_unrelated"] = 1;
  expect_spec_error([&] { model_from_json(far, "m.json"); }, "$.completely_unrelated", "an unknown field");
  json annotated = llama();
  annotated["layers_note"] = "free text";  // annotations pass
  EXPECT_EQ(model_from_json(annotated, "m.json").layers, 32);
}

}  // namespace

namespace {

// Positive but absurd figures are typos or unit slips (issue 13): each is
// refused with the JSON path, the plausible range and the value.
TEST(Plausible, AbsurdHardwareFiguresAreRefused) {
  auto with = [](const char* object, const char* key, double value) {
    json h = trn1();
    json& target = std::string(object).empty() ? h : h[object];
    if (target[key].is_object()) target[key]["value"] = value;
    else target[key] = value;
    return h;
  };
  expect_spec_error([&] { hardware_from_json(with("", "hbm_gb_per_s_per_chip", 1e-300), "h.json"); },
                    "hbm_gb_per_s_per_chip", "a plausible figure from 10 to 100000 GB/s");
  expect_spec_error([&] { hardware_from_json(with("", "peak_bf16_tflops_per_chip", 1e300), "h.json"); },
                    "$.peak_bf16_tflops_per_chip.value", "TFLOP/s, got a figure too large to represent");
  expect_spec_error([&] { hardware_from_json(with("efa", "latency_us", 1e15), "h.json"); }, "$.efa.latency_us.value",
                    "to 10000 us");
  json priced = trn1();
  priced["prices"][0]["usd_per_instance_hour"] = 1e-300;
  expect_spec_error([&] { hardware_from_json(priced, "h.json"); }, "$.prices[0].usd_per_instance_hour", "USD");
}

TEST(Plausible, AbsurdModelSizesAreRefused) {
  json m = llama();
  m["layers"] = 2000000;
  expect_spec_error([&] { model_from_json(m, "m.json"); }, "$.layers", "from 1 to 10000");
}

}  // namespace

// FP8 peaks are optional and sourced: H100 SXM 1,979 TFLOP/s dense (NVIDIA
// data sheet: 3,958 with sparsity), Trainium2 1,299 per chip (Neuron docs),
// Trainium1's cFP8 at its BF16 rate; A100 has none. A figure without its
// source, or out of the plausible range, is refused like any other.
TEST(LoadHardware, Fp8PeakWhereTheDescriptorStatesOne) {
  EXPECT_DOUBLE_EQ(load_hardware("p5.48xlarge").peak_fp8_flops_per_s, 1979e12);
  EXPECT_DOUBLE_EQ(load_hardware("trn2.48xlarge").peak_fp8_flops_per_s, 1299e12 / 4);  // 4 logical NeuronCores per chip (LNC=2)
  EXPECT_DOUBLE_EQ(load_hardware("trn1.32xlarge").peak_fp8_flops_per_s, 95e12);
  EXPECT_DOUBLE_EQ(load_hardware("p4d.24xlarge").peak_fp8_flops_per_s, 0);
  json j = trn1();
  j["peak_fp8_tflops_per_chip"] = json{{"value", 190}};
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.peak_fp8_tflops_per_chip", "source");
}

// A fabric's measured collective share: low <= centre <= high <= 1, each > 0, with a source.
TEST(LoadHardware, CollectiveShareBandIsCheckedAndKept) {
  json j = trn1();
  j["efa"]["collective_share"] = {{"centre", 0.8}, {"low", 0.7}, {"high", 0.9}, {"source", "nccom-test"}};
  const HardwareSpec hw = hardware_from_json(j, "x.json");
  EXPECT_TRUE(hw.efa_share.known());
  EXPECT_DOUBLE_EQ(hw.efa_share.low, 0.7);
  EXPECT_EQ(hw.efa_share.source, "nccom-test");
  j["efa"]["collective_share"]["low"] = 0.85;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.efa.collective_share", "low <= centre <= high <= 1");
  j["efa"]["collective_share"]["low"] = 0.7;
  j["efa"]["collective_share"]["high"] = 1.2;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.efa.collective_share", "<= 1");
  j["efa"]["collective_share"].erase("high");
  j["efa"]["collective_share"].erase("source");
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.efa.collective_share", "missing field");
  json k = trn1();
  k["fabric"]["collective_share"] = {{"centre", 0.8}, {"low", 0.7}, {"high", 0.9}, {"source", "s"}, {"extra", 1}};
  expect_spec_error([&] { hardware_from_json(k, "x.json"); }, "$.fabric.collective_share", "extra");
}

// What share of HBM bandwidth memory-bound ops can move where the device caps it: on
// trn1 its 16 DMA engines per NeuronCore at 17 B/ns, 272 GB/s against 410 GB/s of HBM
// (aws-neuron-sdk@81ce03ae nki/deep-dives/nki-dma-bandwidth-guide.rst:58-64), centre the
// 60% MBU nki_perf_guide.rst:15 calls good; checked as the other bands are.
TEST(LoadHardware, MemoryShareBandIsCheckedAndKept) {
  const HardwareSpec hw = load_hardware("trn1.32xlarge");
  EXPECT_NEAR(hw.memory_share.high, 16 * 17e9 / hw.hbm_bytes_per_s, 1e-3);
  EXPECT_DOUBLE_EQ(hw.memory_share.centre, 0.6);
  EXPECT_EQ(load_hardware("trn1n.32xlarge").memory_share.high, hw.memory_share.high);
  EXPECT_FALSE(load_hardware("dgx-h100").memory_share.known());
  json j = trn1();
  j["memory_share"]["centre"] = 0.7;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.memory_share", "low <= centre <= high <= 1");
  j["memory_share"].erase("source");
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.memory_share", "missing field");
}

// A measured matmul share of the BF16 peak, checked as the collective shares are;
// hls-gaudi2 states MAMF 418.7 of 432 TFLOP/s (stas00/ml-engineering@744d01e1).
TEST(LoadHardware, MatmulShareBandIsCheckedAndKept) {
  EXPECT_NEAR(load_hardware("hls-gaudi2").matmul_share.high, 418.7 / 432, 1e-3);
  EXPECT_FALSE(load_hardware("trn1.32xlarge").matmul_share.known());
  json j = trn1();
  j["matmul_share"] = {{"centre", 0.5}, {"low", 0.3}, {"high", 0.7}, {"source", "mamf"}};
  EXPECT_DOUBLE_EQ(hardware_from_json(j, "x.json").matmul_share.centre, 0.5);
  j["matmul_share"]["high"] = 0.4;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.matmul_share", "low <= centre <= high <= 1");
  j["matmul_share"].erase("source");
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.matmul_share", "missing field");
}

// The collective library's per-step latency ceiling, in microseconds, with a
// source; dgx-h100 states NCCL's network Ring/Simple step (NVIDIA/nccl@b6475625
// src/graph/tuning.cc hwLat: 14.0 us).
TEST(LoadHardware, StepLatencyBandIsCheckedAndKept) {
  EXPECT_DOUBLE_EQ(load_hardware("dgx-h100").step_latency_band.high_s, 14e-6);
  EXPECT_DOUBLE_EQ(load_hardware("dgx-h100").step_latency_band.fabric_high_s, 3.4e-6);  // NCCL's NVLink step
  EXPECT_FALSE(load_hardware("jean-zay-a100-80gb").step_latency_band.known());
  json j = trn1();
  EXPECT_FALSE(hardware_from_json(j, "x.json").step_latency_band.known());
  j["collective_step_latency_us"] = {{"high", 9.6}, {"source", "nccl tuning.cc"}};
  const HardwareSpec hw = hardware_from_json(j, "x.json");
  EXPECT_DOUBLE_EQ(hw.step_latency_band.high_s, 9.6e-6);
  EXPECT_EQ(hw.step_latency_band.source, "nccl tuning.cc");
  EXPECT_DOUBLE_EQ(hw.step_latency_band.fabric_high_s, 0);
  j["collective_step_latency_us"]["fabric_high"] = 12;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.collective_step_latency_us.fabric_high", "up to high");
  j["collective_step_latency_us"]["fabric_high"] = 3.4;
  EXPECT_DOUBLE_EQ(hardware_from_json(j, "x.json").step_latency_band.fabric_high_s, 3.4e-6);
  j["collective_step_latency_us"]["high"] = 6000;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.collective_step_latency_us", "5000");
  j["collective_step_latency_us"]["high"] = 14;
  j["collective_step_latency_us"]["low"] = 1;
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.collective_step_latency_us", "low");
  j["collective_step_latency_us"].erase("low");
  j["collective_step_latency_us"].erase("source");
  expect_spec_error([&] { hardware_from_json(j, "x.json"); }, "$.collective_step_latency_us", "missing field");
}

// A key given twice in one object is refused with its path (issue 41.1):
// nlohmann's parser keeps the last value silently, Hydra refuses the YAML
// equivalent, and a descriptor that says two things means neither.
TEST(JsonText, AKeyGivenTwiceIsRefusedWithItsPath) {
  expect_spec_error([] { parse_json_text(R"({"layers": 32, "hidden": 4096, "layers": 2})", "m.json"); }, "$.layers",
                    "\"layers\" is given twice", "m.json");
  expect_spec_error([] { parse_json_text(R"({"a": [{"b": 1, "c": {"d": 1, "d": 2}}]})", "m.json"); }, "$.a[].c.d",
                    "given twice");
  // The same key in sibling objects, or in an array's objects, is fine.
  EXPECT_NO_THROW(parse_json_text(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}]})", "m.json"));
}

// Model files extend another as stack files do (issue 42.7): each BLOOM
// topology-search candidate states its shape and extends the study's common
// architecture; loaded, it holds the parameters its own note states (counted
// by hand from L(12h^2+13h) + V*h + 4h when the files were written whole).
TEST(LoadModel, CorpusCandidatesExtendTheStudysArchitecture) {
  int candidates = 0;
  for (const std::string& name : list_corpus_model_names()) {
    if (name.rfind("bloom-l", 0) != 0) continue;
    ++candidates;
    const json file = read_json_file(data_root() + "/data/measured/models/" + name + ".json");
    ASSERT_EQ(file.value("extends", ""), "bloom-topology-search") << name;
    const ModelSpec m = load_model(name);
    std::string note = file["architecture_note"].get<std::string>();
    note = note.substr(note.rfind("= ") + 2);
    note.erase(std::remove(note.begin(), note.end(), ','), note.end());
    EXPECT_EQ(m.total_parameters(), std::stoll(note)) << name;
    EXPECT_TRUE(m.embedding_norm) << name;  // from the base
    EXPECT_EQ(m.vocab, 250880) << name;
  }
  EXPECT_EQ(candidates, 35);
}

TEST(LoadModel, ABadExtendsIsRefusedNamingIt) {
  const auto dir = std::filesystem::temp_directory_path() / "trainplan_model_extends";
  std::filesystem::create_directories(dir);
  const auto a = dir / "a.json", b = dir / "b.json";
  std::ofstream(a) << R"({"extends": ")" << b.string() << R"(", "name": "a"})";
  std::ofstream(b) << R"({"extends": ")" << a.string() << R"(", "name": "b"})";
  expect_spec_error([&] { load_model(a.string()); }, "$.extends", "a chain of at most 4 model files");
  std::ofstream(a) << R"({"extends": 3, "name": "a"})";
  expect_spec_error([&] { load_model(a.string()); }, "$.extends", "the name of the model this one varies");
  std::ofstream(a) << R"({"extends": "no-such-model", "name": "a"})";
  expect_spec_error([&] { load_model(a.string()); }, "", "unknown model");
  std::ofstream(a) << R"({"extends": "llama2-7b", "name": "llama2-7b-short", "layers": 16})";
  EXPECT_EQ(load_model(a.string()).layers, 16);
  EXPECT_EQ(load_model(a.string()).hidden, 4096);
}
