// A newcomer's first commands: only --model and --hardware given. Every
// built-in pair gets an answer (exit 0 with a table) or one line saying why
// not (exit 2); defaults follow the hardware's stack and the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace {

using trainplan::cli::testing::run_cli;

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

int count_lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

// Precision and recompute come from the hardware's default stack (issue 39):
// mixed BF16 under Megatron-LM on p5, BF16 with stochastic rounding under
// NxD on trn1; DeepSpeed-Habana on dl1 offers no selective recompute; BERT's
// learned positions end at 512, so its default sequence is 512, not 4096.
TEST(Defaults, FollowTheHardwaresStackAndTheModel) {
  const auto p5 = run_cli("estimate -m llama2-7b -H p5.48xlarge");
  EXPECT_EQ(p5.code, 0) << p5.out;
  EXPECT_NE(p5.out.find("seq 4096, global batch 1024, mixed-bf16"), std::string::npos) << p5.out;
  EXPECT_NE(p5.out.find("assumption: precision mixed-bf16, stack megatron-lm's default"), std::string::npos) << p5.out;
  const auto trn1 = run_cli("estimate -m llama2-7b -H trn1.32xlarge --tp 8 --sp");
  EXPECT_EQ(trn1.code, 0) << trn1.out;
  EXPECT_NE(trn1.out.find("global batch 1024, bf16-sr"), std::string::npos) << trn1.out;
  const auto bert = run_cli("estimate -m bert-large -H dl1.24xlarge");
  EXPECT_EQ(bert.code, 0) << bert.out;
  EXPECT_NE(bert.out.find("seq 512,"), std::string::npos) << bert.out;
  EXPECT_NE(bert.out.find("recompute none"), std::string::npos) << bert.out;
  EXPECT_NE(bert.out.find("assumption: sequence length 512, bert-large's positions"), std::string::npos) << bert.out;
  // What the user names wins over every default.
  const auto named = run_cli("estimate -m bert-large -H dl1.24xlarge --seq-len 128 --precision fp32 --recompute full");
  EXPECT_EQ(named.code, 0) << named.out;
  EXPECT_NE(named.out.find("seq 128, global batch 1024, fp32"), std::string::npos) << named.out;
  EXPECT_NE(named.out.find("recompute full"), std::string::npos) << named.out;
  EXPECT_EQ(named.out.find("assumption: precision"), std::string::npos) << named.out;
}

// A search or sweep that keeps no plan says so in one line and exits 2,
// naming the cause the nearest plans met; there is no table or plot to show.
TEST(Defaults, NoFeasiblePlanIsOneLineAndExitTwo) {
  const auto search = run_cli("search -q -m llama3.1-405b -H dl1.24xlarge");
  EXPECT_EQ(search.code, 2) << search.out;
  EXPECT_EQ(search.out.rfind("trainplan: no feasible plan for llama3.1-405b on dl1.24xlarge at 1..128 instances: ", 0), 0u)
      << search.out;
  EXPECT_NE(search.out.find("the nearest were dropped as: does not fit in HBM"), std::string::npos) << search.out;
  EXPECT_EQ(count_lines(search.out), 1) << search.out;
  const auto sweep = run_cli("sweep -q -m bert-large -H dl1.24xlarge --seq-len 4096 --plot /tmp/trainplan-no-plan.png");
  EXPECT_EQ(sweep.code, 2) << sweep.out;
  EXPECT_NE(sweep.out.find("sequence longer than the learned positions"), std::string::npos) << sweep.out;
  EXPECT_EQ(count_lines(sweep.out), 1) << sweep.out;
  EXPECT_FALSE(std::filesystem::exists("/tmp/trainplan-no-plan.png"));
  // One hardware without a plan among others with one: the line, and exit 0.
  const auto mixed = run_cli("search -q -m llama3.1-405b -H dl1.24xlarge,p5.48xlarge");
  EXPECT_EQ(mixed.code, 0) << mixed.out;
  EXPECT_NE(mixed.out.find("trainplan: no feasible plan for llama3.1-405b on dl1.24xlarge"), std::string::npos);
}

bool answers_or_refuses_in_one_line(const trainplan::cli::testing::Outcome& r, const std::string& args) {
  if (r.code == 0) {
    EXPECT_GT(count_lines(r.out), 3) << args << "\n" << r.out;
    return count_lines(r.out) > 3;
  }
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("trainplan: ", 0), 0u) << args << "\n" << r.out;
  return r.code == 2 && r.out.rfind("trainplan: ", 0) == 0;
}

// A mistyped name or flag is refused with the nearest known one.
TEST(Defaults, MistypedNamesAndFlagsGetADidYouMean) {
  const auto flag = run_cli("estimate --tpp 2");
  EXPECT_EQ(flag.code, 2) << flag.out;
  EXPECT_NE(flag.out.find("did you mean --tp?"), std::string::npos) << flag.out;
  const auto model = run_cli("estimate -m llama3-70");
  EXPECT_EQ(model.code, 2) << model.out;
  EXPECT_NE(model.out.find("unknown model; did you mean llama3-70b?"), std::string::npos) << model.out;
  const auto hardware = run_cli("search -q -H trn1");
  EXPECT_NE(hardware.out.find("did you mean trn1.32xlarge?"), std::string::npos) << hardware.out;
  const auto column = run_cli("search -q --instances 4 --columns rank,throughput");
  EXPECT_EQ(column.code, 2) << column.out;
  EXPECT_NE(column.out.find("--columns"), std::string::npos) << column.out;
}

// The default text view fits a 120-column terminal; csv keeps every column.
TEST(Defaults, SearchTableFitsOneHundredTwentyColumns) {
  const auto text = run_cli("search -q --instances 128 --top 5");
  ASSERT_EQ(text.code, 0) << text.out;
  const std::size_t best = text.out.find("Best plans");
  std::size_t start = text.out.find('\n', best) + 1;
  for (int line = 0; line < 8; ++line) {
    const std::size_t end = text.out.find('\n', start);
    EXPECT_LE(end - start, 120u) << text.out.substr(start, end - start);
    start = end + 1;
  }
  const auto csv = run_cli("search -q --instances 128 --top 1 --format csv");
  EXPECT_NE(csv.out.find("grad_accum,zero,recompute,overlap,step_time_s"), std::string::npos) << csv.out;
}

// The quick start's sweep on one hardware: the title names the hardware and the
// price kind, so the scaling table's reading view fits 120 columns.
TEST(Defaults, SweepTableFitsOneHundredTwentyColumns) {
  const auto text = run_cli("sweep -q --instances 1..128");
  ASSERT_EQ(text.code, 0) << text.out;
  const std::size_t scaling = text.out.find("Scaling of");
  ASSERT_NE(scaling, std::string::npos) << text.out;
  EXPECT_NE(text.out.find("trn1.32xlarge", scaling), std::string::npos);
  std::size_t start = text.out.find('\n', scaling) + 1;
  for (int line = 0; line < 11; ++line) {
    const std::size_t end = text.out.find('\n', start);
    EXPECT_LE(end - start, 120u) << text.out.substr(start, end - start);
    start = end + 1;
  }
  const auto json = run_cli("sweep -q --instances 1,2 --format json");
  EXPECT_NE(json.out.find("\"time_to_train_days\""), std::string::npos);
  EXPECT_NE(json.out.find("\"cost_to_train_usd\""), std::string::npos);
}

// compare over three hardware with its defaults: the reading view fits 120
// columns (a long plan breaks after its slashes), names each row's stack and
// precision, and puts the one instance count in the title and each rate in a
// note; csv keeps every column under its machine key.
TEST(Defaults, CompareTableFitsOneHundredTwentyColumns) {
  const auto text = run_cli("compare -q -H trn1.32xlarge,p5.48xlarge,p4d.24xlarge --model llama3-70b");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("Hardware compared at 16 instances"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("neuronx-distributed, bf16-sr"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Prices per instance-hour: trn1.32xlarge on-demand $"), std::string::npos) << text.out;
  std::istringstream lines(text.out.substr(0, text.out.find("trn1.32xlarge: stack")));
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << line;
  const auto csv = run_cli("compare -q -H trn1.32xlarge,p5.48xlarge --model llama3-70b --format csv");
  EXPECT_NE(csv.out.find("hardware,stack_precision,instances,plan,throughput_tokens_per_s,mfu,time_to_train_days,price,"
                         "cost_to_train_usd"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("throughput_vs_first"), std::string::npos) << csv.out;
}

// list and estimate as the README's first commands give them fit 120 columns:
// list's stack descriptions wrap whole (no longer cut at 60 characters), their
// release lines go to a note; estimate's assumption lines wrap like notes.
TEST(Defaults, ListAndEstimateFitOneHundredTwentyColumns) {
  for (const char* command : {"list", "estimate -q --instances 128 --tp 8 --pp 1 --sp"}) {
    const auto r = run_cli(command);
    ASSERT_EQ(r.code, 0) << command << "\n" << r.out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << command << ": " << line;
  }
  const auto list = run_cli("list");
  EXPECT_NE(list.out.find("Lines: megatron-deepspeed-habana@1.16-1.19"), std::string::npos) << list.out;
  const auto csv = run_cli("list --format csv");
  EXPECT_NE(csv.out.find("name,runs_on,releases,gradient_accumulation,attention,dp_overlap,zero_stages,pipeline,versions"),
            std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("llm-foundry MPT benchmarks (scripts/train/benchmarking, 2023)"), std::string::npos);
}

// -q is taken by every command, whether it draws a progress bar or not (each
// run for real: CLI11 answers --help before it checks the other flags).
TEST(Defaults, EveryCommandTakesQuiet) {
  const std::string dir = ::testing::TempDir();
  for (const std::string command :
       {std::string("list -q"), std::string("validate -q --stack torchtune"),
        "calibrate fit -q --hardware dl1.24xlarge --out " + dir + "quiet-fit.json",
        "calibrate import -q --collectives tests/calib/fixtures/nccl_all_reduce_p5_8ranks.log --hardware p5.48xlarge "
        "--out " + dir + "quiet-nccl.json",
        "calibrate check -q " + dir + "quiet-nccl.json",
        "export -q --to megatron --out " + dir + "quiet.sh --model llama2-7b --hardware p5.48xlarge --instances 2 "
        "--tp 8 --sp --precision mixed-bf16",
        std::string("estimate -q --instances 4 --tp 8 --sp")}) {
    const auto r = run_cli(command);
    EXPECT_EQ(r.code, 0) << command << "\n" << r.out;
  }
}

// Prices: a kind the hardware does not list falls back to the first it does,
// with a note; a user's own rate wins over every listed one; a hardware with
// no price at all has no cost figures, and a cost objective then asks for one.
TEST(Prices, FallBackPerHardwareAndTakeTheUsersRate) {
  const auto fallback = run_cli("compare -q -H trn1.32xlarge,trn2.48xlarge --instances 4 --price reserved-3y");
  EXPECT_EQ(fallback.code, 0) << fallback.out;
  EXPECT_NE(fallback.out.find("price: trn2.48xlarge lists no reserved-3y price; its capacity-block price"),
            std::string::npos) << fallback.out;
  EXPECT_NE(fallback.out.find("reserved-3y $"), std::string::npos) << fallback.out;  // trn1 lists it

  const auto none = run_cli("search -q -H a100-80gb-x1 --instances 1 --objective tokens-per-dollar");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_EQ(count_lines(none.out), 1) << none.out;
  EXPECT_NE(none.out.find("give --price-usd-hour a100-80gb-x1=RATE"), std::string::npos) << none.out;

  // 4.10 USD an instance-hour: tokens per USD = tokens/s x 3600 / (instances x 4.10).
  const auto rate = run_cli("search -q -H a100-80gb-x1 --instances 1 --top 1 --objective tokens-per-dollar "
                            "--price-usd-hour a100-80gb-x1=4.10 --format json");
  ASSERT_EQ(rate.code, 0) << rate.out;
  const auto doc = nlohmann::json::parse(rate.out);
  for (const auto& table : doc["tables"])
    if (table["key"] == "best_plans") {
      const auto& row = table["rows"][0];
      EXPECT_NEAR(row["tokens_per_usd"].get<double>(), row["tokens_per_s"].get<double>() * 3600 / 4.10, 1e-6 * row["tokens_per_usd"].get<double>());
    }
  EXPECT_NE(rate.out.find("the user's rate from --price-usd-hour"), std::string::npos) << rate.out;

  const auto bad = run_cli("search -q --price-usd-hour trn1.32xlarge=-3");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--price-usd-hour: trn1.32xlarge"), std::string::npos) << bad.out;
}

// estimate for every built-in model on one hardware, nothing else set: exit 0
// with the report, or exit 2 with one line that starts "trainplan:" (an
// out-of-memory refusal then shows the breakdown after that line).
class EveryModel : public testing::TestWithParam<std::string> {};

TEST_P(EveryModel, EstimateAnswersOrRefusesInOneLine) {
  for (const std::string& model : names_in("models")) {
    const std::string args = "estimate -q -m " + model + " -H " + GetParam();
    const auto r = run_cli(args);
    if (!answers_or_refuses_in_one_line(r, args)) return;
    if (r.code == 2) EXPECT_EQ(r.out.find("\ntrainplan: "), std::string::npos) << args << "\n" << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Hardware, EveryModel, testing::ValuesIn(names_in("hardware")),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
                           return name;
                         });

// search for every model on the default hardware and compare for every
// hardware with the default model; at 8 instances, as the default 1..128 over
// every pair takes minutes (a 175B model's search is about 0.4 s a hardware).
TEST(Defaults, EveryModelSearchesAndEveryHardwareCompares) {
  for (const std::string& model : names_in("models")) {
    const std::string args = "search -q --top 1 --instances 8 -m " + model;
    if (!answers_or_refuses_in_one_line(run_cli(args), args)) return;
  }
  for (const std::string& hardware : names_in("hardware")) {
    const std::string args = "compare -q --instances 8 -H " + hardware;
    if (!answers_or_refuses_in_one_line(run_cli(args), args)) return;
  }
}

// sweep with its default counts for every hardware and the default model.
TEST(Defaults, EveryHardwareSweeps) {
  for (const std::string& hardware : names_in("hardware")) {
    const std::string args = "sweep -q -H " + hardware;
    if (!answers_or_refuses_in_one_line(run_cli(args), args)) return;
  }
}

}  // namespace
