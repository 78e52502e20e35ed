#include "search/ranker.h"

#include <gtest/gtest.h>

#include "search/pareto.h"
#include "spec/load.h"

namespace trainplan::search {
namespace {

struct Fixture {
  spec::ModelSpec model = spec::load_model("llama2-7b");
  spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  spec::Calibration cal;
  spec::Stack stack;  // generic: every ZeRO stage below 2, schedule and recompute mode
  spec::Workload w{4096, 256, 1e11, spec::Precision::bf16_sr};
  cost::Evaluator evaluator{model, hw, stack, cal, w};
  PlanSpace space{model, hw, stack, w, [] { SpaceConstraints c; c.instances = {1, 2, 8}; return c; }()};
  Scorer scorer{evaluator, space.instance_counts(), 21.5, Objective::tokens_per_dollar, cost::FailureSettings{}};
};

SearchOptions options(int top_k, int threads) {
  SearchOptions o;
  o.top_k = top_k;
  o.threads = threads;
  return o;
}

TEST(Ranker, SameResultForAnyThreadCount) {
  Fixture f;
  SearchOptions o = options(7, 1);
  const SearchResult one = run_search(f.evaluator, f.space, f.scorer, o);
  for (int threads : {2, 3, 8}) {
    o.threads = threads;
    const SearchResult many = run_search(f.evaluator, f.space, f.scorer, o);
    ASSERT_EQ(many.top.size(), one.top.size());
    for (std::size_t i = 0; i < one.top.size(); ++i) EXPECT_EQ(many.top[i].index, one.top[i].index) << threads;
    EXPECT_EQ(many.drops.considered, one.drops.considered);
    EXPECT_EQ(many.drops.feasible, one.drops.feasible);
    EXPECT_EQ(many.drops.by_problem, one.drops.by_problem);
  }
}

TEST(Ranker, TopMatchesBruteForceAndHoldsOnlyFeasiblePlans) {
  Fixture f;
  SearchOptions o = options(5, 2);
  o.reference = [] { spec::Plan p; p.instances = 2; p.tp = 8; p.sp = true; p.zero = 1; p.recompute = spec::Recompute::selective; return p; }();
  const SearchResult r = run_search(f.evaluator, f.space, f.scorer, o);
  double best = -1;
  std::int64_t feasible = 0, oom = 0, better_than_reference = 0;
  for (std::uint64_t i = 0; i < f.space.size(); ++i) {
    const cost::Evaluation ev = f.evaluator.evaluate(f.space.at(i));
    if (ev.problem == cost::PlanProblem::out_of_memory) ++oom;
    if (!ev.ok()) continue;
    ++feasible;
    const double v = f.scorer.score(ev.estimate, ev.plan.instances).value;
    best = std::max(best, v);
    if (v > r.reference_score->value) ++better_than_reference;
  }
  EXPECT_EQ(r.drops.considered, std::int64_t(f.space.size()));
  EXPECT_EQ(r.drops.feasible, feasible);
  EXPECT_EQ(r.drops.by_problem[std::size_t(cost::PlanProblem::out_of_memory)], oom);
  EXPECT_GT(oom, 0);  // the space does hold plans that do not fit, and they are dropped
  ASSERT_EQ(r.top.size(), 5u);
  double best_closed_form = -1;
  for (const auto& p : r.top) {
    EXPECT_TRUE(p.evaluation.ok());
    EXPECT_TRUE(p.evaluation.estimate.memory.fits);
    best_closed_form = std::max(best_closed_form, p.score.value);
  }
  EXPECT_EQ(best_closed_form, best);
  EXPECT_EQ(r.reference_rank, better_than_reference + 1);
}

// A memory band whose upper end is twice the prediction (error -50%): every
// plan over half the HBM is dropped as marginal, and only those.
TEST(Ranker, MemoryBandDropsPlansThatFitOnlyAsPredicted) {
  Fixture f;
  SearchOptions o = options(5, 2);
  const SearchResult plain = run_search(f.evaluator, f.space, f.scorer, o);
  o.memory_band = spec::ErrorBand{10, -0.5, 0.0, 0.1};
  const SearchResult strict = run_search(f.evaluator, f.space, f.scorer, o);
  std::int64_t over_half = 0;
  for (std::uint64_t i = 0; i < f.space.size(); ++i) {
    const cost::Evaluation ev = f.evaluator.evaluate(f.space.at(i));
    if (ev.ok() && 2 * ev.estimate.memory.total_bytes > ev.estimate.memory.capacity_bytes) ++over_half;
  }
  EXPECT_GT(over_half, 0);
  EXPECT_EQ(strict.drops.marginal_memory, over_half);
  EXPECT_EQ(strict.drops.feasible, plain.drops.feasible - over_half);
  EXPECT_EQ(plain.drops.marginal_memory, 0);
  for (const auto& p : strict.top)
    EXPECT_LE(2 * p.evaluation.estimate.memory.total_bytes, p.evaluation.estimate.memory.capacity_bytes);
}

// A refusal (what --emit's launcher cannot run) drops exactly the feasible
// plans it names, from the top and from the count, and none of the others.
TEST(Ranker, RefusalDropsThePlansItNamesAndCountsThem) {
  Fixture f;
  SearchOptions o = options(5, 2);
  const SearchResult plain = run_search(f.evaluator, f.space, f.scorer, o);
  ASSERT_FALSE(plain.top.empty());
  o.refusal = [](const spec::Plan& p) { return p.tp > 4 ? std::string("TP over 4") : std::string(); };
  const SearchResult limited = run_search(f.evaluator, f.space, f.scorer, o);
  std::int64_t refused = 0;
  for (std::uint64_t i = 0; i < f.space.size(); ++i) {
    const cost::Evaluation ev = f.evaluator.evaluate(f.space.at(i));
    if (ev.ok() && ev.plan.tp > 4) ++refused;
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(limited.drops.not_launchable, refused);
  EXPECT_EQ(limited.drops.feasible, plain.drops.feasible - refused);
  ASSERT_FALSE(limited.top.empty());
  for (const auto& p : limited.top) EXPECT_LE(p.evaluation.plan.tp, 4);
}

TEST(Ranker, BudgetDropsPlansThatCostTooMuch) {
  Fixture f;
  const Scorer tight(f.evaluator, f.space.instance_counts(), 21.5, Objective::throughput, cost::FailureSettings{}, 1.0);
  SearchOptions o;
  o.threads = 2;
  const SearchResult r = run_search(f.evaluator, f.space, tight, o);
  EXPECT_EQ(r.drops.feasible, 0);
  EXPECT_GT(r.drops.over_budget, 0);
  EXPECT_TRUE(r.top.empty());
}

TEST(Pareto, KeepsPointsNoOtherBeatsOnBoth) {
  // (1,10) (2,5) (3,6) (4,1): (3,6) is beaten by (2,5).
  const auto front = pareto_front({3, 1, 4, 2}, {6, 10, 1, 5});
  EXPECT_EQ(front, (std::vector<std::size_t>{1, 3, 2}));
}

}  // namespace
}  // namespace trainplan::search

namespace trainplan::search {
namespace {

// The reliability table holds one entry per instance count, not per integer up
// to the largest: a range to 10^8 instances costs 28 entries, not 10^8.
TEST(Scorer, SparseInstanceCountsNeedNoDenseTable) {
  Fixture f;
  const std::vector<int> counts{1, 1 << 20, 100000000};
  const Scorer scorer(f.evaluator, counts, 21.5, Objective::throughput, cost::FailureSettings{});
  EXPECT_GT(scorer.reliability(1).utilisation, scorer.reliability(100000000).utilisation);
  EXPECT_GT(scorer.reliability(1 << 20).cluster_mtbf_s, scorer.reliability(100000000).cluster_mtbf_s);
}

}  // namespace
}  // namespace trainplan::search

namespace trainplan::search {
namespace {

// Llama 3 8B at 8192 tokens on one DGX H100, TP 1 / PP 1 / ZeRO 1 / micro-batch
// 1 (BF16, the generic stack): without recompute it does not fit, full
// recompute of every layer does; where the stack runs the block method the
// search takes the fewest first layers that fit, and one fewer does not.
struct BlockFixture {
  spec::ModelSpec model = spec::load_model("llama3-8b");
  spec::HardwareSpec hw = spec::load_hardware("dgx-h100");
  spec::Calibration cal;
  spec::Stack stack = [] {
    spec::Stack s;
    s.capabilities.block_recompute = true;
    return s;
  }();
  spec::Workload w{8192, 128, 1e11, spec::Precision::mixed_bf16};
  cost::Evaluator evaluator{model, hw, stack, cal, w};
  SpaceConstraints constraints = [] {
    SpaceConstraints c;
    c.tp = 1, c.pp = 1, c.cp = 1, c.zero = 1, c.micro_batch = 1;
    return c;
  }();
};

TEST(Ranker, FullRecomputeTakesTheFewestLayersThatFit) {
  BlockFixture f;
  spec::Plan p;
  p.zero = 1;
  ASSERT_EQ(f.evaluator.evaluate(p).problem, cost::PlanProblem::out_of_memory);  // no recompute: short of HBM
  p.recompute = spec::Recompute::full;
  ASSERT_TRUE(f.evaluator.evaluate(p).ok());
  const PlanSpace space{f.model, f.hw, f.stack, f.w, f.constraints};
  ASSERT_TRUE(space.tries_block_recompute());
  const Scorer scorer{f.evaluator, space.instance_counts(), 98.3, Objective::throughput, cost::FailureSettings{}};
  const SearchResult r = run_search(f.evaluator, space, scorer, options(3, 1));
  ASSERT_FALSE(r.top.empty());
  const cost::Evaluation& best = r.top.front().evaluation;
  ASSERT_EQ(best.plan.recompute, spec::Recompute::full);
  const int layers = best.plan.recompute_layers;
  ASSERT_GT(layers, 0);
  ASSERT_LT(layers, 32);
  spec::Plan fewer = best.plan;
  fewer.recompute_layers = layers - 1;
  if (layers > 1) EXPECT_EQ(f.evaluator.evaluate(fewer).problem, cost::PlanProblem::out_of_memory);
  EXPECT_GT(best.estimate.seqs_per_s, f.evaluator.evaluate(p).estimate.seqs_per_s);  // faster than every layer
  // Without the block method the same space keeps every layer recomputed.
  BlockFixture g;
  g.stack.capabilities.block_recompute = false;
  const cost::Evaluator plain{g.model, g.hw, g.stack, g.cal, g.w};
  const PlanSpace no_block{g.model, g.hw, g.stack, g.w, g.constraints};
  const SearchResult q = run_search(plain, no_block, scorer, options(3, 1));
  for (const RankedPlan& rp : q.top) EXPECT_EQ(rp.evaluation.plan.recompute_layers, 0);
}

}  // namespace
}  // namespace trainplan::search
