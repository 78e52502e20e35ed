// End-to-end: runs the built trainplan binary (TRAINPLAN_BINARY).
#include <gtest/gtest.h>

#include "run_cli.h"

#include <array>
#include <regex>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>

namespace {

using trainplan::cli::testing::Outcome;
Outcome run(const std::string& args) { return trainplan::cli::testing::run_cli(args); }

// The rows of the first table under `key` in a versioned JSON document (report/json_document.h).
nlohmann::json rows_of(const nlohmann::json& document, const std::string& key) {
  for (const auto& table : document.at("tables"))
    if (table.at("key") == key) return table.at("rows");
  return nlohmann::json::array();
}

TEST(SearchCli, JsonOutputNamesDropsAndTopPlans) {
  const Outcome r = run("search --instances 8 --top 3 --quiet --format json --threads 2");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "trainplan/search/1");
  EXPECT_EQ(j.at("query").at("instances"), "8");
  ASSERT_EQ(j.at("tables").size(), 2u);
  EXPECT_EQ(j["tables"][0]["scope"]["hardware"], "trn1.32xlarge");
  EXPECT_GT(rows_of(j, "plan_outcomes").size(), 1u);
  const nlohmann::json top = rows_of(j, "best_plans");
  ASSERT_EQ(top.size(), 3u);
  EXPECT_GT(top[0]["tokens_per_s"].get<double>(), 0);
}

TEST(SearchCli, OutputDoesNotDependOnThreads) {
  const Outcome one = run("search --instances 4,8 --top 5 --quiet --format csv --threads 1");
  const Outcome two = run("search --instances 4,8 --top 5 --quiet --format csv --threads 3");
  ASSERT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(one.out, two.out);
}

// Hardware that lists no price (hls-gaudi3) says so in words, in the title and
// the cost columns, not as a price kind called "none".
TEST(SearchCli, HardwareWithoutAPriceSaysSo) {
  const Outcome r = run("search -m llama2-7b -H hls-gaudi3 --instances 1 --top 3 --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("none price"), std::string::npos) << r.out;
  // The title and the note wrap where a name or the descriptor's path ends, which depends on the checkout.
  std::string unwrapped;
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    if (r.out[i] == '\n' && r.out.compare(i + 1, 2, "  ") == 0) {
      unwrapped += ' ';
      i += 2;
    } else {
      unwrapped += r.out[i];
    }
  }
  EXPECT_NE(unwrapped.find("stack megatron-deepspeed-habana, no price listed"), std::string::npos) << r.out;
  EXPECT_NE(unwrapped.find("cost figures are not available; --price-usd-hour hls-gaudi3=RATE sets one"),
            std::string::npos)
      << r.out;
  const Outcome sweep = run("sweep -m llama2-7b -H hls-gaudi3 --instances 1,2 --quiet");
  ASSERT_EQ(sweep.code, 0) << sweep.out;
  EXPECT_NE(sweep.out.find("prices: no price listed"), std::string::npos) << sweep.out;
}

TEST(SweepCli, WritesPlotsWithoutGnuplotErrors) {
  const auto dir = std::filesystem::temp_directory_path() / "trainplan_sweep_test";
  std::filesystem::create_directories(dir);
  const auto png = dir / "scaling.png", svg = dir / "pareto.svg";
  std::filesystem::remove(png);
  std::filesystem::remove(svg);
  const Outcome r = run("sweep --instances 1,2,4 --tp 8 --pp 1 --sp on --zero 1 --micro-batch 1 --recompute selective "
                    "--quiet --plot " + png.string() + " --pareto " + svg.string());
  ASSERT_EQ(r.code, 0) << r.out;  // a gnuplot error exits 1 with its message
  EXPECT_NE(r.out.find("Scaling of llama2-7b"), std::string::npos);
  EXPECT_NE(r.out.find("Utilisation with failures"), std::string::npos);
  EXPECT_GT(std::filesystem::file_size(png), 1000u);
  EXPECT_GT(std::filesystem::file_size(svg), 1000u);
}

TEST(CompareCli, OneRowPerHardwareWithRatioOneForTheFirst) {
  const Outcome r = run("compare --hardware trn1.32xlarge,p4d.24xlarge --at instances --instances 4 --quiet --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const nlohmann::json rows = rows_of(j, "hardware_compared");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["hardware"], "trn1.32xlarge");
}

// Each instance type under its own software: HARDWARE=STACK entries.
TEST(CompareCli, EachHardwareTakesItsOwnStackEntry) {
  const Outcome r = run("compare --hardware trn1.32xlarge,p4d.24xlarge --at instances --instances 4 --quiet --format json "
                        "--stack trn1.32xlarge=neuronx-distributed@2.21,p4d.24xlarge=nemo");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json rows = rows_of(nlohmann::json::parse(r.out), "hardware_compared");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["stack_precision"].get<std::string>().rfind("neuronx-distributed-2.20,", 0), 0u) << rows[0];
  EXPECT_EQ(rows[1]["stack_precision"].get<std::string>().rfind("nemo,", 0), 0u) << rows[1];
  // One entry, the other hardware on its default (megatron-lm on p4d).
  const Outcome one = run("compare --hardware trn1.32xlarge,p4d.24xlarge --at instances --instances 4 --quiet "
                          "--format json --stack trn1.32xlarge=neuronx-distributed@2.21");
  ASSERT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(rows_of(nlohmann::json::parse(one.out), "hardware_compared")[1]["stack_precision"].get<std::string>().rfind(
                "megatron-lm,", 0),
            0u);
  // One CUDA stack for a list with a Trainium instance: refused, pointing at the per-hardware entries.
  const Outcome mixed = run("compare --hardware trn1.32xlarge,p4d.24xlarge --quiet --stack nemo");
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.out.find("--stack HARDWARE=STACK"), std::string::npos) << mixed.out;
  const Outcome typo = run("compare --hardware trn1.32xlarge,p4d.24xlarge --quiet --stack trn2.48xlarge=nemo");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.out.find("a hardware of --hardware (trn1.32xlarge, p4d.24xlarge)"), std::string::npos) << typo.out;
}

TEST(SearchCli, BadInstancesAreRefused) {
  EXPECT_NE(run("search --instances 0..4 --quiet").code, 0);
}

}  // namespace

// The reference plan takes the overlap the search is restricted to; before,
// --overlap-dp off ranked a reference with DP overlap against leaders without it.
TEST(SearchCli, ReferenceFollowsTheOverlapRestriction) {
  const Outcome r = run("search --instances 16 --overlap-dp off --quiet --top 1 --reference-tp 8 --reference-pp 1 "
                        "--reference-sp");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("TP 8 / PP 1 / SP / mb 1 / ZeRO 1 / selective / no DP overlap, 16 instances"), std::string::npos)
      << r.out;
}

// Seed 002 (shared/reference/seed-measurements.md): on 128 trn1.32xlarge with
// seq 4096 and global batch 1024, the authors' best layout was TP 8, PP 1, SP,
// DP 512, with selective recompute. Under trainium1+neuronx-distributed.json
// (fitted on the Neuron SDK table's NxD rows of releases 2.15-2.18, with EFA held
// to its measured band) the search's leader is that very layout without
// recompute, which the model says fits in 16 GiB: the output names recompute as
// the whole difference. (With EFA at a fitted 25% of line rate the leader was a
// pipeline plan, ranked 311th of 1,740, trailing in DP communication.)
TEST(SearchCli, Seed002PublishedLayoutTrailsForANamedCause) {
  const Outcome r = run("search --instances 128 --seq-len 4096 --global-batch 1024 --precision bf16-sr --top 1 "
                        "--quiet --reference-tp 8 --reference-pp 1 --reference-sp");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("stack neuronx-distributed"), std::string::npos) << r.out;  // named as an assumption
  EXPECT_NE(r.out.find("TP 8 / PP 1 / SP / mb 1 / ZeRO 1 / none"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The reference trails mainly in backward compute (with recompute)"), std::string::npos) << r.out;
}

// `validate` ranks seed 002's published choice with the in-sample trn1 fit; its
// TP 8 / PP 1 / SP layout must be within 3% of the search's leader or name the cause (issue 11).
TEST(ValidateCli, JsonIsOneDocumentAndSeed002LayoutIsWithinThreePercentOrNamesTheCause) {
  const Outcome r = run("validate --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);  // one document, every table under its key
  const nlohmann::json choices = rows_of(j, "published_layouts");
  ASSERT_EQ(choices.size(), 1u) << r.out;
  EXPECT_GE(choices[0]["rank"].get<int>(), 1);  // the published plan itself fits and is ranked
  // Issue 37: ranked under the NxD runs' own fit (as search ranks it), the
  // authors' TP 8 / PP 1 / SP layout is the search's best layout; the leader
  // differs only in recompute (none, which the model says fits in 16 GiB), so
  // the published plan trails by the selective recompute alone (94.0% at this
  // commit). Within 3% of the leader, or that cause is named.
  EXPECT_NE(choices[0]["calibration_fitted_on"].get<std::string>().find("neuronx-distributed runs"), std::string::npos)
      << choices[0];
  EXPECT_GE(choices[0]["that_leader"].get<double>(), 0.97) << choices[0];
  if (choices[0]["published_leader"].get<double>() < 0.97)
    EXPECT_EQ(choices[0]["published_trails_mainly_in"].get<std::string>().rfind("backward compute (with recompute)", 0),
              0u)
        << choices[0];
}

// Among what seed 002's authors compared (TP / PP / SP / DP, with their
// selective recompute, micro-batch 1 and ZeRO-1 held as published), the search
// ranks their plan first: the post's claim, reproduced without fitting on it.
TEST(ValidateCli, Seed002IsFirstWhereItsAuthorsSearched) {
  const Outcome r = run("validate --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json choices = rows_of(nlohmann::json::parse(r.out), "published_layouts");
  ASSERT_EQ(choices.size(), 1u) << r.out;
  EXPECT_EQ(choices[0]["rank_where_the_source_searched"].get<int>(), 1) << choices[0];
  EXPECT_GT(choices[0]["of_feasible_there"].get<int>(), 100) << choices[0];  // TP, PP, SP, VP and overlap all free
}

namespace {

// An output path whose folder does not exist is refused before any work: one
// line naming the option, exit 2, no table printed first (issue 13).
TEST(SweepCli, MissingPlotFolderIsRefusedBeforeTheSweep) {
  const Outcome r = run("sweep --instances 1..4 --quiet --plot /no/such/dir/x.png");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("trainplan: --plot /no/such/dir/x.png: ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("Scaling of"), std::string::npos) << r.out;
}

// Sizes past trainplan's bounds are refused with the figures, in bounded time
// and memory, not an overflowed DP or an exhausted allocator.
TEST(EstimateCliBounds, HugeBatchAndClusterAreRefusedWithTheFigures) {
  Outcome r = run("estimate --global-batch 2000000000");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("exceed trainplan's bounds"), std::string::npos) << r.out;
  r = run("estimate --instances 2000000000 --tp 8");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("64000000000 devices"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("-589934592"), std::string::npos) << r.out;
  r = run("search --instances 1..100000000 --top 1 --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("bad_alloc"), std::string::npos) << r.out;
}

}  // namespace

namespace {

TEST(EstimateCliBounds, CountsOutsideOneToIntMaxAreRefusedInOurWords) {
  for (const char* bad : {"--instances 0", "--seq-len abc", "--instances 99999999999999999999", "--global-batch -4"}) {
    const Outcome r = run(std::string("estimate ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("expected a whole number from 1 to 2147483647"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("not in range"), std::string::npos) << r.out;  // CLI11's 309-digit range
  }
}

}  // namespace

namespace {

// The same search prints byte-identical output whatever the thread count and
// from run to run (issue 13, determinism).
TEST(SearchCli, OutputIsByteIdenticalAcrossThreadCountsAndRuns) {
  const std::string args = "search --instances 1..16 --top 5 --quiet --format csv --threads ";
  const Outcome one = run(args + "1");
  ASSERT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(run(args + "2").out, one.out);
  EXPECT_EQ(run(args + "3").out, one.out);
  EXPECT_EQ(run(args + "1").out, one.out);
}

}  // namespace

namespace {

bool prints_inf_or_nan(const std::string& text) {
  static const std::regex bad(R"((^|[^A-Za-z])(inf|Inf|INF|nan|NaN|NAN)([^A-Za-z]|$))");
  return std::regex_search(text, bad);
}

// Every figure a command prints is finite (issue 13): each command in text and
// JSON on its default scenario and on a GPU one.
TEST(AllCommands, PrintNoInfOrNan) {
  ASSERT_TRUE(prints_inf_or_nan("step 0.5 s, inf days"));
  ASSERT_FALSE(prints_inf_or_nan("infeasible plans; information"));
  for (const char* args :
       {"list", "estimate --instances 128 --tp 8 --sp", "estimate --instances 128 --tp 8 --sp --format json",
        "estimate --hardware p5.48xlarge --tp 8 --precision mixed-bf16",
        "search --instances 1..8 --top 3 --quiet", "sweep --instances 1..8 --quiet",
        "compare --hardware trn1.32xlarge,p5.48xlarge --instances 4 --at instances --quiet",
        "validate --hold-out source --format json",
        "export --to megatron --hardware p5.48xlarge --stack megatron-lm --instances 4 --tp 8 --sp --precision fp8",
        "calibrate check data/calibration/host-2026-epyc.json",
        "calibrate import --collectives tests/calib/fixtures/nccl_all_reduce_p5_8ranks.log --hardware p5.48xlarge "
        "--out /tmp/trainplan_finite_figures_calibration.json --format json"}) {
    const Outcome r = run(args);
    EXPECT_EQ(r.code, 0) << args << ": " << r.out;
    EXPECT_FALSE(prints_inf_or_nan(r.out)) << args << ": " << r.out;
  }
}

}  // namespace
