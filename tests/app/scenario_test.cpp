// A scenario from options: what the user leaves out comes from the model, the
// hardware and the stack, and each default is said as an assumption.
#include <gtest/gtest.h>

#include <algorithm>

#include "app/scenario.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::app {
namespace {

bool says(const Scenario& s, const std::string& part) {
  return std::any_of(s.assumptions.begin(), s.assumptions.end(),
                     [&](const std::string& a) { return a.find(part) != std::string::npos; });
}

TEST(Scenario, DefaultsComeFromTheModelHardwareAndStackAndAreSaid) {
  ScenarioOptions o;
  o.model = "bert-large";
  const Scenario s = load_scenario(o, "trn1.32xlarge");
  EXPECT_EQ(s.workload.seq_len, 512);  // BERT's positions, short of the 4096 default
  EXPECT_TRUE(says(s, "sequence length 512"));
  EXPECT_EQ(s.stack.name, s.hardware.default_stack);
  EXPECT_TRUE(says(s, "trn1.32xlarge's default; "));
  EXPECT_TRUE(says(s, "--stack names another"));
  EXPECT_EQ(s.workload.precision, s.stack.capabilities.default_precision);
  EXPECT_TRUE(says(s, "precision "));
  EXPECT_DOUBLE_EQ(s.workload.tokens_to_train, 20.0 * double(s.model.total_parameters()));
}

TEST(Scenario, NamedChoicesAreNotAssumptions) {
  ScenarioOptions o;
  o.model = "llama2-7b";
  o.stack = "megatron-lm";
  o.precision = "fp8";
  o.seq_len = 2048;
  const Scenario s = load_scenario(o, "p5.48xlarge");
  EXPECT_EQ(s.stack.name, "megatron-lm");
  EXPECT_EQ(s.workload.precision, spec::Precision::fp8);
  EXPECT_EQ(s.workload.seq_len, 2048);
  EXPECT_FALSE(says(s, "'s default; "));
  EXPECT_FALSE(says(s, "precision fp8"));
}

// A default stack on a release line prices one generation of it: the
// assumption names each release range of the line with its stack, so a user
// on a later SDK sees that `--stack LINE@RELEASE` prices theirs. A default on
// no line (dl1's deepspeed-habana) says only that --stack names another.
TEST(Scenario, DefaultStackOnAReleaseLineNamesTheLinesOtherReleases) {
  ScenarioOptions o;
  o.model = "llama2-7b";
  const Scenario trn1 = load_scenario(o, "trn1.32xlarge");
  ASSERT_FALSE(trn1.stack.releases.line.empty());
  const std::vector<spec::Stack> line = spec::stacks_of_line(trn1.stack.releases.line);
  ASSERT_GE(line.size(), 2u);
  for (const spec::Stack& release : line)
    EXPECT_TRUE(says(trn1, release.releases.from + "-" + release.releases.to + " (" + release.name + ")")) << release.name;
  EXPECT_TRUE(says(trn1, "--stack " + trn1.stack.releases.line + "@RELEASE prices the one you run"));

  o.model = "bert-large";
  const Scenario dl1 = load_scenario(o, "dl1.24xlarge");
  ASSERT_TRUE(dl1.stack.releases.line.empty());
  EXPECT_TRUE(says(dl1, "dl1.24xlarge's default; --stack names another"));
  EXPECT_TRUE(spec::stacks_of_line("").empty());
  EXPECT_TRUE(spec::stacks_of_line("no-such-line").empty());
}

// A stack that hides part of the EP all-to-all says by how much, as an
// assumption carried from another layout; a MoE model under a stack without
// the overlap is not told of it.
TEST(Scenario, EpOverlapShareIsSaid) {
  ScenarioOptions o;
  o.model = "mixtral-8x7b";
  o.stack = "nemo-alltoall-ep-overlap";
  EXPECT_TRUE(says(load_scenario(o, "dgx-h100"), "hides 36.55% of each paired pass's EP all-to-all"));
  o.stack = "nemo-alltoall";
  EXPECT_FALSE(says(load_scenario(o, "dgx-h100"), "EP all-to-all behind"));
}

TEST(Scenario, OptionsOutsideTheirRangeAreRefusedNamingTheFlag) {
  ScenarioOptions o;
  o.expert_imbalance = 0.5;
  try {
    load_scenario(o, "trn1.32xlarge");
    FAIL() << "accepted an imbalance below 1";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("--expert-imbalance"), std::string::npos) << e.what();
  }
}

// Selective where the stack offers it; otherwise none, said (dl1's DeepSpeed
// stack offers none and full only).
TEST(Scenario, PlanRecomputeDefaultsFromTheStack) {
  std::vector<std::string> assumptions;
  const spec::Stack nxd = load_scenario(ScenarioOptions{}, "trn1.32xlarge").stack;
  EXPECT_EQ(to_plan(PlanOptions{}, nxd, &assumptions).recompute, spec::Recompute::selective);
  EXPECT_TRUE(assumptions.empty());
  const spec::Stack habana = load_scenario(ScenarioOptions{}, "dl1.24xlarge").stack;
  ASSERT_FALSE(habana.offers_recompute(spec::Recompute::selective));
  EXPECT_EQ(to_plan(PlanOptions{}, habana, &assumptions).recompute, spec::Recompute::none);
  ASSERT_EQ(assumptions.size(), 1u);
  EXPECT_NE(assumptions[0].find("offers no selective recompute"), std::string::npos);
  PlanOptions named;
  named.recompute = "full";
  EXPECT_EQ(to_plan(named, habana, nullptr).recompute, spec::Recompute::full);
}

// SP where the stack's client runs it at TP > 1 by default (NxD's run_llama_nxd.py:470
// --use_sequence_parallel default=1; torchtitan's TP plan always shards the norms),
// said; off in Megatron-LM, whose --sequence-parallel is opt-in; --sp and --no-sp win.
TEST(Scenario, PlanSequenceParallelDefaultsFromTheStack) {
  const spec::Stack nxd = load_scenario(ScenarioOptions{}, "trn1.32xlarge").stack;
  ASSERT_TRUE(nxd.capabilities.sequence_parallel_default);
  PlanOptions tp8;
  tp8.tp = 8;
  std::vector<std::string> assumptions;
  EXPECT_TRUE(to_plan(tp8, nxd, &assumptions).sp);
  ASSERT_EQ(assumptions.size(), 1u);
  EXPECT_EQ(assumptions[0].rfind("SP on: stack neuronx-distributed's client", 0), 0u) << assumptions[0];
  EXPECT_FALSE(to_plan(PlanOptions{}, nxd, nullptr).sp);  // TP 1: nothing to split
  PlanOptions off = tp8;
  off.no_sp = true;
  assumptions.clear();
  EXPECT_FALSE(to_plan(off, nxd, &assumptions).sp);
  EXPECT_TRUE(assumptions.empty());
  EXPECT_TRUE(spec::load_stack("torchtitan").capabilities.sequence_parallel_default);
  const spec::Stack megatron = spec::load_stack("megatron-lm");
  EXPECT_FALSE(megatron.capabilities.sequence_parallel_default);
  EXPECT_FALSE(to_plan(tp8, megatron, nullptr).sp);
  PlanOptions on = tp8;
  on.sp = true;
  EXPECT_TRUE(to_plan(on, megatron, nullptr).sp);
}

}  // namespace
}  // namespace trainplan::app
