// Bad-input corpus (issue 13): every row runs the built trainplan binary
// (TRAINPLAN_BINARY) on one malformed descriptor or impossible plan and asks
// for the same answer: exit code 2, at most two lines naming the offending
// file or option, and no library text (exception names, CLI11's range
// messages, crash reports).
//
// Descriptors start from a shipped file (read from TRAINPLAN_SOURCE_DIR) with
// one thing changed. Rows marked known_bug are real failures of the rules
// today; they stay in the table, skipped, until the binary is fixed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "run_cli.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TRAINPLAN_SOURCE_DIR
#define TRAINPLAN_SOURCE_DIR "."  // ctest runs the tests in the source folder
#endif

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- descriptors

json shipped(const std::string& relative) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/" + relative);
  return json::parse(in);
}
json hardware() { return shipped("hardware/trn1.32xlarge.json"); }
std::string fixture(const std::string& name) {
  std::ifstream in(fs::path(TRAINPLAN_SOURCE_DIR) / "tests/calib/fixtures" / name);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
// nccl-tests' all-reduce on 8 p5 ranks with the 1 KiB row's time (12.20 us) replaced.
std::string nccl_log_with_time_of_1k(const std::string& time) {
  std::string log = fixture("nccl_all_reduce_p5_8ranks.log");
  const std::size_t at = log.find("   12.20    0.08");
  return log.replace(at, 8, std::string(8 - std::min<std::size_t>(8, time.size()), ' ') + time);
}
json model() { return shipped("models/llama2-7b.json"); }
json stack() { return shipped("stacks/megatron-lm.json"); }
json measured() { return shipped("data/measured/seed-001-pythia-6.9b-trn1.json"); }
json calibration() { return shipped("data/calibration/trainium1.json"); }
json choice() { return shipped("data/published-choices/seed-002-llama2-7b-trn1.json"); }

// One change to a shipped descriptor, addressed by JSON pointer.
std::string set(json j, const char* pointer, const json& value) {
  j[json::json_pointer(pointer)] = value;
  return j.dump(2);
}
std::string drop(json j, const char* pointer) {
  const json::json_pointer p(pointer);
  j[p.parent_pointer()].erase(p.back());
  return j.dump(2);
}
// A value nlohmann::json cannot hold (1e400) goes in as text.
std::string raw(json j, const char* pointer, const std::string& text) {
  j[json::json_pointer(pointer)] = "@RAW@";
  std::string s = j.dump(2);
  s.replace(s.find("\"@RAW@\""), 7, text);
  return s;
}

// ---------------------------------------------------------------- the table

enum class Setup {
  none,      // nothing written; {FILE} and {DIR} name paths that do not exist
  file,      // content written to {FILE}
  folder,    // {FILE} is an empty folder
  measured,  // content written to {DIR}/run.json
  choices,   // the shipped seed-001 run in {DIR}/measured, content in {DIR}/choices/c.json
  fifo,      // {FILE} is a FIFO nobody writes to: a read would hang
  device_link,  // {FILE} is a symbolic link to /dev/full
  script,    // content written to {DIR}/job.sh: --from-config tells a launch script by its extension
  yaml,      // content written to {DIR}/job.yaml: a NeMo or NxD YAML
};

struct Case {
  const char* name;
  const char* args;    // {FILE}, {DIR} and {SRC} are replaced
  Setup setup;
  std::string (*content)();
  const char* expect;  // a substring of the output naming the file or option; placeholders replaced
  bool known_bug = false;
};

// gtest and ctest name a row by its name, not by its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

using S = Setup;
std::string none() { return ""; }

const Case kCases[] = {
    // ---- hostile files, one per loader
    {"hardware_empty_file", "estimate --hardware {FILE}", S::file, none, "{FILE}"},
    {"hardware_not_json", "estimate --hardware {FILE}", S::file, [] { return std::string("hello, world\n"); }, "{FILE}"},
    {"hardware_truncated", "estimate --hardware {FILE}", S::file, [] { return hardware().dump(2).substr(0, 200); }, "{FILE}"},
    {"hardware_array", "estimate --hardware {FILE}", S::file, [] { return std::string("[1, 2]"); }, "{FILE}"},
    {"hardware_number_1e400", "estimate --hardware {FILE}", S::file, [] { return std::string("1e400"); }, "{FILE}"},
    {"hardware_utf16", "estimate --hardware {FILE}", S::file,
     [] { return std::string("\xff\xfe{\0\"\0n\0\"\0:\0 \0\"\0x\0\"\0}\0", 22); }, "{FILE}"},
    {"hardware_folder", "estimate --hardware {FILE}", S::folder, none, "{FILE}"},
    {"hardware_missing_file", "estimate --hardware {FILE}", S::none, none, "{FILE}"},
    {"model_empty_file", "estimate --model {FILE}", S::file, none, "{FILE}"},
    {"model_not_json", "estimate --model {FILE}", S::file, [] { return std::string("layers: 32\n"); }, "{FILE}"},
    {"model_truncated", "estimate --model {FILE}", S::file, [] { return model().dump(2).substr(0, 120); }, "{FILE}"},
    {"model_array", "estimate --model {FILE}", S::file, [] { return json::array({model()}).dump(); }, "{FILE}"},
    {"model_folder", "estimate --model {FILE}", S::folder, none, "{FILE}"},
    {"model_missing_file", "estimate --model {FILE}", S::none, none, "{FILE}"},
    {"stack_empty_file", "estimate --stack {FILE}", S::file, none, "{FILE}"},
    {"stack_truncated", "estimate --stack {FILE}", S::file, [] { return stack().dump(2).substr(0, 300); }, "{FILE}"},
    {"stack_number_1e400", "estimate --stack {FILE}", S::file, [] { return raw(stack(), "/dp_bucket_mb/value", "1e400"); }, "{FILE}"},
    {"stack_utf16", "estimate --stack {FILE}", S::file, [] { return std::string("\xff\xfe[\0]\0", 6); }, "{FILE}"},
    {"stack_missing_file", "estimate --stack {FILE}", S::none, none, "{FILE}"},
    // A stack on hardware whose runtime it lacks names the stack and runs_on (NxD on an H100, Megatron-LM on trn1).
    {"stack_on_another_runtime", "estimate --hardware dgx-h100 --stack neuronx-distributed@2.21", S::none, none,
     "--stack neuronx-distributed-2.20: neuronx-distributed-2.20 runs under Neuron"},
    {"stack_cuda_on_trainium", "search --hardware trn1.32xlarge --stack megatron-lm -q", S::none, none, "runs_on"},
    {"measured_run_stack_on_another_runtime", "validate -q --measured {DIR}", S::measured,
     [] { return set(measured(), "/stack", "megatron-lm"); }, "{DIR}/run.json: $.stack"},
    {"stack_runs_on_unknown_word", "estimate --hardware dgx-h100 --stack {FILE}", S::file,
     [] { return set(stack(), "/runs_on/value", "rocm"); }, "{FILE}: $.runs_on.value"},
    // A release no stack of the line holds (issue 37.3): the line's file and field.
    {"stack_release_unknown", "estimate --stack neuronx-distributed@2.30", S::none, none,
     "stacks/neuronx-distributed.json: $.releases"},
    {"calibration_empty_file", "estimate --calibration {FILE}", S::file, none, "{FILE}"},
    {"calibration_not_json", "estimate --calibration {FILE}", S::file, [] { return std::string("gemm.ceiling = 0.5\n"); }, "{FILE}"},
    {"calibration_array", "estimate --calibration {FILE}", S::file, [] { return std::string("[]"); }, "{FILE}"},
    {"calibration_folder", "estimate --calibration {FILE}", S::folder, none, "{FILE}"},
    {"calibration_missing_file", "estimate --calibration {FILE}", S::none, none, "{FILE}"},

    // ---- hardware: wrong types, bad sizes, absurd figures, unknown keys
    {"hardware_chips_string", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/chips_per_instance/value", "sixteen"); }, "{FILE}"},
    {"hardware_chips_negative", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/chips_per_instance/value", -16); }, "{FILE}"},
    {"hardware_chips_zero", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/chips_per_instance/value", 0); }, "{FILE}"},
    {"hardware_chips_fraction", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/chips_per_instance/value", 16.5); }, "{FILE}"},
    {"hardware_chips_missing", "estimate --hardware {FILE}", S::file, [] { return drop(hardware(), "/chips_per_instance"); }, "{FILE}"},
    {"hardware_hbm_zero", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/hbm_gib_per_chip/value", 0); }, "{FILE}"},
    {"hardware_hbm_negative", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/hbm_gib_per_chip/value", -32); }, "{FILE}"},
    {"hardware_hbm_bandwidth_1e-300", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/hbm_gb_per_s_per_chip/value", 1e-300); }, "{FILE}"},
    {"hardware_peak_1e300", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/peak_bf16_tflops_per_chip/value", 1e300); }, "{FILE}"},
    {"hardware_peak_without_source", "estimate --hardware {FILE}", S::file, [] { return drop(hardware(), "/peak_bf16_tflops_per_chip/source"); }, "{FILE}"},
    {"hardware_fabric_latency_1e15", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/fabric/latency_us/value", 1e15); }, "{FILE}"},
    {"hardware_efa_latency_1e15", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/efa/latency_us/value", 1e15); }, "{FILE}"},
    {"hardware_efa_zero", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/efa/gbps/value", 0); }, "{FILE}"},
    {"hardware_price_1e-300", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/prices/0/usd_per_instance_hour", 1e-300); }, "{FILE}"},
    {"hardware_price_negative", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/prices/0/usd_per_instance_hour", -1); }, "{FILE}"},
    {"hardware_prices_string", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/prices", "cheap"); }, "{FILE}"},
    {"hardware_topology_unknown", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/fabric/topology", "hypercube"); }, "{FILE}"},
    {"hardware_torus_mismatch", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/fabric/rows", 3); }, "{FILE}"},
    {"hardware_name_number", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/name", 42); }, "{FILE}"},
    {"hardware_failure_rate_negative", "estimate --hardware {FILE}", S::file, [] { return set(hardware(), "/reliability/failures_per_instance_hour/value", -1); }, "{FILE}"},
    {"hardware_misspelt_key", "estimate --hardware {FILE}", S::file,
     [] { return set(hardware(), "/chips_per_instnce", json{{"value", 16}, {"source", "x"}}); }, "{FILE}"},
    {"hardware_given_a_model", "estimate --hardware {SRC}/models/llama2-7b.json", S::none, none, "llama2-7b.json"},
    {"hardware_missing_file_in_list", "search --hardware trn1.32xlarge,{FILE} --instances 4 --quiet", S::none, none, "{FILE}"},
    {"hardware_misspelt_key_in_compare", "compare --hardware trn1.32xlarge,{FILE} --instances 4 --quiet", S::file,
     [] { return set(hardware(), "/efa/gbsp", json{{"value", 800}, {"source", "x"}}); }, "{FILE}"},

    // ---- model
    {"model_heads_do_not_divide_hidden", "estimate --model {FILE}", S::file, [] { return set(model(), "/heads", 30); }, "{FILE}"},
    {"model_kv_heads_do_not_divide_heads", "estimate --model {FILE}", S::file, [] { return set(model(), "/kv_heads", 5); }, "{FILE}"},
    {"model_misspelt_kv_head", "estimate --model {FILE}", S::file, [] { return set(model(), "/kv_head", 8); }, "{FILE}"},
    {"model_layers_zero", "estimate --model {FILE}", S::file, [] { return set(model(), "/layers", 0); }, "{FILE}"},
    {"model_layers_negative", "estimate --model {FILE}", S::file, [] { return set(model(), "/layers", -32); }, "{FILE}"},
    {"model_layers_absurd", "estimate --model {FILE}", S::file, [] { return set(model(), "/layers", 2000000000); }, "{FILE}"},
    {"model_layers_missing", "estimate --model {FILE}", S::file, [] { return drop(model(), "/layers"); }, "{FILE}"},
    {"model_hidden_string", "estimate --model {FILE}", S::file, [] { return set(model(), "/hidden", "4096"); }, "{FILE}"},
    {"model_hidden_fraction", "estimate --model {FILE}", S::file, [] { return set(model(), "/hidden", 4096.5); }, "{FILE}"},
    {"model_hidden_1e300", "estimate --model {FILE}", S::file, [] { return set(model(), "/hidden", 1e300); }, "{FILE}"},
    {"model_hidden_1e400", "estimate --model {FILE}", S::file, [] { return raw(model(), "/hidden", "1e400"); }, "{FILE}"},
    {"model_ffn_negative", "estimate --model {FILE}", S::file, [] { return set(model(), "/ffn_hidden", -1); }, "{FILE}"},
    {"model_vocab_zero", "estimate --model {FILE}", S::file, [] { return set(model(), "/vocab", 0); }, "{FILE}"},
    {"model_mlp_unknown", "estimate --model {FILE}", S::file, [] { return set(model(), "/mlp", "relu2"); }, "{FILE}"},
    {"model_bias_string", "estimate --model {FILE}", S::file, [] { return set(model(), "/bias", "yes"); }, "{FILE}"},
    {"model_rotary_fraction_above_one", "estimate --model {FILE}", S::file, [] { return set(model(), "/rotary_fraction", 2.0); }, "{FILE}"},
    {"model_given_a_hardware_file", "estimate --model {SRC}/hardware/trn1.32xlarge.json", S::none, none, "trn1.32xlarge.json"},
    {"model_bad_in_sweep", "sweep --model {FILE} --instances 1,2 --quiet", S::file, [] { return set(model(), "/heads", 30); }, "{FILE}"},

    // ---- stack
    {"stack_behaviour_without_source", "estimate --stack {FILE}", S::file, [] { return drop(stack(), "/dp_bucket_mb/source"); }, "{FILE}"},
    {"stack_behaviour_missing", "estimate --stack {FILE}", S::file, [] { return drop(stack(), "/attention"); }, "{FILE}"},
    {"stack_bucket_negative", "estimate --stack {FILE}", S::file, [] { return set(stack(), "/dp_bucket_mb/value", -160); }, "{FILE}"},
    {"stack_zero_stage_7", "estimate --stack {FILE}", S::file, [] { return set(stack(), "/zero_stages/value", json::array({7})); }, "{FILE}"},
    {"stack_recompute_sometimes", "estimate --stack {FILE}", S::file, [] { return set(stack(), "/recompute_modes/value", json::array({"sometimes"})); }, "{FILE}"},
    {"stack_bool_as_string", "estimate --stack {FILE}", S::file, [] { return set(stack(), "/overlap_dp_grad_reduce/value", "yes"); }, "{FILE}"},
    {"stack_allocator_share_5", "estimate --stack {FILE}", S::file, [] { return set(stack(), "/allocator_overhead_fraction/value", 5); }, "{FILE}"},
    {"stack_host_overhead_negative", "estimate --stack {FILE}", S::file, [] { return set(stack(), "/host_overhead_s/value", -1); }, "{FILE}"},
    {"stack_misspelt_key", "estimate --stack {FILE}", S::file,
     [] { return set(stack(), "/dp_overlap_grad_reduc", json{{"value"}, {"source", "x"}}); }, "{FILE}"},
    {"stack_runtime_reserve_1e300", "estimate --stack {FILE} --instances 4 --tp 8 --sp", S::file,
     [] { return set(stack(), "/runtime_reserve_gib/value", 1e300); }, "$.runtime_reserve_gib.value"},
    {"stack_runtime_reserve_5000_gib", "estimate --stack {FILE}", S::file,
     [] { return set(stack(), "/runtime_reserve_gib/value", 5000); }, "from 0 to 1024 GiB, got 5000"},
    {"stack_host_overhead_an_hour", "estimate --stack {FILE}", S::file,
     [] { return set(stack(), "/host_overhead_s/value", 3600); }, "from 0 to 60 s, got 3600"},

    // ---- calibration
    {"calibration_attention_negative", "estimate --calibration {FILE}", S::file, [] { return set(calibration(), "/attention_factor", -1); }, "{FILE}"},
    {"calibration_attention_string", "estimate --calibration {FILE}", S::file, [] { return set(calibration(), "/attention_factor", "high"); }, "{FILE}"},
    {"calibration_inter_node_zero", "estimate --calibration {FILE}", S::file, [] { return set(calibration(), "/collective/inter_node", 0); }, "{FILE}"},
    {"calibration_inter_node_1e300", "estimate --calibration {FILE}", S::file, [] { return set(calibration(), "/collective/inter_node", 1e300); }, "{FILE}"},
    {"calibration_collective_missing", "estimate --calibration {FILE}", S::file, [] { return drop(calibration(), "/collective"); }, "{FILE}"},
    // A misspelt key is refused wherever it stands, naming the key it resembles: at the top
    // level an optional field misspelt would otherwise leave its default in silence.
    {"calibration_misspelt_gemm_key", "estimate --calibration {FILE} --instances 4 --tp 8 --sp", S::file,
     [] { return set(calibration(), "/gemm/celing", 0.5); }, "{FILE}"},
    {"calibration_misspelt_collective_key", "estimate --calibration {FILE} --instances 4 --tp 8 --sp", S::file,
     [] { return set(calibration(), "/collective/inter_nod", 0.5); }, "{FILE}"},
    {"calibration_misspelt_optional_field", "estimate --calibration {FILE}", S::file,
     [] { return set(calibration(), "/host_trace_s_per_layr", 0.01); },
     "{FILE}: $.host_trace_s_per_layr: an unknown field; did you mean host_trace_s_per_layer?"},
    // ---- GEMM timings CSV (calibrate import --gemm): the file, the line and the field
    {"gemm_csv_empty", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file, none, "{FILE}: a GEMM CSV"},
    {"gemm_csv_missing_column", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,device\n512,512,512,bf16,gpu\n"); }, "{FILE}:1: header: a column named 'seconds'"},
    {"gemm_csv_non_numeric", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n512,512,512,bf16,1e-3,gpu\n512,512,lots,bf16,1e-3,gpu\n"); },
     "{FILE}:3: k:"},
    {"gemm_csv_seconds_zero", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n512,512,512,bf16,0,gpu\n"); }, "{FILE}:2: seconds: a time from 1e-9 to 86400 seconds"},
    // A denormal time gave "inf% of 9.89e+14 FLOP/s"; strtod's underflow gave "a finite number, got '4.5e-323'".
    {"gemm_csv_seconds_denormal", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n512,512,512,bf16,4.5e-323,gpu\n"); },
     "{FILE}:2: seconds: a number zero or above 1e-300 in size"},
    {"gemm_csv_seconds_a_picosecond", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n512,512,512,bf16,1e-12,gpu\n"); },
     "{FILE}:2: seconds: a time from 1e-9 to 86400 seconds"},
    {"gemm_csv_seconds_negative", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("# x\nm,n,k,dtype,seconds,device\n512,512,512,bf16,-2e-3,gpu\n"); }, "{FILE}:3: seconds"},
    {"gemm_csv_unknown_dtype", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n512,512,512,int4,1e-3,gpu\n"); }, "{FILE}:2: dtype"},
    {"gemm_csv_header_only", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n"); }, "{FILE}:1: rows"},
    {"gemm_csv_too_few_shapes", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n512,512,512,bf16,1e-3,gpu\n"); }, "{FILE}: rows: at least 5"},
    {"gemm_csv_seconds_in_another_unit", "calibrate import --gemm {FILE} --hardware trn1.32xlarge --out {FILE}.out", S::file,
     [] {
       std::string csv = "m,n,k,dtype,seconds,device\n";
       for (int m : {512, 1024, 2048, 4096, 8192}) csv += std::to_string(m) + ",4096,4096,bf16,250,trn1\n";  // ms as s
       return csv;
     },
     "{FILE}: seconds: timings whose largest GEMM"},
    {"gemm_csv_folder", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::folder, none, "{FILE}"},
    {"gemm_csv_missing_file", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.out", S::none, none, "{FILE}"},
    {"gemm_csv_threads_zero", "calibrate import --gemm {FILE} --hardware host --threads 0 --out {FILE}.out", S::file, none, "--threads"},
    {"calibration_origin_unknown", "estimate --calibration {FILE}", S::file,
     [] { return set(calibration(), "/origins", json{{"memory", "guessed"}}); }, "{FILE}: $.origins.memory"},
    {"calibrate_check_not_json", "calibrate check {FILE}", S::file, [] { return std::string("{\"gemm\": "); }, "{FILE}"},
    {"calibrate_check_folder", "calibrate check {FILE}", S::folder, none, "{FILE}"},

    // ---- validate --measured DIR
    {"measured_missing_folder", "validate --measured {DIR} --hold-out source", S::none, none, "{DIR}"},
    {"measured_file_not_folder", "validate --measured {SRC}/models/llama2-7b.json --hold-out source", S::none, none, "llama2-7b.json"},
    {"measured_not_json", "validate --measured {DIR} --hold-out source", S::measured, [] { return std::string("{"); }, "{DIR}/run.json"},
    {"measured_array", "validate --measured {DIR} --hold-out source", S::measured, [] { return std::string("[]"); }, "{DIR}/run.json"},
    {"measured_two_figures", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/runs/0/measured_step_s", 24.6); }, "{DIR}/run.json"},
    {"measured_no_figure", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return drop(measured(), "/runs/0/measured_seqs_per_s"); }, "{DIR}/run.json"},
    {"measured_duplicate_row_id", "validate --measured {DIR} --hold-out source", S::measured,
     [] {
       json j = measured();
       j["runs"][0]["id"] = "a";
       j["runs"][1]["id"] = "a";
       return j.dump(2);
     },
     "{DIR}/run.json"},
    {"measured_duplicate_row", "validate --measured {DIR} --hold-out source", S::measured,
     [] {
       json j = measured();
       j["runs"].push_back(j["runs"][0]);
       return j.dump(2);
     },
     "{DIR}/run.json"},
    {"measured_negative_figure", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/runs/0/measured_seqs_per_s", -10.4); }, "{DIR}/run.json"},
    {"measured_zero_instances", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/runs/0/instances", 0); }, "{DIR}/run.json"},
    {"measured_runs_object", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/runs", json::object()); }, "{DIR}/run.json"},
    {"measured_seq_len_string", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/workload/seq_len", "2048"); }, "{DIR}/run.json"},
    {"measured_precision_fp8", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/workload/precision", "fp8"); }, "{DIR}/run.json"},
    {"measured_recompute_layers_selective", "validate --measured {DIR} --hold-out source", S::measured,
     [] {
       json j = measured();
       j["plan"]["recompute"] = "selective";
       return set(j, "/plan/recompute_layers", 4);
     },
     "{DIR}/run.json: $.plan.recompute_layers"},
    {"measured_misspelt_key", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/plan/recompte", "full"); }, "{DIR}/run.json"},
    // An unknown name inside a run file: the message names the name, not the file that holds it.
    {"measured_unknown_model", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/model", "no-such-model"); }, "{DIR}/run.json"},
    {"measured_unknown_hardware", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/hardware", "no-such-hw"); }, "{DIR}/run.json"},
    {"measured_unknown_stack", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/stack", "no-such-stack"); }, "{DIR}/run.json"},
    {"calibrate_fit_bad_measured", "calibrate fit --hardware trn1.32xlarge --measured {DIR} --out {FILE}", S::measured,
     [] { return std::string("1e400"); }, "{DIR}/run.json"},

    // ---- validate --choices DIR
    {"choices_missing_folder", "validate --measured {DIR} --choices {DIR}/nowhere --hold-out source", S::measured,
     [] { return measured().dump(2); }, "{DIR}/nowhere"},
    {"choices_not_json", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source", S::choices,
     [] { return std::string("nope"); }, "{DIR}/choices/c.json"},
    {"choices_zero_instances", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source", S::choices,
     [] { return set(choice(), "/instances", 0); }, "{DIR}/choices/c.json"},
    {"choices_source_missing", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source", S::choices,
     [] { return drop(choice(), "/source"); }, "{DIR}/choices/c.json"},
    {"choices_misspelt_key", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source", S::choices,
     [] { return set(choice(), "/plan/zeor", 1); }, "{DIR}/choices/c.json"},
    // "plan": "tp8" is read as the default plan (TP 1 / PP 1): exit 0 and the whole report.
    {"choices_plan_string", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source", S::choices,
     [] { return set(choice(), "/plan", "tp8"); }, "{DIR}/choices/c.json"},
    // Refused, but by a message that names neither the file nor the choice.
    {"choices_unknown_model", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source", S::choices,
     [] { return set(choice(), "/model", "no-such-model"); }, "{DIR}/choices/c.json"},
    {"choices_tp_3", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source", S::choices,
     [] { return set(choice(), "/plan/tp", 3); }, "{DIR}/choices/c.json"},

    // ---- impossible plans and bad options on the command line
    {"plan_tp_3", "estimate --tp 3", S::none, none, "TP 3"},
    {"plan_tp_64", "estimate --tp 64", S::none, none, "TP 64"},
    {"plan_pp_5", "estimate --model llama2-7b --pp 5", S::none, none, "PP 5"},
    {"plan_instances_0", "estimate --instances 0", S::none, none, "--instances"},
    {"plan_instances_negative", "estimate --instances -1", S::none, none, "--instances"},
    {"plan_instances_2e9", "estimate --instances 2000000000", S::none, none, "devices"},
    {"plan_seq_len_abc", "estimate --seq-len abc", S::none, none, "--seq-len"},
    {"plan_seq_len_too_big", "estimate --seq-len 99999999999", S::none, none, "--seq-len"},
    {"plan_global_batch_2e9", "estimate --global-batch 2000000000", S::none, none, "global batch"},
    {"plan_global_batch_0", "estimate --global-batch 0", S::none, none, "--global-batch"},
    {"plan_global_batch_indivisible", "estimate --instances 4 --tp 8 --sp --micro-batch 3", S::none, none, "micro-batch 3"},
    {"plan_recompute_sometimes", "estimate --recompute sometimes", S::none, none, "--recompute"},
    {"plan_recompute_layers_0", "estimate --recompute full --recompute-layers 0", S::none, none, "--recompute-layers"},
    {"plan_recompute_layers_selective", "estimate --hardware dgx-h100 --stack megatron-lm --tp 8 --recompute selective "
     "--recompute-layers 4", S::none, none, "recompute layers 4"},
    {"plan_recompute_layers_on_nxd", "estimate --tp 8 --recompute full --recompute-layers 4", S::none, none,
     "neuronx-distributed"},
    {"plan_virtual_stages_without_pp", "estimate --virtual-stages 2 --pp 1", S::none, none, "virtual stages"},
    {"plan_unknown_model", "estimate --model no-such-model", S::none, none, "no-such-model"},
    {"plan_unknown_hardware", "estimate --hardware no-such-hw", S::none, none, "no-such-hw"},
    {"plan_unknown_stack", "estimate --stack no-such-stack", S::none, none, "no-such-stack"},
    {"plan_precision_fp8", "estimate --precision fp8", S::none, none, "--precision"},
    {"plan_format_yaml", "estimate --format yaml", S::none, none, "--format"},
    {"plan_pipeline_magic", "estimate --pipeline magic", S::none, none, "--pipeline"},
    {"plan_unknown_flag", "estimate --bogus-flag", S::none, none, "--bogus-flag"},
    {"plan_host_without_calibration", "estimate --hardware host", S::none, none, "--calibration"},
    {"sweep_plot_missing_folder", "sweep --instances 1,2 --quiet --plot /no/such/dir/x.png", S::none, none, "--plot"},
    {"sweep_pareto_missing_folder", "sweep --instances 1,2 --quiet --pareto /no/such/dir/p.svg", S::none, none, "--pareto"},
    {"sweep_tp_3", "sweep --instances 1,2 --tp 3 --quiet", S::none, none, "tp"},
    {"validate_report_missing_folder", "validate --measured {DIR} --hold-out source --report /no/such/dir/r.md", S::measured,
     [] { return measured().dump(2); }, "--report"},
    {"validate_unknown_stack", "validate --measured {DIR} --stack no-such-stack", S::measured,
     [] { return measured().dump(2); }, "no-such-stack"},
    {"calibrate_fit_out_missing_folder", "calibrate fit --out /no/such/x.json --hardware trn1.32xlarge", S::none, none, "--out"},
    {"calibrate_fit_unknown_hardware", "calibrate fit --out {FILE} --hardware no-such-hw", S::none, none, "no-such-hw"},
    {"calibrate_kernels_out_missing_folder", "calibrate kernels --quick --out /no/such/x.json", S::none, none, "--out"},
    {"search_instances_range_backwards", "search --instances 10..1 --quiet", S::none, none, "--instances"},
    {"search_instances_range_from_0", "search --instances 0..4 --quiet", S::none, none, "--instances"},
    {"search_instances_empty_item", "search --instances 1,,2 --quiet", S::none, none, "--instances"},
    {"search_tp_3", "search --instances 4 --tp 3 --quiet", S::none, none, "tp"},
    {"search_price_not_a_number", "search --instances 4 --price-usd-hour trn1.32xlarge=abc --quiet", S::none, none,
     "--price-usd-hour"},
    {"search_price_without_hardware", "search --instances 4 --price-usd-hour =12 --quiet", S::none, none,
     "HARDWARE=USD_PER_INSTANCE_HOUR"},
    {"search_prices_file_empty", "search --instances 4 --prices /dev/null --quiet", S::none, none, "/dev/null"},
    {"compare_budget_without_budget", "compare --at budget --instances 4 --quiet", S::none, none, "--budget"},
    {"compare_unknown_hardware", "compare --hardware trn1.32xlarge,no-such-hw --instances 4 --quiet", S::none, none, "no-such-hw"},

    // ---- found by the fuzz targets (tests/fuzz) and the 2 GiB worst cases
    // Leading zeros: CLI11 read 010 as octal (TP 8) and refused 08 in its own words.
    {"plan_tp_leading_zero", "estimate --tp 08", S::none, none, "--tp"},
    {"plan_tp_octal", "estimate --tp 010", S::none, none, "--tp"},
    // PP x virtual stages overflowed an int: a crash, or a division by zero.
    {"plan_virtual_stages_int_max", "estimate --pp 2 --virtual-stages 2147483647", S::none, none, "--virtual-stages"},
    {"plan_pp_times_virtual_stages_2e32", "estimate --pp 1073741824 --virtual-stages 4", S::none, none, "--pp"},
    // The search counted micro-batches up to the fixed one: an endless loop.
    {"search_micro_batch_int_max", "search --instances 4 --micro-batch 2147483647 --quiet", S::none, none, "micro_batch"},
    // Nesting past 64 levels is refused (300000 levels crashed validate: tests/cli/address_space_test.cpp).
    {"model_nested_deep", "estimate --model {FILE}", S::file,
     [] { return std::string(100, '[') + std::string(100, ']'); }, "{FILE}"},
    {"measured_nested_deep", "validate --measured {DIR} --hold-out source", S::measured,
     [] {
       std::string deep = "1";
       for (int i = 0; i < 100; ++i) deep = "{\"a\":" + deep + "}";
       return raw(measured(), "/runs/0/plan", deep);
     },
     "{DIR}/run.json"},
    // rows x cols overflowed an int: 16 x 268435457 wrapped to the 16 chips of a trn1.
    {"hardware_torus_overflow", "estimate --hardware {FILE}", S::file,
     [] { return set(json::parse(set(hardware(), "/fabric/rows", 16)), "/fabric/cols", 268435457); }, "{FILE}"},
    // Whole-number fields of a run file were cast from any double or wrapped from any integer.
    {"measured_instances_1e300", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/runs/0/instances", 1e300); }, "{DIR}/run.json"},
    {"measured_tp_wraps_int", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/plan/tp", 4294967304LL); }, "{DIR}/run.json"},
    {"measured_seq_len_fraction", "validate --measured {DIR} --hold-out source", S::measured,
     [] { return set(measured(), "/workload/seq_len", 2048.5); }, "{DIR}/run.json"},
    // Every key was measured against every known one: a key of a megabyte took 175 s in the sanitizer build (fuzz_stack_file).
    {"stack_unknown_key_of_a_megabyte", "estimate --stack {FILE}", S::file,
     [] { return set(stack(), ("/" + std::string(1 << 20, 'x')).c_str(), 1); }, "{FILE}: $.xxxxxxxx"},
    {"choices_virtual_stages_int_max", "validate --measured {DIR}/measured --choices {DIR}/choices --hold-out source",
     S::choices, [] { return set(choice(), "/plan/virtual_stages", 2147483647); }, "{DIR}/choices/c.json"},

    // ---- known bugs on the command line
    // CLI11's range check leaks: "--zero: Value 4 not in range 0 to 3".
    {"plan_zero_4", "estimate --zero 4", S::none, none, "--zero"},
    {"search_top_0", "search --top 0 --quiet", S::none, none, "--top"},
    // "Value -5 not in range 0.000000 to 1797693...(309 digits).000000".
    {"plan_tokens_negative", "estimate --tokens -5", S::none, none, "--tokens"},
    // An option whose unset value is 0 read an explicit 0 as "not given": --tokens 0 priced 20 tokens per
    // parameter, --restart-minutes 0 the assumed 7 minutes, --budget 0 no budget at all.
    {"plan_tokens_0", "estimate --tokens 0", S::none, none, "--tokens: expected a number above 0, got '0'"},
    {"search_budget_0", "search --budget 0 --quiet", S::none, none, "--budget: expected a number above 0"},
    {"search_deadline_0", "search --deadline 0 --quiet", S::none, none, "--deadline: expected a number above 0"},
    {"search_mtbf_0", "search --mtbf-hours 0 --quiet", S::none, none, "--mtbf-hours: expected a number above 0"},
    {"search_checkpoint_bandwidth_0", "search --checkpoint-gb-per-s 0 --quiet", S::none, none,
     "--checkpoint-gb-per-s: expected a number above 0"},
    {"search_restart_0", "search --restart-minutes 0 --quiet", S::none, none, "--restart-minutes: expected a number above 0"},
    {"search_checkpoint_interval_0", "search --checkpoint-interval-minutes 0 --quiet", S::none, none,
     "--checkpoint-interval-minutes: expected a number above 0"},
    // An empty value was the unset one: --stack '' priced the hardware's default stack, --calibration '' the lookup's file.
    {"plan_stack_empty", "estimate --stack ''", S::none, none, "--stack: expected a value, got an empty one"},
    {"plan_calibration_empty", "estimate --calibration ''", S::none, none, "--calibration: expected a value"},
    {"search_hardware_empty", "search --hardware '' --quiet", S::none, none, "--hardware: expected a value"},
    {"search_budget_negative", "search --budget -1 --quiet", S::none, none, "--budget"},
    {"search_threads_negative", "search --threads -1 --quiet", S::none, none, "--threads"},
    // 1024 workers aborted under a 2 GiB address-space limit (issue 41.1): the count is bounded by the machine.
    {"search_threads_past_the_machine", "search --threads 100000 --quiet", S::none, none, "hardware threads; up to"},
    // "plan refused: a size below 1 or ZeRO outside 0..3": names no option.
    {"plan_tp_0", "estimate --tp 0", S::none, none, "--tp"},
    {"plan_micro_batch_0", "estimate --micro-batch 0", S::none, none, "--micro-batch"},
    {"plan_virtual_stages_0", "estimate --virtual-stages 0", S::none, none, "--virtual-stages"},
    // Silently ignored: exit 0 with the whole ranking.
    {"search_pp_0", "search --instances 4 --pp 0 --quiet", S::none, none, "--pp"},
    {"search_micro_batch_0", "search --instances 4 --micro-batch 0 --quiet", S::none, none, "--micro-batch"},
    // The extension is checked after the sweep: exit 1 after the whole table.
    {"sweep_plot_gif", "sweep --instances 1,2 --quiet --plot {FILE}.gif", S::none, none, "--plot"},
    // ---- readers: regular files only, names escaped and shortened in the message (issue 41)
    {"model_fifo", "estimate --model {FILE}", S::fifo, none, "{FILE}: a regular file, got a FIFO"},
    {"from_config_dev_zero", "estimate --from-config /dev/zero", S::none, none, "/dev/zero: a regular file, got a device"},
    // --set: the launch's overrides of a launcher config, so only beside one; in the launcher's own grammar.
    // A NeMo-Framework-Launcher run script naming a config path the system cannot look up (too long a name).
    {"launcher_run_config_name_too_long", "estimate --from-config {DIR}/job.sh --hardware p5.48xlarge", S::script,
     [] { return "python3 /" + std::string(5000, 'a') + "/launcher_scripts/main.py training=gpt3/5b\n"; },
     "{DIR}/job.sh: training: the launcher's training config"},
    {"set_without_a_config", "estimate --set trainer.devices=8", S::none, none, "--set requires --from-config"},
    {"set_a_yaml_key_the_file_lacks", "estimate --from-config {DIR}/job.yaml --hardware p5.48xlarge --set trainer.gpus=8",
     S::yaml, [] { return std::string("trainer:\n  num_nodes: 2\n  devices: 8\nmodel:\n  micro_batch_size: 1\n"); },
     "{DIR}/job.yaml: --set trainer.gpus=8: a key the file has"},
    {"model_name_longer_than_a_path", "estimate --model \"$(printf '%0100000d' 0)\"", S::none, none,
     "(96000 bytes more): unknown model"},
    {"model_name_with_a_newline_and_an_escape", "estimate --model \"$(printf 'no\\nsuch\\033[31m')\"", S::none, none,
     "no\\nsuch\\x1b[31m: unknown model"},
    // ---- writers: through a link to a device is refused, not replaced, and nothing is left behind
    {"calibrate_fit_out_links_to_a_device", "calibrate fit --hardware trn1.32xlarge --out {FILE}", S::device_link, none,
     "{FILE}: a regular file to write the calibration file to, got a device"},
    {"export_out_is_a_folder", "export --to megatron --out {FILE}", S::folder, none, "--out"},
    // ---- imported measurements: every row's time must give its printed bandwidth (issue 41)
    {"collectives_time_1e300_us", "calibrate import --collectives {FILE} --hardware p5.48xlarge --out {FILE}.json",
     S::file, [] { return nccl_log_with_time_of_1k(" 1e300"); }, "{FILE}:23: time"},
    {"collectives_time_1e-300_us", "calibrate import --collectives {FILE} --hardware p5.48xlarge --out {FILE}.json",
     S::file, [] { return nccl_log_with_time_of_1k("1e-300"); }, "{FILE}:23: time"},
    {"collectives_two_tools_in_one_file",
     "calibrate import --collectives {FILE} --hardware p5.48xlarge --out {FILE}.json", S::file,
     [] { return fixture("nccl_all_reduce_p5_8ranks.log") + fixture("nccom_allr_trn1_32ranks.log"); },
     "nccom-test and nccl-tests"},
    // A device name that is not UTF-8 stopped the import in the JSON library's words, exit 1 (fuzz_collective_log).
    // Latin-1 or UTF-16 bytes passed through the YAML, shell and CSV readers unread (issue 41.1).
    {"launch_yaml_not_utf8", "estimate --from-config {FILE}", S::file,
     [] { return std::string("trainer:\n  num_nodes: 2 # caf\xe9\n  devices: 8\nmodel:\n  micro_batch_size: 1\n"); },
     "{FILE}: UTF-8 text; byte 30 (0xe9)"},
    {"gemm_csv_not_utf8", "calibrate import --gemm {FILE} --hardware p5.48xlarge --out {FILE}.json", S::file,
     [] { return std::string("m,n,k,dtype,seconds,device\n512,512,512,bf16,1e-3,g\xe9pu\n"); }, "{FILE}: UTF-8 text; byte 51 (0xe9)"},
    {"collectives_device_name_not_utf8",
     "calibrate import --collectives {FILE} --hardware p5.48xlarge --out {FILE}.json", S::file,
     [] {
       std::string log = fixture("nccl_all_reduce_p5_8ranks.log");
       return log.replace(log.find("NVIDIA"), 6, "NVIDIA\xff");
     },
     "{FILE}: UTF-8 text; byte"},  // every reader holds its file to UTF-8 before any field is read
    // Megatron-LM's default global batch (micro-batch x replicas) overflowed a long (fuzz_from_config).
    {"from_config_default_global_batch_past_a_long",
     "estimate --from-config {DIR}/job.sh --model gpt3-175b --hardware dgx-h100", S::script,
     [] {
       return std::string("torchrun --nnodes 1073741824 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 "
                          "--micro-batch-size 1073741824 --seq-length 2048 --bf16\n");
     },
     "{DIR}/job.sh: --global-batch-size: a global batch of at most 2147483647 sequences"},
};

// ---------------------------------------------------------------- running

using trainplan::cli::testing::Outcome;
Outcome run_bad_input(const std::string& args) { return trainplan::cli::testing::run_cli(args); }

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

void write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

const char* const kLibraryText[] = {"json.exception", "basic_filebuf", "std::",        "what():",
                                    "terminate",      "bad_alloc",     "out_of_range", "Value ",
                                    "not in range",   "Could not convert", "Segmentation", "Aborted"};

int lines(const std::string& s) {
  int n = int(std::count(s.begin(), s.end(), '\n'));
  return n + (!s.empty() && s.back() != '\n');
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, RefusedWithExitTwoInAtMostTwoLinesNamingTheCulprit) {
  const Case& c = GetParam();
  // Unique per process and case: ctest may run the cases in parallel.
  const std::string stem = ::testing::TempDir() + "trainplan_bad_input_" + std::to_string(getpid()) + "_" + c.name;
  const std::string file = stem + ".json", dir = stem + "_dir";
  fs::remove_all(file);
  fs::remove_all(dir);
  switch (c.setup) {
    case Setup::none: break;
    case Setup::file: write(file, c.content()); break;
    case Setup::folder: fs::create_directories(file); break;
    case Setup::fifo: ASSERT_EQ(mkfifo(file.c_str(), 0600), 0); break;
    case Setup::device_link: fs::create_symlink("/dev/full", file); break;
    case Setup::measured: write(fs::path(dir) / "run.json", c.content()); break;
    case Setup::script: write(fs::path(dir) / "job.sh", c.content()); break;
    case Setup::yaml: write(fs::path(dir) / "job.yaml", c.content()); break;
    case Setup::choices:
      write(fs::path(dir) / "measured" / "seed.json", measured().dump(2));
      write(fs::path(dir) / "choices" / "c.json", c.content());
      break;
  }
  auto fill = [&](std::string s) {
    s = replace_all(std::move(s), "{FILE}", file);
    s = replace_all(std::move(s), "{DIR}", dir);
    return replace_all(std::move(s), "{SRC}", TRAINPLAN_SOURCE_DIR);
  };
  const std::string args = fill(c.args), expect = fill(c.expect);
  const Outcome r = run_bad_input(args);
  const bool partial_left = fs::exists(file + ".partial") || fs::exists(fs::path(dir) / "run.json.partial");
  fs::remove_all(file);
  fs::remove_all(file + ".gif");
  fs::remove_all(dir);

  if (c.known_bug) GTEST_SKIP() << "known bug: trainplan " << args << "\n" << r.out.substr(0, 2000);

  SCOPED_TRACE("trainplan " + args + "\n" + r.out.substr(0, 4000));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find(expect), std::string::npos) << "expected the output to name: " << expect;
  for (const char* text : kLibraryText) EXPECT_EQ(r.out.find(text), std::string::npos) << "library text: " << text;
  EXPECT_GE(lines(r.out), 1);
  EXPECT_LE(lines(r.out), 2);
  EXPECT_FALSE(partial_left) << "a failed write left its .partial behind";
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.name;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(BadInputCorpus, HasAtLeastSixtyDistinctCases) {
  std::set<std::string> names;
  for (const Case& c : kCases) EXPECT_TRUE(names.insert(c.name).second) << "duplicate row: " << c.name;
  EXPECT_GE(names.size(), 60u);
}

}  // namespace
