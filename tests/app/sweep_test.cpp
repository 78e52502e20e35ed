// A sweep runs one search per hardware and instance count through the caller's
// runner and reports, per point, the best plan, its scaling efficiency against
// the curve's first plan and the held-out range around its throughput.
#include <gtest/gtest.h>

#include "app/sweep.h"

namespace trainplan::app {
namespace {

TEST(Sweep, EfficiencyIsPerInstanceThroughputAgainstTheFirstPlan) {
  SearchQuery q;
  q.scenario.model = "llama2-7b";
  q.scenario.hardware = "trn1.32xlarge,p4d.24xlarge";
  q.threads = 1;
  std::vector<std::string> labels;
  const SweepResult r = run_sweep(q, {1, 4}, [&](const cost::Evaluator& e, const search::PlanSpace& space,
                                                 const search::Scorer& scorer, const search::SearchOptions& options,
                                                 const std::string& label) {
    labels.push_back(label);
    return search::run_search(e, space, scorer, options);
  });
  ASSERT_EQ(r.curves.size(), 2u);
  EXPECT_EQ(labels, (std::vector<std::string>{"sweep trn1.32xlarge x1", "sweep trn1.32xlarge x4",
                                              "sweep p4d.24xlarge x1", "sweep p4d.24xlarge x4"}));
  const SweepCurve& trn1 = r.curves.front();
  ASSERT_EQ(trn1.points.size(), 2u);
  ASSERT_TRUE(trn1.points[0].best && trn1.points[1].best);
  EXPECT_DOUBLE_EQ(trn1.points[0].scaling_efficiency, 1.0);
  const double per_instance_1 = trn1.points[0].best->dag_estimate.tokens_per_s;
  const double per_instance_4 = trn1.points[1].best->dag_estimate.tokens_per_s / 4;
  EXPECT_DOUBLE_EQ(trn1.points[1].scaling_efficiency, per_instance_4 / per_instance_1);
  EXPECT_EQ(trn1.points[1].devices, 4 * 32);
  ASSERT_TRUE(r.bands);  // the shipped data/error-bands.json
  ASSERT_TRUE(trn1.points[1].measured);
  const double predicted = trn1.points[1].best->dag_estimate.tokens_per_s;
  EXPECT_LT(trn1.points[1].measured->low, trn1.points[1].measured->high);
  // The range is where runs measured: p / (1 + high) to p / (1 + low), around p when the band holds 0.
  const spec::ErrorBand band = cost::throughput_band(*r.bands, "trainium1").band;
  EXPECT_DOUBLE_EQ(trn1.points[1].measured->low, predicted / (1 + band.high));
  EXPECT_GE(r.drops.considered, trn1.drops.considered);
  EXPECT_EQ(r.drops.considered, trn1.drops.considered + r.curves.back().drops.considered);
}

}  // namespace
}  // namespace trainplan::app
