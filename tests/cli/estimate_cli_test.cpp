// End-to-end: the trainplan binary on good and bad input. Bad input gets one
// line on stderr naming the file, field or plan problem, and exit code 2.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "run_cli.h"

namespace {

using trainplan::cli::testing::run_cli;

struct EstimateCliRun {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

EstimateCliRun run_estimate(const std::string& args) {
  // One file per process and call: ctest runs tests in parallel.
  static int calls = 0;
  const std::string err_path =
      testing::TempDir() + "trainplan_stderr_" + std::to_string(getpid()) + "_" + std::to_string(++calls) + ".txt";
  const std::string command = std::string(TRAINPLAN_BINARY) + " " + args + " 2>" + err_path;
  EstimateCliRun r{0, "", ""};
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

int newline_count(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(EstimateCli, Seed002PlanAsJsonWithUnitsInNames) {
  const EstimateCliRun r = run_estimate("estimate --model llama2-7b --hardware trn1.32xlarge --instances 128 --tp 8 --pp 1 --sp "
                    "--seq-len 4096 --global-batch 1024 --micro-batch 1 --recompute selective --zero 1 "
                    "--precision bf16-sr --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["dp"], 512);
  EXPECT_EQ(j["plan"]["grad_accum"], 2);
  EXPECT_GT(j["time"]["step_s"].get<double>(), 0);
  EXPECT_GT(j["throughput"]["seqs_per_s"].get<double>(), 0);
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  EXPECT_EQ(j["prices"].size(), 2u);
}

TEST(EstimateCli, TextAndCsvAndMarkdown) {
  const EstimateCliRun text = run_estimate("estimate --instances 4 --tp 8 --sp");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Where step time goes"), std::string::npos);
  const EstimateCliRun csv = run_estimate("estimate --instances 4 --tp 8 --sp --format csv");
  EXPECT_NE(csv.out.find("time.step_s,"), std::string::npos);
  const EstimateCliRun md = run_estimate("estimate --instances 4 --tp 8 --sp --format markdown");
  EXPECT_NE(md.out.find("| ---"), std::string::npos);
}

TEST(EstimateCli, ImpossiblePlansAreRefusedWithTheirReason) {
  EstimateCliRun r = run_estimate("estimate --tp 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("TP 3 does not divide"), std::string::npos) << r.err;
  EXPECT_EQ(newline_count(r.err), 1);
  r = run_estimate("estimate --pp 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not divide llama2-7b's 32 layers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("uneven stages"), std::string::npos) << r.err;
  r = run_estimate("estimate --instances 3 --micro-batch 1 --global-batch 1000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not divide into DP"), std::string::npos) << r.err;
  r = run_estimate("estimate --model llama2-70b --instances 1 --tp 8 --zero 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not fit in HBM by"), std::string::npos) << r.err;
}

// Without plan flags the refused plan is the default (TP 1, PP 1): the one
// refusal line then names the search's best plan at those instances. A plan
// the user named gets no such advice.
TEST(EstimateCli, ARefusedDefaultPlanNamesTheSearchsBest) {
  const auto d = run_cli("estimate -q");  // Llama 2 7B on one trn1: 45 GiB against 16 per NeuronCore
  EXPECT_EQ(d.code, 2);
  const std::string first = d.out.substr(0, d.out.find('\n'));
  EXPECT_NE(first.find("does not fit in HBM"), std::string::npos) << d.out;
  EXPECT_NE(first.find("that is the default plan (no plan flags given): the search's best at 1 instance is TP "),
            std::string::npos) << d.out;
  const auto named = run_cli("estimate -q --tp 1");
  EXPECT_EQ(named.code, 2);
  EXPECT_EQ(named.out.find("default plan"), std::string::npos) << named.out;
  const auto none = run_cli("estimate -q -m llama2-70b -H p4d.24xlarge -n 2");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.out.find("no plan fits at 2 instances"), std::string::npos) << none.out;
}

TEST(EstimateCli, BadDescriptorsNameFileAndField) {
  const std::string path = testing::TempDir() + "bad_hw_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << R"({"name": "x", "accelerator": "y", "family": "z", "chips_per_instance": {"value": -1, "source": "s"}})";
  EstimateCliRun r = run_estimate("estimate --hardware " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("$.chips_per_instance.value"), std::string::npos) << r.err;
  EXPECT_EQ(newline_count(r.err), 1);
  r = run_estimate("estimate --model /no/such/config.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;
  r = run_estimate("estimate --calibration /no/such/calibration.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(newline_count(r.err), 1) << r.err;
}

TEST(ListCli, ShowsModelsAndHardware) {
  const EstimateCliRun r = run_estimate("list");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("llama2-70b"), std::string::npos);
  EXPECT_NE(r.out.find("dl1.24xlarge"), std::string::npos);
}

// Issue 15's FP8: on p5 (H100) under Megatron-LM it shortens the step and adds
// FP8 weight copies; on an A100 instance it is refused naming the missing peak.
TEST(EstimateCli, Fp8ChangesTheEstimateOnP5AndIsRefusedWithoutAnFp8Peak) {
  const std::string plan = " --model llama2-70b --hardware p5.48xlarge --stack megatron-lm --instances 16 --tp 8 "
                           "--pp 4 --virtual-stages 2 --sp --global-batch 1024 --format json";
  const EstimateCliRun bf16 = run_estimate("estimate --precision mixed-bf16" + plan), fp8 = run_estimate("estimate --precision fp8" + plan);
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  const auto a = nlohmann::json::parse(bf16.out), b = nlohmann::json::parse(fp8.out);
  EXPECT_LT(b["time"]["step_s"].get<double>(), 0.9 * a["time"]["step_s"].get<double>());
  EXPECT_GT(b["memory"]["weights_bytes"].get<double>(), a["memory"]["weights_bytes"].get<double>());
  const EstimateCliRun a100 = run_estimate("estimate --precision fp8 --model llama2-7b --hardware p4d.24xlarge --stack megatron-lm "
                          "--instances 2 --tp 8");
  EXPECT_EQ(a100.exit_code, 2);
  EXPECT_EQ(a100.out, "");
  EXPECT_NE(a100.err.find("trainplan: --precision fp8: fp8 needs an FP8 matrix path, and p4d.24xlarge"),
            std::string::npos) << a100.err;
}

namespace {

// The stack behaviours that change a step and carry assumed figures are named
// in the output: TE's attention on Hopper and a once-per-instance MoE dispatch.
TEST(EstimateCli, StackAttentionAndDispatchAreNamedAsAssumptions) {
  const EstimateCliRun r = run_estimate("estimate --model qwen3-30b-a3b --hardware dgx-h100 --stack nemo --instances 2 --ep 16 "
                       "--recompute none --precision fp8 --seq-len 4096 --global-batch 1024 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::string all;
  for (const auto& a : j["assumptions"]) all += a.get<std::string>() + "\n";
  EXPECT_NE(all.find("flash attention on h100 runs at 1.60x"), std::string::npos) << all;
  EXPECT_NE(all.find("once per instance"), std::string::npos) << all;
  // A100 under the same stack: no speedup to name.
  const EstimateCliRun a100 = run_estimate("estimate --model llama2-7b --hardware p4d.24xlarge --stack nemo --tp 8 --sp --format json");
  ASSERT_EQ(a100.exit_code, 0) << a100.err;
  EXPECT_EQ(a100.out.find("attention_speedup"), std::string::npos);
}

// BLOOM's head dimension 150 (hidden 14400, 96 heads) misses the A100's
// 16-byte matrix alignment under an unfused-attention stack: the output says
// its attention GEMMs leave the tensor cores. Flash attention pads on chip.
TEST(EstimateCli, MisalignedHeadDimensionIsNamedAsAnAssumption) {
  const std::string plan = "--model bloom-l80-h14400-a96 --hardware jean-zay-a100-80gb --instances 10 --tp 8 --pp 10 "
                           "--seq-len 2048 --global-batch 2048 --recompute full --precision mixed-bf16 --format json";
  const EstimateCliRun unfused = run_estimate("estimate " + plan + " --stack megatron-deepspeed-fp16");
  ASSERT_EQ(unfused.exit_code, 0) << unfused.err;
  const std::string text = nlohmann::json::parse(unfused.out)["assumptions"].dump();
  EXPECT_NE(text.find("head dimension 150 misses jean-zay-a100-80gb's 16-byte matrix alignment"), std::string::npos)
      << text;
  const EstimateCliRun flash = run_estimate("estimate " + plan + " --stack megatron-lm");
  ASSERT_EQ(flash.exit_code, 0) << flash.err;
  EXPECT_EQ(flash.out.find("matrix alignment"), std::string::npos);
}

// Packed documents: the flash stack computes a share of each score matrix and
// the step is faster; more tokens per document than per sequence is refused,
// naming the flag.
TEST(EstimateCli, DocumentTokensShrinkAttentionAndAreChecked) {
  const std::string plan = "estimate --model llama3.2-3b --hardware a100-80gb-x1 --stack torchtune --seq-len 4096 "
                           "--global-batch 2 --micro-batch 2 --zero 0 --recompute none --format json";
  const EstimateCliRun whole = run_estimate(plan);
  const EstimateCliRun packed = run_estimate(plan + " --document-tokens 256");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  const auto w = nlohmann::json::parse(whole.out), p = nlohmann::json::parse(packed.out);
  EXPECT_LT(p["time"]["step_s"].get<double>(), w["time"]["step_s"].get<double>());
  EXPECT_EQ(p["workload"]["document_tokens"], 256);
  // (128 + 128) / 4096 of each score matrix
  EXPECT_NE(p["assumptions"].dump().find("computes 6.2% of each score matrix"), std::string::npos) << p["assumptions"];
  const EstimateCliRun too_long = run_estimate(plan + " --document-tokens 5000");
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_NE(too_long.err.find("--document-tokens"), std::string::npos) << too_long.err;
}

}  // namespace

// PP 5 over 32 layers runs as uneven stages when asked: the busiest holds 7
// layers (ceil(32 / 5)), so the step is slower than PP 4's 8 even layers per
// stage would suggest per layer; the plan line and the JSON say so.
TEST(EstimateCli, UnevenStagesRunWhenAsked) {
  const EstimateCliRun r = run_estimate("estimate --instances 5 --tp 8 --pp 5 --uneven-stages");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("virtual stages 1 (uneven stages)"), std::string::npos) << r.out;
  const EstimateCliRun j = run_estimate("estimate --instances 5 --tp 8 --pp 5 --uneven-stages --format json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_TRUE(nlohmann::json::parse(j.out)["plan"]["uneven_stages"].get<bool>());
  EXPECT_EQ(run_estimate("estimate --instances 5 --tp 8 --pp 5 --uneven-stages --virtual-stages 2").exit_code, 2);
}

